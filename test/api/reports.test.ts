/**
 * Trips, stops and summary (docs/rest.md "Trips, stops and summary") over real REST on both
 * databases: a synthetic day in Madrid time with known trips and stops (driving, a traffic-light
 * halt, long stops, ignition on and off, a parked tracker's jitter, a jump, an invalid fix, a gap
 * without fixes), exact counts and times, distance within 1 %; late fixes re-cut the trips of a
 * cached day; a group report and a group-restricted user; CSV read by a real parser; bad input.
 */
import test from 'ava';
import { parse } from 'csv-parse/sync';
import { backends } from '../helpers/backends.js';
import { createDevice, startServer, type TestServer } from '../helpers/server.js';
import { haversineKm } from '../../core/locations/distance.js';

/** 2026-06-01 00:00 in Madrid (UTC+2 in summer) */
const DAY0 = Date.UTC(2026, 4, 31, 22);
const local = (h: number, m = 0, s = 0) => DAY0 + ((h * 60 + m) * 60 + s) * 1000;
const text = (h: number, m = 0, s = 0) =>
  `2026-06-01T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}+02:00`;
const FROM = '2026-06-01T00:00:00+02:00';
const TO = '2026-06-01T23:59:59+02:00';

/** metres north of the day's first place as latitude */
const LAT0 = 40.4;
const LON = -3.7;
const north = (m: number) => LAT0 + m / 111_195;

type Fix = Record<string, unknown> & { dateTime: string };
const fix = (ms: number, m: number, speed: number, extra: Record<string, unknown> = {}): Fix => ({
  dateTime: new Date(ms).toISOString(),
  latitude: north(m),
  longitude: LON,
  speed,
  ...extra,
});
const ign = (on: boolean) => ({ attributes: { ignition: on } });
/** a parked tracker's wander, within 12 m */
const wander = (i: number) => ((i % 3) - 1) * 8;

/** places (metres north) where the day's trips end */
const B = 100 * 174; // 180 fixes of drive 1, 6 of them halted
const C = B + 150 * 180;
const GAP_AT = C + 100 * 59;
const X = GAP_AT + 2000;
const D = X + 100 * 60;

/**
 * The day: parked at A (06:00, ignition off, a jitter spike at 06:30); drive 1 (07:00–07:30,
 * 36 km/h, a 60 s traffic light at 07:10, a jump at 07:20); stopped at B until 08:30 (ignition on
 * for 2 min); drive 2 (08:30–09:00, 54 km/h, ignition as the first input, an invalid fix); parked at C until 12:00 (no
 * ignition reported, a jitter spike at 10:00); drive 3 (12:00–12:09:50) then no fixes for 20 min,
 * drive 4 (12:30–12:40) from 2 km further on; parked at D until 13:00.
 */
function theDay(): Fix[] {
  const out: Fix[] = [];
  for (let i = 0; i < 60; i++) {
    out.push(fix(local(6, i), wander(i), 0, ign(false)));
    if (i === 30) out.push(fix(local(6, 30, 20), 30, 8, ign(false)));
  }
  let m = 0;
  for (let i = 0; i < 180; i++) {
    const t = local(7, 0, i * 10);
    const halted = i >= 60 && i < 66;
    if (i === 120) out.push(fix(t, 50_000, 36, ign(true)));
    else out.push(fix(t, m, halted ? 0 : 36, ign(true)));
    if (!halted) m += 100;
  }
  for (let i = 0; i < 12; i++) out.push(fix(local(7, 30, i * 10), B, 0, ign(true)));
  for (let i = 2; i < 60; i++) out.push(fix(local(7, 30 + i), B, 0, ign(false)));
  for (let i = 0; i < 180; i++) {
    out.push(fix(local(8, 30, i * 10), B + 150 * i, 54, { inputs: [true] }));
    if (i === 90) out.push({ ...fix(local(8, 45, 5), 0, 0), latitude: 0, longitude: 0, valid: false });
  }
  for (let i = 0; i < 180; i++) {
    out.push(fix(local(9, i), C + wander(i), 0));
    if (i === 60) out.push(fix(local(10, 0, 10), C + 30, 6), fix(local(10, 0, 20), C + 30, 6));
  }
  for (let i = 0; i < 60; i++) out.push(fix(local(12, 0, i * 10), C + 100 * i, 36));
  for (let i = 0; i < 60; i++) out.push(fix(local(12, 30, i * 10), X + 100 * i, 36));
  for (let i = 0; i <= 20; i++) out.push(fix(local(12, 40 + i), D, 0));
  return out;
}

const kmBetween = (a: number, b: number) =>
  haversineKm({ latitude: north(a), longitude: LON }, { latitude: north(b), longitude: LON });

const EXPECTED_TRIPS = [
  { start: text(7), end: text(7, 30), km: kmBetween(0, B), maxSpeed: 36 },
  { start: text(8, 30), end: text(9), km: kmBetween(B, C), maxSpeed: 54 },
  { start: text(12), end: text(12, 9, 50), km: kmBetween(C, GAP_AT), maxSpeed: 36 },
  { start: text(12, 30), end: text(12, 40), km: kmBetween(X, D), maxSpeed: 36 },
];
const EXPECTED_STOPS = [
  [text(6), text(7)],
  [text(7, 30), text(8, 30)],
  [text(9), text(12)],
  [text(12, 9, 50), text(12, 30)],
  [text(12, 40), text(13)],
];

async function post(s: TestServer, id: string, fixes: Fix[]): Promise<void> {
  for (let i = 0; i < fixes.length; i += 1000) {
    const r = await s.request('POST', `/api/devices/${id}/locations`, {
      token: s.adminToken,
      body: { locations: fixes.slice(i, i + 1000) },
    });
    if (r.status !== 201) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
  }
}

const report = (s: TestServer, kind: string, query: string, token = s.adminToken, headers = {}) =>
  s.request('GET', `/api/reports/${kind}?${query}`, { token, headers });
const range = `from=${encodeURIComponent(FROM)}&to=${encodeURIComponent(TO)}`;

async function user(s: TestServer, email: string, extra: Record<string, unknown>): Promise<string> {
  const r = await s.request('POST', '/api/users', {
    token: s.adminToken,
    body: { name: email, email, country: 'ES', timeZone: 'UTC', ...extra },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return s.token(email, r.body.apiKey);
}

const within1pct = (got: number, want: number) => Math.abs(got - want) <= want * 0.01;

for (const backend of await backends()) {
  test(`api.reports (${backend}): a known day's trips, stops and summary, CSV, late fixes, a group`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    t.is(
      (await s.request('PUT', '/api/account', { token: s.adminToken, body: { timeZone: 'Europe/Madrid' } })).status,
      200,
    );
    await createDevice(s, 'car-1');
    await post(s, 'car-1', theDay());

    const trips = await report(s, 'trips', `deviceId=car-1&${range}`);
    t.is(trips.status, 200, JSON.stringify(trips.body));
    t.deepEqual(
      trips.body.trips.map((x: any) => [x.startTime, x.endTime]),
      EXPECTED_TRIPS.map((x) => [x.start, x.end]),
      'four trips: the traffic light, the jump and the jitter make none',
    );
    trips.body.trips.forEach((x: any, i: number) => {
      const want = EXPECTED_TRIPS[i];
      t.true(within1pct(x.distance, want.km), `trip ${i}: ${x.distance} km, expected ${want.km.toFixed(3)}`);
      t.is(x.maxSpeed, want.maxSpeed);
      t.is(x.duration, (Date.parse(x.endTime) - Date.parse(x.startTime)) / 1000);
      t.true(Math.abs(x.averageSpeed - x.distance / (x.duration / 3600)) < 0.1);
      t.is(x.deviceId, 'car-1');
    });
    t.true(Math.abs(trips.body.trips[0].startLatitude - north(0)) < 1e-5);
    t.true(Math.abs(trips.body.trips[0].endLatitude - north(B)) < 1e-5);

    const stops = await report(s, 'stops', `deviceId=car-1&${range}`);
    t.deepEqual(
      stops.body.stops.map((x: any) => [x.startTime, x.endTime]),
      EXPECTED_STOPS,
      'the long stops and the gap; no stop at the traffic light',
    );
    t.true(Math.abs(stops.body.stops[1].latitude - north(B)) < 1e-5);
    t.is(stops.body.stops[2].duration, 3 * 3600);

    const summary = (await report(s, 'summary', `deviceId=car-1&${range}`)).body.summary;
    t.is(summary.length, 1);
    const sum = summary[0];
    const km = EXPECTED_TRIPS.reduce((n, x) => n + x.km, 0);
    t.true(within1pct(sum.distance, km), `summary ${sum.distance} km, expected ${km.toFixed(3)}`);
    t.is(sum.drivingTime, 30 * 60 + 30 * 60 + 590 + 600);
    t.is(sum.stoppedTime, 3600 + 3600 + 3 * 3600 + 1210 + 1200);
    t.is(sum.maxSpeed, 54);
    t.is(sum.engineHours, Math.round((62 / 60) * 100) / 100, 'ignition on 07:00–07:32 and 08:30–09:00');

    // CSV, read by a real parser
    const csv = await report(s, 'trips', `deviceId=car-1&${range}`, s.adminToken, { accept: 'text/csv' });
    t.is(csv.status, 200);
    t.regex(csv.headers.get('content-type') ?? '', /^text\/csv/);
    const rows = parse(csv.body as string, { columns: true }) as Record<string, string>[];
    t.deepEqual(Object.keys(rows[0]), [
      'deviceId',
      'startTime',
      'endTime',
      'startLatitude',
      'startLongitude',
      'endLatitude',
      'endLongitude',
      'distance',
      'duration',
      'maxSpeed',
      'averageSpeed',
    ]);
    t.deepEqual(
      rows.map((r) => [r.startTime, Number(r.distance)]),
      trips.body.trips.map((x: any) => [x.startTime, x.distance]),
    );
    const sumCsv = parse(
      (await report(s, 'summary', `deviceId=car-1&${range}`, s.adminToken, { accept: 'text/csv' })).body as string,
      { columns: true },
    ) as Record<string, string>[];
    t.is(Number(sumCsv[0].engineHours), sum.engineHours);

    // late fixes: a 15-minute round trip at 10:30 while parked at C, sent after the day was cached
    const late: Fix[] = [];
    for (let i = 0; i < 90; i++) {
      const there = i < 45 ? i * 100 : (90 - i) * 100;
      late.push(fix(local(10, 30, i * 10), C + there, 36));
    }
    const dayBefore = theDay().filter((f) => {
      const ms = Date.parse(f.dateTime);
      return !(ms > local(10, 30) - 1 && ms < local(10, 45));
    });
    await createDevice(s, 'car-2');
    await post(s, 'car-2', dayBefore);
    const before = await report(s, 'trips', `deviceId=car-2&${range}`);
    t.is(before.body.trips.length, 4, 'cached before the late fixes');
    await post(s, 'car-2', late);
    const after = await report(s, 'trips', `deviceId=car-2&${range}`);
    t.deepEqual(
      after.body.trips.map((x: any) => [x.startTime, x.endTime]),
      [
        ...EXPECTED_TRIPS.slice(0, 2).map((x) => [x.start, x.end]),
        [text(10, 30), text(10, 45)],
        ...EXPECTED_TRIPS.slice(2).map((x) => [x.start, x.end]),
      ],
      'the late trip cuts the stop at C in two',
    );
    t.true(within1pct(after.body.trips[2].distance, 9), `late trip ${after.body.trips[2].distance} km`);
    t.deepEqual(
      (await report(s, 'stops', `deviceId=car-2&${range}`)).body.stops
        .map((x: any) => [x.startTime, x.endTime])
        .slice(2, 4),
      [
        [text(9), text(10, 30)],
        [text(10, 45), text(12)],
      ],
    );

    // a group, and a user restricted to it
    const group = (
      await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'G', devices: ['car-1', 'car-2'] } })
    ).body.id as string;
    await createDevice(s, 'car-3');
    const other = (
      await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'H', devices: ['car-3'] } })
    ).body.id as string;
    const inGroup = await report(s, 'summary', `groupId=${group}&${range}`);
    t.deepEqual(
      inGroup.body.summary.map((x: any) => x.deviceId),
      ['car-1', 'car-2'],
    );
    t.is((await report(s, 'trips', `groupId=${group}&${range}`)).body.trips.length, 9);
    const restricted = await user(s, 'r@example.com', { privileges: ['read'], group });
    t.is((await report(s, 'trips', `groupId=${group}&${range}`, restricted)).body.trips.length, 9);
    t.is((await report(s, 'trips', `groupId=${other}&${range}`, restricted)).body.code, 'GROUP_NOT_FOUND');
    t.is((await report(s, 'trips', `deviceId=car-3&${range}`, restricted)).body.code, 'DEVICE_NOT_FOUND');

    // settings: a longer stop threshold makes the gap part of a trip (drives 3 and 4 are one)
    const set = await s.request('PUT', '/api/reports/settings', {
      token: s.adminToken,
      body: { minStopSeconds: 1800 },
    });
    t.is(set.status, 200, JSON.stringify(set.body));
    t.is(set.body.settings.minStopSeconds, 1800);
    t.is((await report(s, 'trips', `deviceId=car-1&${range}`)).body.trips.length, 3);
    t.is(
      (await s.request('PUT', '/api/reports/settings', { token: restricted, body: { minStopSeconds: 60 } })).status,
      403,
    );
    t.is(
      (await s.request('PUT', '/api/reports/settings', { token: s.adminToken, body: { minStopSeconds: -1 } })).status,
      400,
    );
  });

  test(`api.reports (${backend}): a cached day is read, not computed again, until its fixes change`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await s.request('PUT', '/api/account', { token: s.adminToken, body: { timeZone: 'Europe/Madrid' } });
    await createDevice(s, 'car-1');
    await post(s, 'car-1', theDay());
    const first = (await report(s, 'trips', `deviceId=car-1&${range}`)).body.trips;
    t.is(first.length, 4);
    // the cached day is what the next request reads: mark its first trip's start
    const db = s.running.db;
    const row = await db('report_days').where({ device_id: 'car-1' }).first();
    t.truthy(row, 'the day is cached');
    const runs = JSON.parse(row.data);
    const moving = runs.runs.find((r: { moving: boolean }) => r.moving);
    moving.latitude = 1;
    await db('report_days')
      .where({ device_id: 'car-1', day_start_ms: row.day_start_ms })
      .update({ data: JSON.stringify(runs) });
    t.is((await report(s, 'trips', `deviceId=car-1&${range}`)).body.trips[0].startLatitude, 1, 'read from the cache');
    // a newer fix (no late mark): the day's last fix changed, so it is computed again
    await post(s, 'car-1', [fix(local(13, 30), D, 0)]);
    const again = (await report(s, 'trips', `deviceId=car-1&${range}`)).body.trips;
    t.deepEqual(again, first, 'computed again from the fixes');
    t.is((await report(s, 'stops', `deviceId=car-1&${range}`)).body.stops[4].endTime, text(13, 30));
    // other settings: computed again with them
    await db('report_days')
      .where({ device_id: 'car-1' })
      .update({ data: JSON.stringify(runs) });
    await s.request('PUT', '/api/reports/settings', { token: s.adminToken, body: { movingSpeedKmh: 6 } });
    t.deepEqual((await report(s, 'trips', `deviceId=car-1&${range}`)).body.trips, first);
  });

  test(`api.reports (${backend}): bad input is a clear 4xx`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await createDevice(s, 'car-1');
    const bad = async (query: string, status: number, code: string) => {
      const r = await report(s, 'trips', query);
      t.is(r.status, status, `${query}: ${JSON.stringify(r.body)}`);
      t.is(r.body.code, code, query);
      t.truthy(r.body.error);
    };
    await bad(range, 400, 'VALIDATION_FAILED');
    await bad(`deviceId=car-1&groupId=g&${range}`, 400, 'VALIDATION_FAILED');
    await bad(`deviceId=car-1&from=${encodeURIComponent(TO)}&to=${encodeURIComponent(FROM)}`, 400, 'VALIDATION_FAILED');
    await bad(`deviceId=car-1&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z`, 400, 'VALIDATION_FAILED');
    await bad(`deviceId=car-1&from=yesterday&to=${encodeURIComponent(TO)}`, 400, 'VALIDATION_FAILED');
    await bad(`deviceId=car-1`, 400, 'VALIDATION_FAILED');
    await bad(`deviceId=nope&${range}`, 404, 'DEVICE_NOT_FOUND');
    await bad(`groupId=nope&${range}`, 404, 'GROUP_NOT_FOUND');
    const doc = (await s.request('GET', '/api/openapi.json')).body;
    for (const kind of ['trips', 'stops', 'summary']) {
      const content = doc.paths[`/api/reports/${kind}`].get.responses['200'].content;
      t.deepEqual(Object.keys(content), ['application/json', 'text/csv'], `${kind} in the OpenAPI document`);
    }
    t.truthy(doc.paths['/api/reports/settings'].put);
    const empty = await report(s, 'trips', `deviceId=car-1&${range}`);
    t.deepEqual(empty.body.trips, [], 'a device without fixes has no trips');
    t.deepEqual((await report(s, 'summary', `deviceId=car-1&${range}`)).body.summary[0].distance, 0);
  });
}
