import test from 'ava';
import mqtt from 'mqtt';
import { ManualClock } from '../../core/clock.js';
import { backends, postgresAvailable } from '../helpers/backends.js';
import { createDevice, startServer, testEnv, type TestServer } from '../helpers/server.js';
import { loadConfig } from '../../config/config.js';
import { openDb, closeDb } from '../../core/db/db.js';
import { startPair } from '../helpers/instances.js';
import { teltonikaSession, readTeltonikaCommand } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';
import * as F from '../helpers/frames.js';

const T0 = Date.UTC(2026, 2, 2, 10, 0, 0); // a Monday, 10:00 UTC
const IMEI = '356307042441013';
type T = { teardown(fn: () => unknown): void };

/** a square depot: 40.40..40.42 N, 3.72..3.70 W, as a closed GeoJSON ring */
const DEPOT = {
  name: 'Depot',
  type: 'polygon',
  polygon: [
    [-3.72, 40.4],
    [-3.7, 40.4],
    [-3.7, 40.42],
    [-3.72, 40.42],
    [-3.72, 40.4],
  ],
};
const INSIDE = { latitude: 40.41, longitude: -3.71 };
const OUTSIDE = { latitude: 40.5, longitude: -3.71 };

async function start(
  t: T,
  backend: 'sqlite' | 'postgres' = 'sqlite',
  env: Record<string, string> = {},
  clock = new ManualClock(new Date(T0)),
): Promise<TestServer & { clock: ManualClock }> {
  const s = await startServer(backend, { env, clock });
  t.teardown(() => s.stop());
  return Object.assign(s, { clock });
}

async function rule(s: TestServer, body: Record<string, unknown>): Promise<string> {
  const r = await s.request('POST', '/api/alertRules', {
    token: s.adminToken,
    body: { name: String(body.alertName), devices: [IMEI], notify: { email: false, sms: false }, ...body },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.alertRule.id;
}

async function zone(s: TestServer, body: Record<string, unknown> = DEPOT): Promise<string> {
  const r = await s.request('POST', '/api/zones', { token: s.adminToken, body });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.zone.id;
}

const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const loc = (seconds: number, over: Record<string, unknown> = {}) => ({
  dateTime: at(seconds),
  ...INSIDE,
  speed: 40,
  ...over,
});

async function post(s: TestServer, locations: Record<string, unknown>[], id = IMEI): Promise<void> {
  const r = await s.request('POST', `/api/devices/${id}/locations`, { token: s.adminToken, body: { locations } });
  if (r.status !== 200 && r.status !== 201) throw new Error(JSON.stringify(r.body));
}

async function alertsOf(
  s: TestServer,
  id = IMEI,
): Promise<
  { alertName: string; text: string; dateTime: string; latitude: number | null; suppressed: Record<string, string> }[]
> {
  await s.running.rules.idle();
  const r = await s.request('POST', `/api/devices/${id}/alerts`, {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
  });
  return r.body.alerts;
}

for (const backend of await backends()) {
  test(`rules (${backend}): speeding for 2 minutes over REST raises one SpeedLimit, with the speed and limit in its text, on the rule's channels only`, async (t) => {
    const s = await start(t, backend);
    await createDevice(s, IMEI, { alertEmails: ['ops@example.com'] });
    await rule(s, { alertName: 'SpeedLimit', params: { speed: 90 }, minDurationSeconds: 120 });
    await post(s, [loc(0, { speed: 50 }), loc(10, { speed: 104 }), loc(60, { speed: 110 }), loc(120, { speed: 100 })]);
    t.deepEqual(await alertsOf(s), [], 'speeding for 110 s: not yet');
    await post(s, [loc(131, { speed: 97 }), loc(150, { speed: 120 }), loc(200, { speed: 95 })]);
    const alerts = await alertsOf(s);
    t.is(alerts.length, 1, JSON.stringify(alerts));
    t.like(alerts[0], {
      alertName: 'SpeedLimit',
      text: 'Speed 97 km/h over the limit of 90 km/h',
      dateTime: at(131),
      latitude: INSIDE.latitude,
    });
    t.deepEqual(
      alerts[0].suppressed,
      { Email: 'notRequested', SMS: 'notRequested' },
      'the rule notifies on no channel',
    );
    await post(s, [loc(300, { speed: 60 }), loc(310, { speed: 130 }), loc(440, { speed: 130 })]);
    t.is((await alertsOf(s)).length, 2, 'a new episode after it ended raises a new alert');
  });

  test(`rules (${backend}): two rules of one alert name on a device each raise and notify their own alert for the same position (two speed limits, two overlapping zones)`, async (t) => {
    const s = await start(t, backend);
    await createDevice(s, IMEI, { alertEmails: ['ops@example.com'] });
    await rule(s, { alertName: 'SpeedLimit', params: { speed: 90 } });
    await rule(s, { alertName: 'SpeedLimit', params: { speed: 120 }, notify: { email: true, sms: false } });
    const depot = await zone(s);
    const yard = await zone(s, { name: 'Yard', type: 'circle', center: INSIDE, radius: 500 });
    await rule(s, { alertName: 'ForbiddenArea', params: { zone: depot } });
    await rule(s, { alertName: 'ForbiddenArea', params: { zone: yard }, notify: { email: true, sms: false } });
    await post(s, [loc(0, { speed: 50, ...OUTSIDE })]);
    await post(s, [loc(10, { speed: 130, ...INSIDE })]);
    const alerts = await alertsOf(s);
    const speeding = alerts.filter((a) => a.alertName === 'SpeedLimit').sort((a, b) => a.text.localeCompare(b.text));
    t.deepEqual(
      speeding.map((a) => a.text),
      ['Speed 130 km/h over the limit of 120 km/h', 'Speed 130 km/h over the limit of 90 km/h'],
      JSON.stringify(alerts),
    );
    t.not(speeding[0].suppressed.Email, 'notRequested', "the 120 rule's alert is notified by e-mail, as its rule asks");
    t.is(speeding[1].suppressed.Email, 'notRequested');
    const zones = alerts.filter((a) => a.alertName === 'ForbiddenArea');
    t.is(zones.length, 2, JSON.stringify(alerts));
    t.is(
      zones.filter((a) => a.suppressed.Email === 'notRequested').length,
      1,
      "only the Depot rule's alert is left unnotified",
    );
  });

  test(`rules (${backend}): positions stored but not yet evaluated when the process died are evaluated at the next start (alerts once); those received before the rule existed are not`, async (t) => {
    const clock = new ManualClock(new Date(T0));
    const first = await startServer(backend, { clock });
    t.teardown(() => first.stop());
    await createDevice(first, IMEI);
    await createDevice(first, 'quiet');
    await post(first, [loc(5, { speed: 150 })], 'quiet');
    clock.advance(1000);
    await rule(first, { alertName: 'SpeedLimit', params: { speed: 90 }, devices: [IMEI, 'quiet'] });
    await post(first, [loc(0, { speed: 50 })]);
    t.deepEqual(await alertsOf(first), []);
    // what a process killed right after its commit leaves: stored (and acknowledged), never evaluated
    const db = first.running.db;
    const stored = await db('locations').where({ device_id: IMEI }).first();
    const speeding = (seconds: number) => ({
      device_id: IMEI,
      date_time: T0 + seconds * 1000,
      server_time: T0 + 2000,
      data: JSON.stringify({ ...JSON.parse(stored.data), dateTime: at(seconds), speed: 130 }),
    });
    await db('locations').insert([speeding(10), speeding(20)]);
    await first.running.stop();

    const again = await startServer(backend, { clock, storageEnv: first.storageEnv });
    t.teardown(() => again.stop());
    const alerts = await alertsOf(again);
    t.is(alerts.length, 1, JSON.stringify(alerts));
    t.like(alerts[0], { alertName: 'SpeedLimit', dateTime: at(10), text: 'Speed 130 km/h over the limit of 90 km/h' });
    t.deepEqual(await alertsOf(again, 'quiet'), [], 'a position received before the rule existed is not evaluated');
    await again.running.stop();
    const third = await startServer(backend, { clock, storageEnv: first.storageEnv });
    t.teardown(() => third.stop());
    t.is((await alertsOf(third)).length, 1, 'a further start evaluates nothing again');
  });

  test(`rules (${backend}): after an upgrade from a version whose alerts named no rule, the catch-up at start raises nothing that version raised`, async (t) => {
    const clock = new ManualClock(new Date(T0));
    const first = await startServer(backend, { clock });
    t.teardown(() => first.stop());
    await createDevice(first, IMEI);
    await rule(first, { alertName: 'SpeedLimit', params: { speed: 90 } });
    await post(first, [
      loc(0, { speed: 50 }),
      loc(10, { speed: 130 }),
      loc(20, { speed: 40 }),
      loc(30, { speed: 140 }),
    ]);
    t.is((await alertsOf(first)).length, 2);
    await first.running.stop();
    // what the older version left when it was killed: its alerts without their rule, its last fix evaluated not yet saved
    const config = loadConfig(testEnv(first.storageEnv));
    const db = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    await db('alerts').update({ rule_id: null });
    await db('rule_devices').update({ last_fix: T0 });
    await closeDb(db);

    const again = await startServer(backend, { clock, storageEnv: first.storageEnv });
    t.teardown(() => again.stop());
    const alerts = await alertsOf(again);
    t.deepEqual(
      alerts.map((a) => a.dateTime),
      [at(10), at(30)],
      'each episode raised once',
    );
  });

  test(`rules (${backend}): a device silent for N minutes raises one Offline, as time passes with no position`, async (t) => {
    const s = await start(t, backend);
    await createDevice(s, IMEI);
    await rule(s, { alertName: 'Offline', params: { minutes: 10 } });
    await post(s, [loc(0)]);
    s.clock.advance(9 * 60_000);
    await s.running.rules.tick();
    t.deepEqual(await alertsOf(s), []);
    s.clock.advance(2 * 60_000);
    await s.running.rules.tick();
    await s.running.rules.tick();
    s.clock.advance(5 * 60_000);
    await s.running.rules.tick();
    const alerts = await alertsOf(s);
    t.is(alerts.length, 1, JSON.stringify(alerts));
    t.like(alerts[0], {
      alertName: 'Offline',
      text: `No report for 11 minutes (last at ${at(0).replace('.000Z', 'Z')})`,
      latitude: INSIDE.latitude,
    });
  });
}

test('rules: an episode and the last fix evaluated survive a restart: still speeding after it raises nothing, a late position neither', async (t) => {
  const clock = new ManualClock(new Date(T0));
  const first = await startServer('sqlite', { clock });
  t.teardown(() => first.stop());
  await createDevice(first, IMEI);
  await rule(first, { alertName: 'SpeedLimit', params: { speed: 90 } });
  await post(first, [loc(0, { speed: 120 }), loc(60, { speed: 50 }), loc(120, { speed: 130 })]);
  t.is((await alertsOf(first)).length, 2);
  await first.running.stop();
  const again = await startServer('sqlite', { clock, storageEnv: first.storageEnv });
  t.teardown(() => again.stop());
  await post(again, [loc(180, { speed: 140 }), loc(30, { speed: 50 }), loc(40, { speed: 150 })]);
  t.is(
    (await alertsOf(again)).length,
    2,
    'the episode that began before the restart goes on; the late positions are not evaluated',
  );
});

test('rules: a Teltonika entering a forbidden zone raises one ForbiddenArea; a late position inside after leaving raises nothing', async (t) => {
  const s = await start(t, 'sqlite', { TRACKGATE_TELTONIKA_PORT: '0' });
  await createDevice(s, IMEI);
  await rule(s, { alertName: 'ForbiddenArea', params: { zone: await zone(s) } });
  const { c } = await teltonikaSessionOf(t, s);
  const fix = (seconds: number, p: { latitude: number; longitude: number }): F.Fix => ({
    time: new Date(T0 + seconds * 1000),
    lat: p.latitude,
    lon: p.longitude,
    speedKmh: 30,
  });
  c.write(F.teltonikaAvl([fix(0, OUTSIDE), fix(10, INSIDE), fix(20, INSIDE)]));
  t.deepEqual(await c.read(4), Buffer.from('00000003', 'hex'));
  c.write(F.teltonikaAvl([fix(30, OUTSIDE), fix(40, OUTSIDE)]));
  await c.read(4);
  // the tracker's buffered backlog arrives late: inside, before it left
  c.write(F.teltonikaAvl([fix(25, INSIDE)]));
  await c.read(4);
  const alerts = await alertsOf(s);
  t.is(alerts.length, 1, JSON.stringify(alerts));
  t.like(alerts[0], { alertName: 'ForbiddenArea', text: 'Inside the forbidden zone "Depot"', dateTime: at(10) });
  const stored = await s.request('POST', `/api/devices/${IMEI}/locations`, {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
  });
  t.is(stored.body.locations.length, 6, 'the late position is stored all the same');
});

test('rules: an MQTT device over the limit raises SpeedLimit, shown on the live feed like any alert; a schedule outside its hours raises nothing', async (t) => {
  const s = await start(t, 'sqlite', { TRACKGATE_MQTT_PORT: '0' });
  await createDevice(s, IMEI, { mqttPassword: 'device-secret-1' });
  await createDevice(s, 'night-van', { mqttPassword: 'device-secret-1' });
  await rule(s, { alertName: 'SpeedLimit', params: { speed: 90 } });
  // Monday 10:00 UTC is outside a weekend-night schedule
  await rule(s, {
    alertName: 'SpeedLimit',
    devices: ['night-van'],
    params: { speed: 90 },
    schedule: { days: [6, 7], from: '22:00', to: '06:00' },
  });
  const url = `mqtt://127.0.0.1:${s.running.ports.mqtt}`;
  const watcher = await mqtt.connectAsync(url, {
    username: 'admin',
    password: s.adminToken,
    clientId: 'admin-rules',
    reconnectPeriod: 0,
  });
  t.teardown(() => watcher.endAsync(true));
  const live: { topic: string; body: { alertName: string } }[] = [];
  watcher.on('message', (topic, payload) => live.push({ topic, body: JSON.parse(payload.toString()) }));
  await watcher.subscribeAsync('live/+/alerts');
  for (const id of [IMEI, 'night-van']) {
    const d = await mqtt.connectAsync(url, {
      username: id,
      password: 'device-secret-1',
      clientId: `${id}-pub`,
      reconnectPeriod: 0,
    });
    t.teardown(() => d.endAsync(true));
    await d.publishAsync(`devices/${id}/locations`, JSON.stringify([loc(0, { speed: 80 }), loc(10, { speed: 120 })]), {
      qos: 1,
    });
  }
  t.is((await alertsOf(s)).length, 1);
  t.deepEqual(await alertsOf(s, 'night-van'), [], 'outside its schedule');
  await until('the rule alert on the live feed', () => live.length >= 1);
  t.is(live[0].topic, `live/${IMEI}/alerts`);
  t.is(live[0].body.alertName, 'SpeedLimit');
});

test("rules: a rule's command goes to the device through the commands path when the rule fires", async (t) => {
  const s = await start(t, 'sqlite', { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_COMMAND_WAIT: '1' });
  await createDevice(s, IMEI);
  await rule(s, {
    alertName: 'ForbiddenArea',
    params: { zone: await zone(s) },
    command: { command: 'setdigout 1', delaySeconds: 0 },
  });
  const { c } = await teltonikaSessionOf(t, s);
  c.write(F.teltonikaAvl([{ time: new Date(T0), lat: INSIDE.latitude, lon: INSIDE.longitude, speedKmh: 10 }]));
  t.deepEqual(await c.read(4), Buffer.from('00000001', 'hex'));
  t.is(await readTeltonikaCommand(c), 'setdigout 1');
  const commands = (await s.request('GET', `/api/devices/${IMEI}/commands`, { token: s.adminToken })).body.commands;
  t.like(commands[0], { command: 'setdigout 1', status: 'sent' });
});

test("rules: a rule's command with a delay is sent when its time comes, by the time passing, once", async (t) => {
  const s = await start(t, 'sqlite', { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_COMMAND_WAIT: '1' });
  await createDevice(s, IMEI);
  await rule(s, {
    alertName: 'ForbiddenArea',
    params: { zone: await zone(s) },
    command: { command: 'setdigout 1', delaySeconds: 30 },
  });
  const { c } = await teltonikaSessionOf(t, s);
  c.write(F.teltonikaAvl([{ time: new Date(T0), lat: INSIDE.latitude, lon: INSIDE.longitude, speedKmh: 10 }]));
  t.deepEqual(await c.read(4), Buffer.from('00000001', 'hex'));
  t.is((await alertsOf(s)).length, 1);
  const listed = async () =>
    (await s.request('GET', `/api/devices/${IMEI}/commands`, { token: s.adminToken })).body.commands as {
      command: string;
    }[];
  s.clock.advance(20_000);
  await s.running.rules.tick();
  t.deepEqual(await listed(), [], 'not before its delay');
  s.clock.advance(15_000);
  await s.running.rules.tick();
  t.is(await readTeltonikaCommand(c), 'setdigout 1');
  await s.running.rules.tick();
  t.is((await listed()).length, 1, 'sent once');
});

if (await postgresAvailable()) {
  test('rules: two instances on PostgreSQL and Redis raise each alert once (the same positions through both, and the time passing on both)', async (t) => {
    const clock = new ManualClock(new Date(T0));
    const [a, b] = await startPair(t, {}, clock);
    await createDevice(a, IMEI);
    await rule(a, { alertName: 'SpeedLimit', params: { speed: 90 } });
    await rule(a, { alertName: 'Offline', params: { minutes: 5 } });
    const batch = [loc(0, { speed: 50 }), loc(10, { speed: 120 }), loc(20, { speed: 130 })];
    await Promise.all([post(a, batch), post(b, batch)]);
    await Promise.all([a.running.rules.idle(), b.running.rules.idle()]);
    clock.advance(6 * 60_000);
    await Promise.all([a.running.rules.tick(), b.running.rules.tick()]);
    await Promise.all([a.running.rules.tick(), b.running.rules.tick()]);
    const alerts = await alertsOf(a);
    t.deepEqual(alerts.map((x) => x.alertName).sort(), ['Offline', 'SpeedLimit'], JSON.stringify(alerts));
  });
}

async function teltonikaSessionOf(t: T, s: TestServer) {
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  return { c };
}
