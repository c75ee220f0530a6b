/** The distance rules of core/locations/distance.ts on exact numbers. */
import test from 'ava';
import {
  advance,
  haversineKm,
  JITTER_KM,
  legKm,
  MAX_SPEED_KMH,
  type DistanceState,
  type Fix,
} from '../../../core/locations/distance.js';

const T0 = Date.UTC(2026, 5, 1, 8);
const fix = (s: number, latitude: number, longitude: number, more: Partial<Fix> = {}): Fix => ({
  dateTime: T0 + s * 1000,
  latitude,
  longitude,
  ...more,
});
const run = (fixes: Fix[]): DistanceState => {
  let s: DistanceState | undefined;
  for (const f of fixes) s = advance(s, f);
  return s!;
};

test('distance: haversine of a degree of latitude and of a known city pair', (t) => {
  t.true(Math.abs(haversineKm({ latitude: 0, longitude: 0 }, { latitude: 1, longitude: 0 }) - 111.195) < 0.01);
  // Madrid - Barcelona, about 505 km great circle
  const km = haversineKm({ latitude: 40.4168, longitude: -3.7038 }, { latitude: 41.3874, longitude: 2.1686 });
  t.true(Math.abs(km - 505) < 3, String(km));
});

test('distance: a straight drive adds up its legs; the first fix starts at 0', (t) => {
  // 0.001 degree of latitude (111 m) every 10 s: 40 km/h
  const fixes = Array.from({ length: 101 }, (_, i) => fix(i * 10, 40 + i * 0.001, -3, { speedKmh: 40 }));
  t.is(advance(undefined, fixes[0]).totalKm, 0);
  const s = run(fixes);
  t.true(Math.abs(s.totalKm - 11.1195) < 0.005, String(s.totalKm));
  t.is(s.lastTime, fixes[100].dateTime);
});

test('distance: jitter of a parked tracker adds nothing, and the drive away counts from where it stood', (t) => {
  const parked = fix(0, 40, -3, { speedKmh: 0 });
  const wander = Array.from({ length: 50 }, (_, i) =>
    fix(10 + i * 10, 40 + ((i % 5) - 2) * 0.0001, -3 + ((i % 3) - 1) * 0.0001, { speedKmh: 0 }),
  );
  const s = run([parked, ...wander]);
  t.is(s.totalKm, 0, 'fixes within 30 m of each other while stopped');
  const away = advance(s, fix(600, 40.01, -3, { speedKmh: 50 }));
  t.true(Math.abs(away.totalKm - haversineKm(parked, { latitude: 40.01, longitude: -3 })) < 1e-9);
});

test('distance: a slow walk without speed is counted once it has gone JITTER_KM from the last counted fix', (t) => {
  // 10 m every 10 s (3.6 km/h) with no speed reported: each leg is jitter, the sum is not lost
  const fixes = Array.from({ length: 31 }, (_, i) => fix(i * 10, 40 + i * 0.00009, -3));
  const s = run(fixes);
  const straight = haversineKm(fixes[0], fixes[30]);
  t.true(s.totalKm > straight - JITTER_KM - 0.001 && s.totalKm <= straight + 1e-9, `${s.totalKm} of ${straight}`);
});

test('distance: an invalid fix counts nothing and is not measured from', (t) => {
  const s = run([fix(0, 40, -3), fix(10, 41, -3, { valid: false }), fix(20, 40.001, -3, { speedKmh: 40 })]);
  t.true(Math.abs(s.totalKm - 0.1112) < 0.001, String(s.totalKm));
});

test('distance: a jump no vehicle can make counts nothing; a second fix agreeing with it moves the count there', (t) => {
  t.is(legKm(fix(0, 40, -3), fix(10, 40.5, -3)), undefined, `faster than ${MAX_SPEED_KMH} km/h`);
  const glitch = run([fix(0, 40, -3), fix(10, 40.5, -3), fix(20, 40.001, -3, { speedKmh: 40 })]);
  t.true(Math.abs(glitch.totalKm - 0.1112) < 0.001, `back where it was: ${glitch.totalKm}`);
  const moved = run([
    fix(0, 40, -3),
    fix(10, 40.5, -3, { speedKmh: 40 }),
    fix(20, 40.501, -3, { speedKmh: 40 }),
    fix(30, 40.502, -3, { speedKmh: 40 }),
  ]);
  t.true(Math.abs(moved.totalKm - 0.1112) < 0.001, `only the leg after the place was confirmed: ${moved.totalKm}`);
  t.is(moved.anchor.latitude, 40.502);
});

test('distance: a long gap is not a jump (the leg is slow enough)', (t) => {
  const s = run([fix(0, 40, -3), fix(3600, 40.5, -3)]);
  t.true(Math.abs(s.totalKm - 55.6) < 0.1, String(s.totalKm));
});
