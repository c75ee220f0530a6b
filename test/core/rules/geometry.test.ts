import test from 'ava';
import { cpuMsSince } from '../../helpers/wait.js';
import {
  compileZone,
  distanceM,
  findSelfIntersection,
  validateZone,
  MAX_POLYGON_POINTS,
} from '../../../core/rules/geometry.js';

const square: [number, number][] = [
  [0, 0],
  [10, 0],
  [10, 10],
  [0, 10],
  [0, 0],
];
const polygonZone = (polygon: [number, number][]) =>
  compileZone({ id: 'z', type: 'polygon', center: null, radius: null, polygon });

/** A regular n-gon around (lon, lat), closed. */
function ngon(n: number, lon: number, lat: number, r: number): [number, number][] {
  const ring: [number, number][] = [];
  for (let i = 0; i < n; i++)
    ring.push([lon + r * Math.cos((2 * Math.PI * i) / n), lat + r * Math.sin((2 * Math.PI * i) / n)]);
  ring.push([...ring[0]]);
  return ring;
}

test('geometry.validateZone: a circle with its centre and radius in range is accepted', (t) => {
  t.is(validateZone({ type: 'circle', center: { latitude: 40.4, longitude: -3.7 }, radius: 500 }), null);
  t.is(validateZone({ type: 'circle', center: { latitude: -90, longitude: 180 }, radius: 1_000_000 }), null);
  t.is(validateZone({ type: 'circle', center: { latitude: 0, longitude: 0 }, radius: 1, polygon: null }), null);
});

test('geometry.validateZone: a circle names the field that is wrong', (t) => {
  const field = (input: Parameters<typeof validateZone>[0]) => validateZone(input)?.field;
  t.is(field({ type: 'circle', radius: 10 }), 'center');
  t.is(field({ type: 'circle', center: { latitude: 90.5, longitude: 0 }, radius: 10 }), 'center.latitude');
  t.is(field({ type: 'circle', center: { latitude: 0, longitude: -180.01 }, radius: 10 }), 'center.longitude');
  t.is(field({ type: 'circle', center: { latitude: 0, longitude: 0 } }), 'radius');
  t.is(field({ type: 'circle', center: { latitude: 0, longitude: 0 }, radius: 0.5 }), 'radius');
  t.is(field({ type: 'circle', center: { latitude: 0, longitude: 0 }, radius: 1_000_001 }), 'radius');
  t.is(field({ type: 'circle', center: { latitude: 0, longitude: 0 }, radius: 10, polygon: square }), 'polygon');
  t.is(field({ type: 'ellipse' }), 'type');
});

test('geometry.validateZone: a closed, simple ring is accepted in either direction', (t) => {
  t.is(validateZone({ type: 'polygon', polygon: square }), null);
  t.is(validateZone({ type: 'polygon', polygon: [...square].reverse() }), null);
  t.is(
    validateZone({
      type: 'polygon',
      polygon: [
        [0, 0],
        [1, 0],
        [0, 1],
        [0, 0],
      ],
    }),
    null,
    'a triangle',
  );
  t.is(validateZone({ type: 'polygon', polygon: ngon(50, -3.7, 40.4, 0.01) }), null);
});

test('geometry.validateZone: an unclosed ring is refused with a message that says so, not closed silently', (t) => {
  const open = square.slice(0, 4);
  const problem = validateZone({ type: 'polygon', polygon: open });
  t.is(problem?.field, 'polygon');
  t.regex(problem!.message, /not closed.*must repeat its first point/);
});

test('geometry.validateZone: too few or too many points, bad pairs and out-of-range coordinates are refused', (t) => {
  t.regex(
    validateZone({
      type: 'polygon',
      polygon: [
        [0, 0],
        [1, 1],
        [0, 0],
      ],
    })!.message,
    /at least 4 points/,
  );
  const huge = ngon(MAX_POLYGON_POINTS, 0, 0, 1);
  t.regex(validateZone({ type: 'polygon', polygon: huge })!.message, /at most 10,000/);
  t.is(
    validateZone({
      type: 'polygon',
      polygon: [
        [0, 0],
        [1, 0, 5],
        [0, 1],
        [0, 0],
      ],
    })?.field,
    'polygon[1]',
  );
  t.is(
    validateZone({
      type: 'polygon',
      polygon: [
        [0, 0],
        [181, 0],
        [0, 1],
        [0, 0],
      ],
    })?.field,
    'polygon[1][0]',
  );
  t.is(
    validateZone({
      type: 'polygon',
      polygon: [
        [0, 0],
        [1, 0],
        [0, -91],
        [0, 0],
      ],
    })?.field,
    'polygon[2][1]',
  );
  t.is(validateZone({ type: 'polygon' })?.field, 'polygon');
  t.is(validateZone({ type: 'polygon', polygon: square, radius: 5 })?.field, 'radius');
  t.is(validateZone({ type: 'polygon', polygon: square, center: { latitude: 0, longitude: 0 } })?.field, 'center');
});

test('geometry.validateZone: a repeated point and a ring without area are refused', (t) => {
  t.is(
    validateZone({
      type: 'polygon',
      polygon: [
        [0, 0],
        [10, 0],
        [10, 0],
        [10, 10],
        [0, 0],
      ],
    })?.field,
    'polygon[2]',
  );
  t.regex(
    validateZone({
      type: 'polygon',
      polygon: [
        [0, 0],
        [1, 0],
        [2, 0],
        [0, 0],
      ],
    })!.message,
    /no area|crosses itself/,
  );
});

test('geometry.validateZone: a ring that crosses or touches itself is refused, naming the edges', (t) => {
  const bowtie: [number, number][] = [
    [0, 0],
    [10, 10],
    [10, 0],
    [0, 10],
    [0, 0],
  ];
  const problem = validateZone({ type: 'polygon', polygon: bowtie });
  t.is(problem?.field, 'polygon');
  t.regex(problem!.message, /crosses itself: its edge from point 0 to 1 meets the edge from point 2 to 3/);
  // a vertex touching another edge (a pinch)
  t.truthy(
    findSelfIntersection([
      [0, 0],
      [10, 0],
      [10, 10],
      [5, 0],
      [0, 10],
      [0, 0],
    ]),
  );
  // an edge folding back along its neighbour
  t.truthy(
    findSelfIntersection([
      [0, 0],
      [10, 0],
      [5, 0],
      [5, 5],
      [0, 0],
    ]),
  );
  // collinear but disjoint edges do not meet
  t.is(
    findSelfIntersection([
      [0, 0],
      [3, 0],
      [3, 1],
      [6, 1],
      [6, 0],
      [9, 0],
      [9, 5],
      [0, 5],
      [0, 0],
    ]),
    null,
  );
  t.is(findSelfIntersection(ngon(1000, 0, 0, 1)), null);
});

test('geometry.validateZone: a 10,000-point ring is checked quickly (sweep, not all pairs)', (t) => {
  const ring = ngon(MAX_POLYGON_POINTS - 1, 0, 0, 1);
  const started = process.cpuUsage();
  t.is(validateZone({ type: 'polygon', polygon: ring }), null);
  t.true(cpuMsSince(started) < 2000, 'well under the all-pairs cost (CPU time: the same on a busy machine)');
  const crossed = ring.map((p) => [...p] as [number, number]);
  [crossed[10], crossed[5000]] = [crossed[5000], crossed[10]];
  t.regex(validateZone({ type: 'polygon', polygon: crossed })!.message, /crosses itself/);
});

test('geometry.compileZone: a polygon contains points inside, not outside, and its boundary', (t) => {
  const z = polygonZone(square);
  t.true(z.contains(5, 5));
  t.true(z.contains(0.0001, 9.9999));
  t.false(z.contains(-1, 5), 'south');
  t.false(z.contains(5, 10.0001), 'east');
  t.false(z.contains(11, 11));
  for (const [lat, lon] of [
    [0, 5],
    [10, 5],
    [5, 0],
    [5, 10],
    [0, 0],
    [10, 10],
    [0, 10],
    [10, 0],
  ])
    t.true(z.contains(lat, lon), `boundary ${lat},${lon}`);
});

test('geometry.compileZone: a concave polygon leaves its notch out, whichever way the ring turns', (t) => {
  // a U: the notch between x 3..7 above y 3
  const u: [number, number][] = [
    [0, 0],
    [10, 0],
    [10, 10],
    [7, 10],
    [7, 3],
    [3, 3],
    [3, 10],
    [0, 10],
    [0, 0],
  ];
  for (const ring of [u, [...u].reverse()]) {
    const z = polygonZone(ring);
    t.true(z.contains(5, 1), 'the base');
    t.true(z.contains(8, 1.5), 'the left arm');
    t.true(z.contains(8, 8.5), 'the right arm');
    t.false(z.contains(8, 5), 'the notch');
    t.true(z.contains(3, 5), 'the notch floor is boundary');
    t.true(z.contains(10, 3), 'a vertex at the top of an arm');
    t.false(z.contains(3, 11), 'level with a vertex, outside');
  }
});

test('geometry.compileZone: a ray through a vertex counts once', (t) => {
  const diamond: [number, number][] = [
    [0, 5],
    [5, 0],
    [10, 5],
    [5, 10],
    [0, 5],
  ];
  const z = polygonZone(diamond);
  t.true(z.contains(5, 5));
  t.true(z.contains(5, 1), 'level with the east and west vertices');
  t.false(z.contains(5, -1), 'west of the west vertex, level with it');
  t.false(z.contains(10, 0), 'level with the top vertex');
});

test('geometry.compileZone: a circle is a great-circle distance, its edge included', (t) => {
  const madrid = { latitude: 40.4168, longitude: -3.7038 };
  const z = compileZone({ id: 'c', type: 'circle', center: madrid, radius: 1000, polygon: null });
  t.true(z.contains(madrid.latitude, madrid.longitude));
  // 0.0089° of latitude ≈ 990 m; 0.0091° ≈ 1012 m
  t.true(z.contains(madrid.latitude + 0.0089, madrid.longitude));
  t.false(z.contains(madrid.latitude + 0.0091, madrid.longitude));
  const east = 0.0089 / Math.cos(madrid.latitude * (Math.PI / 180));
  t.true(z.contains(madrid.latitude, madrid.longitude + east));
  t.false(z.contains(madrid.latitude, madrid.longitude + east * 1.03));
  t.false(z.contains(-madrid.latitude, madrid.longitude));
  // across the antimeridian a circle still works (polygons do not: documented)
  const date = compileZone({
    id: 'c2',
    type: 'circle',
    center: { latitude: 0, longitude: 179.999 },
    radius: 1000,
    polygon: null,
  });
  t.true(date.contains(0, -179.9995));
  t.false(date.contains(0, -179.98));
});

test('geometry.distanceM: known distances', (t) => {
  // one degree of latitude ≈ 111.2 km on the mean sphere
  t.true(Math.abs(distanceM(0, 0, 1, 0) - 111_195) < 5);
  // Madrid - Barcelona ≈ 505 km
  t.true(Math.abs(distanceM(40.4168, -3.7038, 41.3874, 2.1686) - 505_000) < 3000);
});

test('geometry.compileZone: a 50-point polygon answers in about a microsecond or less', (t) => {
  const z = polygonZone(ngon(50, -3.7, 40.4, 0.05));
  let inside = 0;
  const n = 200_000;
  const started = process.cpuUsage();
  for (let i = 0; i < n; i++)
    if (z.contains(40.4 + ((i % 200) - 100) * 0.0006, -3.7 + ((i % 173) - 86) * 0.0006)) inside++;
  const perCallUs = (cpuMsSince(started) * 1000) / n;
  t.true(inside > 0 && inside < n, 'points on both sides');
  t.true(perCallUs < 5, `${perCallUs.toFixed(3)} µs per check (about 0.2 when the machine is idle)`);
});

/** The check before the sweep (issue 36.5), kept as the reference: every pair of edges. */
function allPairsIntersection(ring: number[][]): [number, number] | null {
  const n = ring.length - 1;
  for (let lo = 0; lo < n; lo++) for (let hi = lo + 1; hi < n; hi++) if (edgesMeet(ring, lo, hi)) return [lo, hi];
  return null;
}

function edgesMeet(ring: number[][], lo: number, hi: number): boolean {
  const n = ring.length - 1;
  const orient = (a: number[], b: number[], c: number[]) =>
    Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
  if (hi === lo + 1 || (lo === 0 && hi === n - 1)) {
    // neighbours: only folding back along each other
    const [s, u, v] = hi === lo + 1 ? [ring[hi], ring[lo], ring[hi + 1]] : [ring[0], ring[1], ring[n - 1]];
    return orient(u, s, v) === 0 && (u[0] - s[0]) * (v[0] - s[0]) + (u[1] - s[1]) * (v[1] - s[1]) > 0;
  }
  const [a, b, c, d] = [ring[lo], ring[lo + 1], ring[hi], ring[hi + 1]];
  const on = (p: number[], q: number[], r: number[]) =>
    Math.min(p[0], q[0]) <= r[0] &&
    r[0] <= Math.max(p[0], q[0]) &&
    Math.min(p[1], q[1]) <= r[1] &&
    r[1] <= Math.max(p[1], q[1]);
  const [o1, o2, o3, o4] = [orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)];
  if (o1 !== o2 && o3 !== o4) return true;
  return (
    (o1 === 0 && on(a, b, c)) || (o2 === 0 && on(a, b, d)) || (o3 === 0 && on(c, d, a)) || (o4 === 0 && on(c, d, b))
  );
}

/** Ray casting over every edge: the polygon test before the latitude bands, as the reference. */
function allEdgesContains(ring: number[][], y: number, x: number): boolean {
  let inside = false;
  for (let i = 0; i < ring.length - 1; i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[i + 1];
    if (yi > y !== yj > y) {
      const cross = xi + (y - yi) * ((xj - xi) / (yj - yi));
      if (x === cross) return true;
      if (x < cross) inside = !inside;
    } else if (yi === y && (xi === x || (yj === y && (xi - x) * (xj - x) <= 0))) return true;
  }
  return inside;
}

/** A seeded generator (mulberry32): the same rings on every run. */
function random(seed: number): (k: number) => number {
  return (k) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let v = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    v = (v + Math.imul(v ^ (v >>> 7), 61 | v)) ^ v;
    return ((v ^ (v >>> 14)) >>> 0) % k;
  };
}

/**
 * Small closed rings on a small grid, so that shared longitudes, vertical and collinear edges,
 * touching vertices and repeated points are common: half of random points (mostly crossing), half
 * of points in order around a centre (mostly simple), some with two points swapped.
 */
function randomRings(count: number, seed: number): number[][][] {
  const rnd = random(seed);
  const rings: number[][][] = [];
  while (rings.length < count) {
    const grid = 2 + rnd(8);
    const points = Array.from({ length: 3 + rnd(12) }, () => [rnd(grid), rnd(grid)]);
    if (rings.length % 2) {
      const [cx, cy] = [(grid - 1) / 2 + 0.01, (grid - 1) / 2 + 0.013];
      points.sort((p, q) => Math.atan2(p[1] - cy, p[0] - cx) - Math.atan2(q[1] - cy, q[0] - cx));
      if (rnd(3) === 0) {
        const [i, j] = [rnd(points.length), rnd(points.length)];
        [points[i], points[j]] = [points[j], points[i]];
      }
    }
    const ring = points.filter((p, i) => i === 0 || p[0] !== points[i - 1][0] || p[1] !== points[i - 1][1]);
    const last = ring[ring.length - 1];
    if (ring.length < 3 || (last[0] === ring[0][0] && last[1] === ring[0][1])) continue;
    rings.push([...ring, [...ring[0]]]);
  }
  return rings;
}

test('geometry.findSelfIntersection: the sweep finds two edges that meet exactly when comparing every pair does (random small rings)', (t) => {
  let crossing = 0;
  for (const ring of randomRings(20_000, 36)) {
    const expected = allPairsIntersection(ring);
    const found = findSelfIntersection(ring);
    if (!!found !== !!expected)
      return t.fail(
        `${JSON.stringify(ring)}: the sweep says ${JSON.stringify(found)}, every pair ${JSON.stringify(expected)}`,
      );
    if (found && !(found[0] < found[1] && edgesMeet(ring, found[0], found[1])))
      return t.fail(`${JSON.stringify(ring)}: ${JSON.stringify(found)} do not meet`);
    if (found) crossing++;
  }
  t.true(crossing > 5_000 && crossing < 15_000, `${crossing} of 20,000 cross: both kinds are checked`);
});

/** Points alternating between two longitudes while the latitude climbs, closed by a rectangle's east side: valid, and every edge overlaps every other in longitude. */
function zigzag(points: number): [number, number][] {
  const m = points - 4;
  const ring: [number, number][] = [];
  for (let k = 0; k < m; k++) ring.push([k % 2 ? -3.7 : -3.71, 40.4 + (k * 0.5) / m]);
  ring.push([-3.69, ring[m - 1][1]], [-3.69, 40.39], [-3.71, 40.39], [...ring[0]]);
  return ring;
}

test('geometry.validateZone: a zig-zag of 9,999 points (every edge overlapping every other in longitude) is accepted, and refused once it crosses itself', (t) => {
  const ring = zigzag(MAX_POLYGON_POINTS - 1);
  t.is(ring.length, 9999);
  t.is(validateZone({ type: 'polygon', polygon: ring }), null);
  // a tooth pulled past its neighbours crosses the edges between them
  const pulled = ring.map((p) => [...p] as [number, number]);
  pulled[5000][1] = pulled[5003][1];
  const problem = validateZone({ type: 'polygon', polygon: pulled });
  t.regex(problem!.message, /crosses itself: its edge from point (\d+) to \d+ meets the edge from point (\d+)/);
  const [a, b] = findSelfIntersection(pulled)!;
  t.true(edgesMeet(pulled, a, b) && a >= 4990 && b <= 5010, `edges ${a} and ${b}`);
});

test('geometry.compileZone: a polygon answers as ray casting over every edge does, on and off its edges and vertices (random rings)', (t) => {
  const rnd = random(5);
  let inside = 0;
  let checked = 0;
  for (const ring of randomRings(6000, 7)) {
    if (validateZone({ type: 'polygon', polygon: ring }) !== null) continue;
    const z = polygonZone(ring as [number, number][]);
    for (let k = 0; k < 40; k++) {
      // half-grid points: on vertices, on edges, level with vertices, and between
      const [lat, lon] = [rnd(21) / 2 - 0.5, rnd(21) / 2 - 0.5];
      const expected = allEdgesContains(ring, lat, lon);
      if (z.contains(lat, lon) !== expected)
        return t.fail(`${JSON.stringify(ring)} at ${lat},${lon}: expected ${expected}`);
      checked++;
      if (expected) inside++;
    }
  }
  t.true(inside > checked / 10 && checked > 50_000, `${inside} of ${checked} inside`);
});

test('geometry.compileZone: a 9,998-point zig-zag answers as every edge does, for one position asked again and for the next', (t) => {
  const ring = zigzag(9998);
  const z = polygonZone(ring);
  const rnd = random(9);
  for (let k = 0; k < 2000; k++) {
    const [lat, lon] = [40.385 + rnd(12_000) / 1_000_000, -3.715 + rnd(30_000) / 1_000_000];
    const expected = allEdgesContains(ring, lat, lon);
    t.is(z.contains(lat, lon), expected, `${lat},${lon}`);
    t.is(z.contains(lat, lon), expected, `${lat},${lon} again`);
  }
  for (const [lat, lon] of [
    [40.6, -3.7],
    [40.395, -3.695],
    [40.6, -3.7],
  ])
    t.is(z.contains(lat, lon), allEdgesContains(ring, lat, lon));
});
