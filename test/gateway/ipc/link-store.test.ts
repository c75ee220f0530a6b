import test from 'ava';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'net-ipc';
import { startServer } from '../../helpers/server.js';
import { silentLogger, type Logger } from '../../../core/logger.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { systemClock } from '../../../core/clock.js';
import type { Location } from '../../../core/model/location.js';
import type { Report } from '../../../core/model/report.js';
import type { StoredLocation } from '../../../core/events/event-bus.js';
import { startCoreLink } from '../../../gateway/ipc/core-link.server.js';
import { connectCoreLink } from '../../../gateway/ipc/core-link.client.js';
import type { Answer, CoreNote, GatewayRequest } from '../../../gateway/ipc/ipc.messages.js';

const secret = 'a-secret-of-this-test-0123456789';
const sockets = (tag: string) => path.join(os.tmpdir(), `trackgate-test-${process.pid}-${Date.now()}-${tag}.sock`);

/** A report as a Teltonika decoder gives it, with an alarm: a position, attributes and an alert. */
function report(fixMs: number): Report {
  return {
    fixTime: new Date(fixMs),
    location: {
      latitudeDeg: 52.1,
      longitudeDeg: 4.3,
      valid: true,
      speedKmh: 42.5,
      courseDeg: 181,
      altitudeM: 12,
      satellites: 9,
    },
    alarms: ['sos'],
    attributes: { io239: 1, power: 12.61, batteryLevel: 80, odometer: 123_456, ignition: true, note: 'a\u0000b' },
  };
}

async function setup(t: import('ava').ExecutionContext, ids: string[], logger: Logger = silentLogger) {
  const s = await startServer('sqlite', { env: { TRACKGATE_LICENSES: '10' } });
  t.teardown(() => s.stop());
  for (const id of ids)
    t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } })).status, 201);
  const socketPath = sockets('s');
  const link = await startCoreLink({ path: socketPath, secret, ...s.running.services, logger });
  t.teardown(() => link.close());
  return { s, socketPath };
}

/** A gateway of its own making that holds the secret: sends any request in a batch, as a gateway process does, and resolves with its answer. */
async function rawGateway(
  t: import('ava').ExecutionContext,
  socketPath: string,
): Promise<(request: GatewayRequest) => Promise<Answer>> {
  const client = new Client({ path: socketPath, messagepack: true, reconnect: false });
  await client.connect({ secret, pid: process.pid });
  t.teardown(() => client.close());
  let nextId = 1;
  const waiting = new Map<number, (a: Answer) => void>();
  client.on('message', (m: CoreNote) => {
    if (m.t === 'answers') for (const [i, a] of m.answers) waiting.get(i)?.(a);
  });
  return (request) =>
    new Promise<Answer>((resolve) => {
      const i = nextId++;
      waiting.set(i, resolve);
      void client.send({ t: 'batch', items: [{ id: i, request }] });
    });
}

const storedData = async (s: Awaited<ReturnType<typeof startServer>>, id: string) =>
  ((await s.running.db('locations').where('device_id', id).orderBy('date_time').pluck('data')) as string[]).map(
    (d) => JSON.parse(d) as Location,
  );

test('gateway.ipc store: a gateway process runs the steps and sends each position as its stored JSON: the core stores what it would have made itself, raises the alarm, and its listeners get the location', async (t) => {
  const [viaLink, inCore] = ['356307042441031', '356307042441032'];
  const { s, socketPath } = await setup(t, [viaLink, inCore]);
  const seen: StoredLocation[] = [];
  t.teardown(s.running.services.events.onLocations((items) => seen.push(...items)));
  const client = connectCoreLink({
    path: socketPath,
    secret,
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => client.close());
  await client.ready();

  const fix = Date.now() - 60_000;
  const directory = s.running.services.directory;
  await client.ingest.submit((await directory.find(viaLink))!, 'teltonika', [report(fix), report(fix + 1000)]);
  await s.running.services.ingest.submit((await directory.find(inCore))!, 'teltonika', [
    report(fix),
    report(fix + 1000),
  ]);

  const withoutServerTime = (l: Location) => ({ ...l, serverTime: undefined });
  const [linked, direct] = [await storedData(s, viaLink), await storedData(s, inCore)];
  t.is(linked.length, 2);
  t.deepEqual(linked.map(withoutServerTime), direct.map(withoutServerTime), 'the same stored JSON either way');
  t.is(linked[0].attributes?.note, 'ab', 'the steps ran in the gateway process (NUL taken out)');
  t.true(typeof linked[0].serverTime === 'string' && Math.abs(Date.parse(linked[0].serverTime) - Date.now()) < 60_000);
  const last = (
    (await s.request('GET', `/api/devices/${viaLink}/lastLocation`, { token: s.adminToken })).body as {
      lastLocation: Location;
    }
  ).lastLocation;
  t.is(last.dateTime, new Date(fix + 1000).toISOString(), 'the last location moved forward');
  const alerts = await s.running.db('alerts').where('device_id', viaLink).count({ n: '*' });
  t.is(Number((alerts as { n: number }[])[0].n), 2, "each report's alarm raised an alert");
  const mine = seen.filter((i) => i.deviceId === viaLink);
  t.deepEqual(
    mine.map((i) => i.location),
    linked,
    'listeners read the location as stored',
  );
});

test('gateway.ipc store: the core refuses a store request of another shape and stores nothing of it; it drops a fix time too far ahead of its own clock (or past any date) and stores the rest', async (t) => {
  const id = '356307042441033';
  const { s, socketPath } = await setup(t, [id]);
  const ask = await rawGateway(t, socketPath);
  const now = Date.now();
  const json = (ms: number) =>
    JSON.stringify({ dateTime: new Date(ms).toISOString(), latitude: 1, longitude: 2, protocol: 'teltonika' });
  const store = (rows: unknown, extra: Record<string, unknown> = {}) =>
    ask({
      t: 'store',
      deviceId: id,
      protocol: 'teltonika',
      serverTime: now,
      rows,
      alerts: [],
      ...extra,
    } as GatewayRequest);

  const refused: [string, Answer][] = [
    ['a row whose location is not text', await store([[now - 5000, { latitude: 1 }]])],
    ['a fix time that is not an integer', await store([[now - 4000.5, json(now)]])],
    ['rows that are not an array', await store({ 0: [now, json(now)] })],
    ['too many rows', await store(Array.from({ length: 5000 }, (_, i) => [now - i * 1000, json(now - i * 1000)]))],
    ['a location too long', await store([[now - 3000, `{"a":"${'x'.repeat(70_000)}"}`]])],
    ['an alert without a name', await store([[now - 2000, json(now - 2000)]], { alerts: [{ text: 'no name' }] })],
  ];
  for (const [what, a] of refused) t.false(a.ok, `${what} is refused`);
  t.is((await storedData(s, id)).length, 0, 'nothing of a refused request is stored');

  const ahead = now + 30 * 3600_000;
  // 9e15 ms: a whole number no date has (past year 275760)
  const a = await store([
    [now - 1000, json(now - 1000)],
    [ahead, json(ahead)],
    [9e15, json(now)],
  ]);
  t.true(a.ok, JSON.stringify(a));
  t.deepEqual(
    (await storedData(s, id)).map((l) => Date.parse(l.dateTime)),
    [now - 1000],
    'the fixes 30 h ahead of the core and past any date are dropped, the other stored',
  );
});

test('gateway.ipc store: a gateway with the secret cannot write what the ingest steps would not: a latitude of 999, a fix in 2099, text that is not JSON, a location dated other than its row, a field or attribute of another shape, a totalDistance (the core counts it), an alert in 2099 are logged and not stored, the good rows beside them are, and what was stored before is unharmed', async (t) => {
  const id = '356307042441034';
  const logger = capturingLogger();
  const { s, socketPath } = await setup(t, [id], logger);
  const ask = await rawGateway(t, socketPath);
  const now = Date.now();
  const at = (ms: number) => new Date(ms).toISOString();
  const location = (ms: number, extra: Record<string, unknown> = {}) => ({
    dateTime: at(ms),
    latitude: 52.1,
    longitude: 4.3,
    speed: 10,
    alerts: [],
    attributes: { io239: 1 },
    serverTime: at(now),
    protocol: 'teltonika',
    ...extra,
  });
  const row = (ms: number, extra: Record<string, unknown> = {}): [number, string] => [
    ms,
    JSON.stringify(location(ms, extra)),
  ];
  const store = (rows: [number, string][], alerts: unknown[] = [], extra: Record<string, unknown> = {}) =>
    ask({ t: 'store', deviceId: id, protocol: 'teltonika', serverTime: now, rows, alerts, ...extra } as GatewayRequest);

  const before = now - 60_000;
  t.true((await store([row(before)])).ok, 'a good row is stored');
  const y2099 = Date.UTC(2099, 0, 1);
  const bad: [string, [number, string]][] = [
    ['latitude', row(now - 9000, { latitude: 999 })],
    ['fix time', row(y2099, { latitude: 999 })],
    ['not JSON', [now - 8000, '{not json at all}']],
    ['dated other than its row', [now - 7000, JSON.stringify(location(y2099))]],
    ['a string latitude', row(now - 6000, { latitude: '52.1' })],
    ['a field of no location', row(now - 5000, { evil: true })],
    ['nested attributes', row(now - 4000, { attributes: { a: { b: 1 } } })],
    ['a negative speed', row(now - 3000, { speed: -5 })],
    ['another protocol', row(now - 2000, { protocol: 'gt06' })],
    ['a JSON array', [now - 1500, '[1,2]']],
    ['a NUL character', row(now - 1400, { attributes: { note: 'a\u0000b' } })],
    ['attributes too long', row(now - 1300, { attributes: { note: 'x'.repeat(17_000) } })],
    ['a distance of its own', row(now - 1200, { totalDistance: 1e9 })],
  ];
  const good = now - 1000;
  const alerts = [
    {
      alertName: 'SOSButton',
      dateTime: at(good),
      latitude: 52.1,
      longitude: 4.3,
      text: 'SOSButton reported by the tracker (teltonika)',
      alerts: ['SOSButton'],
    },
    { alertName: 'SOSButton', dateTime: at(y2099), latitude: 52.1, longitude: 4.3 },
    { alertName: 'Vibration', dateTime: at(good), latitude: 999, longitude: 4.3 },
  ];
  const a = await store([...bad.map(([, r]) => r), row(good)], alerts);
  t.true(a.ok, JSON.stringify(a));

  const stored = await storedData(s, id);
  t.deepEqual(
    stored.map((l) => Date.parse(l.dateTime)),
    [before, good],
    'only the good rows are stored',
  );
  const lines = logger.at('warn', 'positions that fail the checks are not stored');
  t.is(lines.length, 1, 'one line for the request');
  t.is(lines[0].count, bad.length, JSON.stringify(lines[0]));
  const reasons = (lines[0].dropped as string[]).join('\n');
  for (const needle of [
    'latitude must be a number from -90 to 90',
    'fix time 2099-01-01T00:00:00.000Z',
    'not JSON',
    "is not the row's fix time",
    'latitude must be a number',
    'evil is not a field',
    'attributes must be an object of strings',
    'speed must be a number of at least 0',
    'protocol gt06',
    'not a JSON object',
    'NUL character',
    'attributes must be at most 16384 characters',
    'totalDistance is not a field',
  ]) {
    t.true(reasons.includes(needle), `${needle} in ${reasons}`);
  }
  const raised = (await s.running.db('alerts').where('device_id', id).select('alert_name', 'date_time')) as {
    alert_name: string;
    date_time: number;
  }[];
  t.deepEqual(
    raised.map((r) => r.alert_name),
    ['SOSButton'],
    'only the good alert is raised',
  );
  t.is(logger.at('warn', 'alerts that fail the checks are not raised')[0]?.count, 2);

  // the request as a whole: received in 2099, or under a protocol no decoder has
  t.false((await store([row(good + 100)], [], { serverTime: y2099 })).ok, 'a receive time in 2099 is refused');
  t.false(
    (await store([row(good + 200)], [], { protocol: 'x'.repeat(1000) })).ok,
    'a protocol of 1000 characters is refused',
  );

  // what the REST API answers for the device is whole
  const last = await s.request('GET', `/api/devices/${id}/lastLocation`, { token: s.adminToken });
  t.is(last.status, 200);
  t.is(
    (last.body as { lastLocation: Location }).lastLocation.dateTime,
    at(good),
    'the last location is the good one, not 2099',
  );
  const history = await s.request('POST', `/api/devices/${id}/locations`, {
    token: s.adminToken,
    body: { from: at(now - 3600_000), to: at(now + 3600_000) },
  });
  t.is(history.status, 200, JSON.stringify(history.body));
  t.is((history.body as { locations: Location[] }).locations.length, 2);
});

test('gateway.ipc resolve: a gateway is told of a device only what its listeners use (id, account, model, decoder settings, expiry), not its name, tags, alert e-mails and phones, limits or MQTT password', async (t) => {
  const id = '356307042441035';
  const { s, socketPath } = await setup(t, []);
  const created = await s.request('POST', '/api/devices', {
    token: s.adminToken,
    body: {
      id,
      name: 'Truck 1',
      alertEmails: ['owner@example.com'],
      alertPhones: ['+34600000000'],
      tags: { driver: 'Ana' },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const ask = await rawGateway(t, socketPath);
  const a = await ask({ t: 'resolve', identifier: id, protocol: 'teltonika', remote: null });
  if (!a.ok) return t.fail(JSON.stringify(a));
  const r = a.value as { status: string; device: Record<string, unknown> };
  t.is(r.status, 'ok');
  t.deepEqual(Object.keys(r.device).sort(), ['accountId', 'expiresAt', 'id', 'model', 'protocolOptions']);
  t.is(r.device.id, id);
  t.false(JSON.stringify(r).includes('owner@example.com'));
  // and the listeners work with it: a gateway process stores through the link
  const client = connectCoreLink({
    path: socketPath,
    secret,
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => client.close());
  await client.ready();
  const resolved = await client.directory.resolve(id, 'teltonika', null);
  if (resolved.status !== 'ok') return t.fail(resolved.status);
  await client.ingest.submit(resolved.device, 'teltonika', [report(Date.now() - 1000)]);
  t.is((await storedData(s, id)).length, 1);
});
