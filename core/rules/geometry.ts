/**
 * Zones as geometry (CONTRACT.md "Alert rules and zones"): checking a zone before it is stored, and
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
    if (input.polygon != null) return { field: 'polygon', message: 'a circle has no polygon; leave it out (or make the zone a polygon)' };
    if (input.center == null) return { field: 'center', message: 'a circle needs its center {latitude, longitude}' };
    if (!latOk(input.center.latitude)) return { field: 'center.latitude', message: 'must be a number from -90 to 90' };
    if (!lonOk(input.center.longitude)) return { field: 'center.longitude', message: 'must be a number from -180 to 180' };
    if (input.radius == null) return { field: 'radius', message: 'a circle needs its radius in metres' };
    if (!isNum(input.radius) || input.radius < MIN_RADIUS_M || input.radius > MAX_RADIUS_M) {
      return { field: 'radius', message: `must be from ${MIN_RADIUS_M} to ${MAX_RADIUS_M.toLocaleString('en')} metres` };
    }
    return null;
  }
  if (input.type === 'polygon') {
    if (input.center != null) return { field: 'center', message: 'a polygon has no center; leave it out (or make the zone a circle)' };
    if (input.radius != null) return { field: 'radius', message: 'a polygon has no radius; leave it out (or make the zone a circle)' };
    if (input.polygon == null) return { field: 'polygon', message: 'a polygon needs its ring of [longitude, latitude] points' };
    return validateRing(input.polygon);
  }
  return { field: 'type', message: 'must be "circle" or "polygon"' };
}

function validateRing(ring: number[][]): ZoneProblem | null {
  if (!Array.isArray(ring)) return { field: 'polygon', message: 'must be an array of [longitude, latitude] points' };
  if (ring.length < MIN_POLYGON_POINTS) {
    return { field: 'polygon', message: `needs at least ${MIN_POLYGON_POINTS} points (a triangle, closed by repeating its first point at the end); it has ${ring.length}` };
  }
  if (ring.length > MAX_POLYGON_POINTS) return { field: 'polygon', message: `has ${ring.length} points; at most ${MAX_POLYGON_POINTS.toLocaleString('en')} are allowed` };
  for (let i = 0; i < ring.length; i++) {
    const p = ring[i];
    if (!Array.isArray(p) || p.length !== 2) return { field: `polygon[${i}]`, message: 'must be a [longitude, latitude] pair' };
    if (!lonOk(p[0])) return { field: `polygon[${i}][0]`, message: 'the longitude must be a number from -180 to 180' };
    if (!latOk(p[1])) return { field: `polygon[${i}][1]`, message: 'the latitude must be a number from -90 to 90' };
  }
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (first[0] !== last[0] || first[1] !== last[1]) {
    return { field: 'polygon', message: `the ring is not closed: its last point [${last.join(', ')}] must repeat its first point [${first.join(', ')}]` };
  }
  for (let i = 1; i < ring.length; i++) {
    if (ring[i][0] === ring[i - 1][0] && ring[i][1] === ring[i - 1][1]) {
      return { field: `polygon[${i}]`, message: 'repeats the point before it; remove one of them' };
    }
  }
  const crossing = findSelfIntersection(ring);
  if (crossing) {
    const [a, b] = crossing;
    return { field: 'polygon', message: `the ring crosses itself: its edge from point ${a} to ${a + 1} meets the edge from point ${b} to ${b + 1}` };
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

function segmentsMeet(ax: number, ay: number, bx: number, by: number, cx: number, cy: number, dx: number, dy: number): boolean {
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
 * The first two edges of a closed ring that meet (by their start indexes), or null. Edges that
 * follow each other share their common point and meet nowhere else unless one folds back along the
 * other; any other two edges may not even touch. Edges are swept in order of their west end, so only
 * edges whose longitude ranges overlap are compared: far below n² for real zones.
 */
export function findSelfIntersection(ring: number[][]): [number, number] | null {
  const n = ring.length - 1;
  const order = Array.from({ length: n }, (_, i) => i);
  const minX = (i: number) => Math.min(ring[i][0], ring[i + 1][0]);
  const maxX = (i: number) => Math.max(ring[i][0], ring[i + 1][0]);
  order.sort((a, b) => minX(a) - minX(b));
  for (let oi = 0; oi < n; oi++) {
    const i = order[oi];
    const [ax, ay] = ring[i];
    const [bx, by] = ring[i + 1];
    const iMaxX = maxX(i);
    const iMinY = Math.min(ay, by);
    const iMaxY = Math.max(ay, by);
    for (let oj = oi + 1; oj < n; oj++) {
      const j = order[oj];
      if (minX(j) > iMaxX) break;
      const [cx, cy] = ring[j];
      const [dx, dy] = ring[j + 1];
      if (Math.max(cy, dy) < iMinY || Math.min(cy, dy) > iMaxY) continue;
      const lo = Math.min(i, j);
      const hi = Math.max(i, j);
      if (hi === lo + 1 || (lo === 0 && hi === n - 1)) {
        // Neighbours: they share one point; they overlap only if one's far end lies on the other.
        const [sx, sy, ux, uy, vx, vy] = hi === lo + 1 ? [...ring[hi], ...ring[lo], ...ring[hi + 1]] : [...ring[0], ...ring[1], ...ring[n - 1]];
        if (orient(ux, uy, sx, sy, vx, vy) === 0 && ((ux - sx) * (vx - sx) + (uy - sy) * (vy - sy)) > 0) return [lo, hi];
        continue;
      }
      if (segmentsMeet(ax, ay, bx, by, cx, cy, dx, dy)) return [lo, hi];
    }
  }
  return null;
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
  return {
    id,
    type: 'polygon',
    contains(latitude: number, longitude: number): boolean {
      const x = longitude;
      const y = latitude;
      if (x < minX || x > maxX || y < minY || y > maxY) return false;
      // Ray casting towards the east, half-open in latitude so that a vertex is counted once.
      let inside = false;
      for (let i = 0; i < n; i++) {
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
    },
  };
}
