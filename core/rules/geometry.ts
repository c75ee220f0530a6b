/**
 * Zones as geometry (docs/contract.md "Alert rules and zones"): checking a zone before it is stored, and
 * compiling a stored one into a `contains(lat, lon)` test the rule engine calls for every position.
 * Pure: no database, no clock.
 *
 * Coordinates are degrees on WGS 84. A circle is a true circle on the sphere (haversine distance),
 * so one around a point near ±180° longitude works. A polygon is read in the plane of longitude and
 * latitude: a ring that crosses the antimeridian is not supported (it would be read as going the
 * long way round the globe), nor is one around a pole; split such a zone in two.
 */
import type { Zone, ZoneType } from '../model/zone.js';

export const EARTH_RADIUS_M = 6_371_008.8;
export const MIN_RADIUS_M = 1;
export const MAX_RADIUS_M = 1_000_000;
/** a triangle, closed: its first point again at the end */
export const MIN_POLYGON_POINTS = 4;
export const MAX_POLYGON_POINTS = 10_000;

/** What a zone's geometry is made of, as the API takes it (absent and null alike mean "none"). */
export interface ZoneGeometryInput {
  type: ZoneType | string;
  center?: { latitude: number; longitude: number } | null;
  radius?: number | null;
  polygon?: number[][] | null;
}

/** What is wrong, with the field named as the API answers it (`polygon[3]`, `center.latitude`). */
export interface ZoneProblem {
  field: string;
  message: string;
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const latOk = (v: unknown): boolean => isNum(v) && v >= -90 && v <= 90;
const lonOk = (v: unknown): boolean => isNum(v) && v >= -180 && v <= 180;

/** The first problem of a zone's geometry, or null when it can be stored. */
export function validateZone(input: ZoneGeometryInput): ZoneProblem | null {
  if (input.type === 'circle') {
    if (input.polygon != null)
      return { field: 'polygon', message: 'a circle has no polygon; leave it out (or make the zone a polygon)' };
    if (input.center == null) return { field: 'center', message: 'a circle needs its center {latitude, longitude}' };
    if (!latOk(input.center.latitude)) return { field: 'center.latitude', message: 'must be a number from -90 to 90' };
    if (!lonOk(input.center.longitude))
      return { field: 'center.longitude', message: 'must be a number from -180 to 180' };
    if (input.radius == null) return { field: 'radius', message: 'a circle needs its radius in metres' };
    if (!isNum(input.radius) || input.radius < MIN_RADIUS_M || input.radius > MAX_RADIUS_M) {
      return {
        field: 'radius',
        message: `must be from ${MIN_RADIUS_M} to ${MAX_RADIUS_M.toLocaleString('en')} metres`,
      };
    }
    return null;
  }
  if (input.type === 'polygon') {
    if (input.center != null)
      return { field: 'center', message: 'a polygon has no center; leave it out (or make the zone a circle)' };
    if (input.radius != null)
      return { field: 'radius', message: 'a polygon has no radius; leave it out (or make the zone a circle)' };
    if (input.polygon == null)
      return { field: 'polygon', message: 'a polygon needs its ring of [longitude, latitude] points' };
    return validateRing(input.polygon);
  }
  return { field: 'type', message: 'must be "circle" or "polygon"' };
}

function validateRing(ring: number[][]): ZoneProblem | null {
  if (!Array.isArray(ring)) return { field: 'polygon', message: 'must be an array of [longitude, latitude] points' };
  if (ring.length < MIN_POLYGON_POINTS) {
    return {
      field: 'polygon',
      message: `needs at least ${MIN_POLYGON_POINTS} points (a triangle, closed by repeating its first point at the end); it has ${ring.length}`,
    };
  }
  if (ring.length > MAX_POLYGON_POINTS)
    return {
      field: 'polygon',
      message: `has ${ring.length} points; at most ${MAX_POLYGON_POINTS.toLocaleString('en')} are allowed`,
    };
  for (let i = 0; i < ring.length; i++) {
    const p = ring[i];
    if (!Array.isArray(p) || p.length !== 2)
      return { field: `polygon[${i}]`, message: 'must be a [longitude, latitude] pair' };
    if (!lonOk(p[0])) return { field: `polygon[${i}][0]`, message: 'the longitude must be a number from -180 to 180' };
    if (!latOk(p[1])) return { field: `polygon[${i}][1]`, message: 'the latitude must be a number from -90 to 90' };
  }
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (first[0] !== last[0] || first[1] !== last[1]) {
    return {
      field: 'polygon',
      message: `the ring is not closed: its last point [${last.join(', ')}] must repeat its first point [${first.join(', ')}]`,
    };
  }
  for (let i = 1; i < ring.length; i++) {
    if (ring[i][0] === ring[i - 1][0] && ring[i][1] === ring[i - 1][1]) {
      return { field: `polygon[${i}]`, message: 'repeats the point before it; remove one of them' };
    }
  }
  const crossing = findSelfIntersection(ring);
  if (crossing) {
    const [a, b] = crossing;
    return {
      field: 'polygon',
      message: `the ring crosses itself: its edge from point ${a} to ${a + 1} meets the edge from point ${b} to ${b + 1}`,
    };
  }
  let twiceArea = 0;
  for (let i = 0; i < ring.length - 1; i++) twiceArea += ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1];
  if (twiceArea === 0) return { field: 'polygon', message: 'the ring encloses no area (its points lie on one line)' };
  return null;
}

/** -1, 0 or 1: the turn from a to b to c (0: on one line). */
function orient(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): number {
  const v = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
  return v > 0 ? 1 : v < 0 ? -1 : 0;
}

/** c, already on the line through a and b, lies within the segment ab (ends included). */
const within = (ax: number, ay: number, bx: number, by: number, cx: number, cy: number): boolean =>
  Math.min(ax, bx) <= cx && cx <= Math.max(ax, bx) && Math.min(ay, by) <= cy && cy <= Math.max(ay, by);

function segmentsMeet(
  ax: number,
  ay: number,
  bx: number,
  by: number,
  cx: number,
  cy: number,
  dx: number,
  dy: number,
): boolean {
  const o1 = orient(ax, ay, bx, by, cx, cy);
  const o2 = orient(ax, ay, bx, by, dx, dy);
  const o3 = orient(cx, cy, dx, dy, ax, ay);
  const o4 = orient(cx, cy, dx, dy, bx, by);
  if (o1 !== o2 && o3 !== o4) return true;
  return (
    (o1 === 0 && within(ax, ay, bx, by, cx, cy)) ||
    (o2 === 0 && within(ax, ay, bx, by, dx, dy)) ||
    (o3 === 0 && within(cx, cy, dx, dy, ax, ay)) ||
    (o4 === 0 && within(cx, cy, dx, dy, bx, by))
  );
}

/**
 * The first two edges of a closed ring that meet (by their start indexes, the lower first), or
 * null. Edges that follow each other share their common point and meet nowhere else unless one
 * folds back along the other; any other two edges may not even touch.
 *
 * O(n log n) whatever the shape (Shamos–Hoey): neighbours are checked in O(n); the ends of the
 * edges are sorted by longitude (then latitude), which finds a point the ring passes twice; then a
 * sweep in that order keeps the edges under the sweep line ordered by latitude and compares each
 * edge only with its neighbours in that order, when it comes in and when one between them leaves.
 */
export function findSelfIntersection(ring: number[][]): [number, number] | null {
  const n = ring.length - 1;
  const folded = foldBack(ring, n);
  if (folded) return folded;
  const edges = sweepEdges(ring, n);
  return repeatedPoint(edges, n) ?? sweep(edges, n);
}

/** Whether edges lo < hi are neighbours on the ring. */
const neighbours = (lo: number, hi: number, n: number): boolean => hi === lo + 1 || (lo === 0 && hi === n - 1);

/** Two neighbouring edges where one folds back along the other. */
function foldBack(ring: number[][], n: number): [number, number] | null {
  for (let lo = 0; lo < n - 1; lo++) if (folds(ring[lo + 1], ring[lo], ring[lo + 2])) return [lo, lo + 1];
  return folds(ring[0], ring[1], ring[n - 1]) ? [0, n - 1] : null;
}

/** The edges from s to u and from s to v overlap: u, s and v on one line, u and v on the same side of s. */
function folds(s: number[], u: number[], v: number[]): boolean {
  const [sx, sy] = s;
  return orient(u[0], u[1], sx, sy, v[0], v[1]) === 0 && (u[0] - sx) * (v[0] - sx) + (u[1] - sy) * (v[1] - sy) > 0;
}

/**
 * Each edge from its west end (lesser longitude, then latitude) to its east end, and the events of
 * the sweep in its order: event 2i is edge i leaving (at its east end), 2i + 1 it coming in (at its
 * west end); at one point, leaving first.
 */
interface SweepEdges {
  wx: Float64Array;
  wy: Float64Array;
  ex: Float64Array;
  ey: Float64Array;
  events: Int32Array;
  /** where each event is */
  px: Float64Array;
  py: Float64Array;
}

function sweepEdges(ring: number[][], n: number): SweepEdges {
  const [wx, wy, ex, ey] = [new Float64Array(n), new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  for (let i = 0; i < n; i++) {
    const a = ring[i];
    const b = ring[i + 1];
    const [w, e] = a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]) ? [a, b] : [b, a];
    wx[i] = w[0];
    wy[i] = w[1];
    ex[i] = e[0];
    ey[i] = e[1];
  }
  const events = new Int32Array(2 * n);
  const px = new Float64Array(2 * n);
  const py = new Float64Array(2 * n);
  for (let k = 0; k < 2 * n; k++) {
    events[k] = k;
    px[k] = k & 1 ? wx[k >> 1] : ex[k >> 1];
    py[k] = k & 1 ? wy[k >> 1] : ey[k >> 1];
  }
  events.sort((a, b) => px[a] - px[b] || py[a] - py[b] || (a & 1) - (b & 1));
  return { wx, wy, ex, ey, events, px, py };
}

/**
 * A point the ring passes twice: more than two edge ends there (each point is the end of two). Two
 * of those edges that are not neighbours touch there.
 */
function repeatedPoint({ events, px, py }: SweepEdges, n: number): [number, number] | null {
  for (let k = 2; k < events.length; k++) {
    const [a, c] = [events[k - 2], events[k]];
    if (px[a] !== px[c] || py[a] !== py[c]) continue;
    const at = [events[k - 2] >> 1, events[k - 1] >> 1, events[k] >> 1];
    for (let x = 0; x < 3; x++) {
      for (let y = x + 1; y < 3; y++) {
        const [lo, hi] = at[x] < at[y] ? [at[x], at[y]] : [at[y], at[x]];
        if (lo !== hi && !neighbours(lo, hi, n)) return [lo, hi];
      }
    }
  }
  return null;
}

/**
 * The sweep, once no point repeats and no neighbours fold back: two edges under the sweep line then
 * meet only where neighbours share their point, so their order by latitude holds until the first
 * place where two others meet, and those two are next to each other in it before the sweep passes
 * that place (or one comes in there, next to the other).
 */
function sweep({ wx, wy, ex, ey, events }: SweepEdges, n: number): [number, number] | null {
  // edge s, coming in, lies above edge t (under the sweep line): its west end, or if that is on t's line, its east end
  const above = (s: number, t: number): boolean => {
    const o = orient(wx[t], wy[t], ex[t], ey[t], wx[s], wy[s]);
    return (o === 0 ? orient(wx[t], wy[t], ex[t], ey[t], ex[s], ey[s]) : o) > 0;
  };
  const meet = (i: number, j: number): [number, number] | null => {
    const lo = Math.min(i, j);
    const hi = Math.max(i, j);
    if (i < 0 || j < 0 || neighbours(lo, hi, n)) return null;
    return segmentsMeet(wx[lo], wy[lo], ex[lo], ey[lo], wx[hi], wy[hi], ex[hi], ey[hi]) ? [lo, hi] : null;
  };
  const status = orderedEdges(n, above);
  for (const k of events) {
    const edge = k >> 1;
    let found: [number, number] | null;
    if (k & 1) {
      status.insert(edge);
      found = meet(status.below, edge) ?? meet(edge, status.over);
    } else {
      status.remove(edge);
      found = meet(status.below, status.over);
    }
    if (found) return found;
  }
  return null;
}

/**
 * The edges under the sweep line, south to north: a skip list over edge numbers 0..n-1 (expected
 * O(log n) a step; its levels are random, drawn afresh for each ring, so no ring can be made to
 * unbalance it, and they change nothing but the speed). `above(s, t)` places an edge coming in;
 * one leaves by its number. Both leave the edge's neighbours in `below` and `over` (-1: none).
 */
function orderedEdges(n: number, above: (s: number, t: number) => boolean) {
  const LEVELS = 20;
  const head = n;
  const next = new Int32Array((n + 1) * LEVELS).fill(-1);
  const prev = new Int32Array((n + 1) * LEVELS).fill(-1);
  const height = new Uint8Array(n + 1);
  const update = new Int32Array(LEVELS);
  let top = 1;
  let seed = (Math.random() * 0x7fffffff) | 1;
  const status = {
    below: -1,
    over: -1,
    insert(s: number): void {
      // xorshift: one more level with probability 1/2 each
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      let h = 1;
      while (h < LEVELS && (seed >>> (h - 1)) & 1) h++;
      height[s] = h;
      if (h > top) top = h;
      let x = head;
      for (let l = top - 1; l >= 0; l--) {
        for (let y = next[x * LEVELS + l]; y !== -1 && above(s, y); y = next[x * LEVELS + l]) x = y;
        update[l] = x;
      }
      for (let l = 0; l < h; l++) {
        const p = update[l];
        const q = next[p * LEVELS + l];
        next[s * LEVELS + l] = q;
        prev[s * LEVELS + l] = p;
        next[p * LEVELS + l] = s;
        if (q !== -1) prev[q * LEVELS + l] = s;
      }
      neighboursOf(s);
    },
    remove(s: number): void {
      for (let l = 0; l < height[s]; l++) {
        const p = prev[s * LEVELS + l];
        const q = next[s * LEVELS + l];
        next[p * LEVELS + l] = q;
        if (q !== -1) prev[q * LEVELS + l] = p;
      }
      neighboursOf(s);
    },
  };
  const neighboursOf = (s: number): void => {
    const below = prev[s * LEVELS];
    status.below = below === head ? -1 : below;
    status.over = next[s * LEVELS];
  };
  return status;
}

/** A zone ready for the hot path: `contains` allocates nothing. */
export interface CompiledZone {
  id: string;
  type: ZoneType;
  /** whether the point is in the zone; points on the boundary are in */
  contains(latitude: number, longitude: number): boolean;
}

const RAD = Math.PI / 180;

/** The great-circle distance in metres (haversine). */
export function distanceM(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const s1 = Math.sin(((lat2 - lat1) * RAD) / 2);
  const s2 = Math.sin(((lon2 - lon1) * RAD) / 2);
  const h = s1 * s1 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * s2 * s2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** A stored zone (already validated) as a fast `contains` test. */
export function compileZone(zone: Pick<Zone, 'id' | 'type' | 'center' | 'radius' | 'polygon'>): CompiledZone {
  if (zone.type === 'circle') return compileCircle(zone.id, zone.center!, zone.radius!);
  return compilePolygon(zone.id, zone.polygon!);
}

function compileCircle(id: string, center: { latitude: number; longitude: number }, radius: number): CompiledZone {
  const lat0 = center.latitude * RAD;
  const lon0 = center.longitude * RAD;
  const cosLat0 = Math.cos(lat0);
  // Inside iff the haversine term h ≤ sin²(d / 2R): no asin or sqrt per point.
  const half = Math.sin(Math.min(Math.PI, radius / EARTH_RADIUS_M) / 2);
  const limit = half * half;
  // No point farther in latitude than the radius can be inside: skips the trigonometry for most points.
  const latSpan = radius / EARTH_RADIUS_M;
  return {
    id,
    type: 'circle',
    contains(latitude: number, longitude: number): boolean {
      const lat = latitude * RAD;
      const dLat = lat - lat0;
      if (dLat > latSpan || -dLat > latSpan) return false;
      const s1 = Math.sin(dLat / 2);
      const s2 = Math.sin((longitude * RAD - lon0) / 2);
      return s1 * s1 + cosLat0 * Math.cos(lat) * s2 * s2 <= limit;
    },
  };
}

/**
 * A polygon's `contains`: ray casting over only the edges of the point's latitude band (see
 * `latitudeBands`), so a point costs a few edges of a real zone, not all of them. The last answer
 * is kept: the engine asks about one position for each of a device's rules in turn, and a hundred
 * rules on one zone then cost one test, not a hundred.
 */
function compilePolygon(id: string, ring: [number, number][]): CompiledZone {
  const n = ring.length - 1; // the last point repeats the first
  const xs = new Float64Array(n + 1);
  const ys = new Float64Array(n + 1);
  for (let i = 0; i <= n; i++) {
    xs[i] = ring[i][0];
    ys[i] = ring[i][1];
  }
  // The longitude where edge i meets a given latitude is xs[i] + (lat - ys[i]) * slope[i].
  const slope = new Float64Array(n);
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    slope[i] = ys[i + 1] === ys[i] ? 0 : (xs[i + 1] - xs[i]) / (ys[i + 1] - ys[i]);
    if (xs[i] < minX) minX = xs[i];
    if (xs[i] > maxX) maxX = xs[i];
    if (ys[i] < minY) minY = ys[i];
    if (ys[i] > maxY) maxY = ys[i];
  }
  const bands = latitudeBands(ys, n, minY, maxY);
  const { start, edges } = bands;
  let lastLat = NaN;
  let lastLon = NaN;
  let last = false;
  const test = (y: number, x: number): boolean => {
    if (x < minX || x > maxX || y < minY || y > maxY) return false;
    // Ray casting towards the east, half-open in latitude so that a vertex is counted once; an
    // edge outside the band cannot reach the point's latitude, so it could not count.
    const b = bands.of(y);
    let inside = false;
    for (let k = start[b]; k < start[b + 1]; k++) {
      const i = edges[k];
      const yi = ys[i];
      const yj = ys[i + 1];
      if (yi > y !== yj > y) {
        const cross = xs[i] + (y - yi) * slope[i];
        if (x === cross) return true;
        if (x < cross) inside = !inside;
      } else if (yi === y && (xs[i] === x || (yj === y && (xs[i] - x) * (xs[i + 1] - x) <= 0))) {
        // on a vertex, or on an edge along this latitude
        return true;
      }
    }
    return inside;
  };
  return {
    id,
    type: 'polygon',
    contains(latitude: number, longitude: number): boolean {
      if (latitude !== lastLat || longitude !== lastLon) {
        last = test(latitude, longitude);
        lastLat = latitude;
        lastLon = longitude;
      }
      return last;
    },
  };
}

/**
 * The polygon's latitudes cut into bands, each listing (in ring order) every edge whose latitudes
 * reach into it: `edges[start[b]] .. edges[start[b + 1] - 1]` for band `of(y)`. As many bands as
 * edges, fewer when the edges are long in latitude, so the lists hold about 5n numbers at most.
 * `of` is monotonic in y, so an edge is listed in every band a latitude it spans falls in. A
 * point's cost is its band's length: a few edges for a real zone (or a zig-zag); a ring with many
 * edges spanning one latitude (a comb with north-south teeth) still costs those edges.
 */
function latitudeBands(
  ys: Float64Array,
  n: number,
  minY: number,
  maxY: number,
): { of(y: number): number; start: Int32Array; edges: Int32Array } {
  const height = maxY - minY;
  let spanSum = 0;
  for (let i = 0; i < n; i++) spanSum += Math.abs(ys[i + 1] - ys[i]);
  const count = spanSum > 0 ? Math.max(1, Math.min(n, Math.floor((3 * n * height) / spanSum))) : 1;
  const scale = height > 0 ? count / height : 0;
  const of = (y: number): number => Math.min(count - 1, Math.floor((y - minY) * scale));
  const start = new Int32Array(count + 1);
  for (let i = 0; i < n; i++) {
    const hi = of(Math.max(ys[i], ys[i + 1]));
    for (let b = of(Math.min(ys[i], ys[i + 1])); b <= hi; b++) start[b + 1]++;
  }
  for (let b = 0; b < count; b++) start[b + 1] += start[b];
  const edges = new Int32Array(start[count]);
  const fill = start.slice(0, count);
  for (let i = 0; i < n; i++) {
    const hi = of(Math.max(ys[i], ys[i + 1]));
    for (let b = of(Math.min(ys[i], ys[i + 1])); b <= hi; b++) edges[fill[b]++] = i;
  }
  return { of, start, edges };
}
