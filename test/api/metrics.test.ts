import test, { type ExecutionContext } from 'ava';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { createDevice, startServer, type TestServer } from '../helpers/server.js';
import { backends, type Backend } from '../helpers/backends.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';
import * as F from '../helpers/frames.js';

const BACKENDS = await backends();
const GATEWAY_ENV = { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_GT06_PORT: '0', TRACKGATE_OSMAND_PORT: '0' };
const IMEI = '356307042441013';
/** another device: a device's new connection replaces its older one, whatever the protocol */
const IMEI2 = '356307042441021';
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const fix = (i: number): F.Fix => ({
  time: new Date(T0 + i * 1000),
  lat: 40.4168,
  lon: -3.7038,
  speedKmh: 42,
  course: 90,
});

async function start(
  t: ExecutionContext,
  env: Record<string, string> = {},
  backend: Backend = 'sqlite',
): Promise<TestServer> {
  const s = await startServer(backend, { env });
  t.teardown(() => s.stop());
  return s;
}

const device = (s: TestServer, body: Record<string, unknown>) =>
  createDevice(s, String(body.id), { alertEmails: [], ...body });

/** One scrape, parsed: `value(name, labels)` is the sample with exactly those labels (0 when there is none). */
interface Scrape {
  status: number;
  contentType: string | null;
  text: string;
  value(name: string, labels?: Record<string, string>): number;
  has(name: string, labels?: Record<string, string>): boolean;
}

async function scrape(s: TestServer): Promise<Scrape> {
  const res = await fetch(`${s.base}/metrics`);
  const text = await res.text();
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.find(
      (x) =>
        x.name === name &&
        Object.keys(x.labels).length === Object.keys(labels).length &&
        Object.entries(labels).every(([k, v]) => x.labels[k] === v),
    );
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    text,
    value: (name, labels) => find(name, labels)?.value ?? 0,
    has: (name, labels) => find(name, labels) !== undefined,
  };
}

test('metrics: GET /metrics answers the Prometheus text format 0.0.4 without a token; every name starts with trackgate_', async (t) => {
  const s = await start(t);
  const m = await scrape(s);
  t.is(m.status, 200);
  t.regex(m.contentType ?? '', /^text\/plain; version=0\.0\.4/);
  const names = [...m.text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].map((x) => x[1]);
  t.true(names.length > 20, m.text.slice(0, 500));
  t.deepEqual(
    names.filter((n) => !n.startsWith('trackgate_')),
    [],
  );
  const sampleNames = m.text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(/[{ ]/)[0]);
  t.deepEqual(
    sampleNames.filter((n) => !n.startsWith('trackgate_')),
    [],
  );
  for (const name of [
    'trackgate_tracker_frames_total',
    'trackgate_positions_stored_total',
    'trackgate_tracker_ack_seconds',
    'trackgate_ingest_batch_rows',
    'trackgate_mqtt_clients',
    'trackgate_mqtt_publishes_total',
    'trackgate_http_requests_total',
    'trackgate_http_request_duration_seconds',
    'trackgate_outbox_pending',
    'trackgate_process_cpu_user_seconds_total',
    'trackgate_nodejs_eventloop_lag_seconds',
  ]) {
    t.true(names.includes(name), `${name} is exposed`);
  }
  // docs/operations.md "Metrics" lists every one of ours (the process's are listed as trackgate_process_*, trackgate_nodejs_*)
  const readme = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const ours = names.filter((n) => !/^trackgate_(process|nodejs)_/.test(n));
  t.deepEqual(
    ours.filter((n) => !readme.includes(`| \`${n}\` |`)),
    [],
    'each in the table of docs/operations.md',
  );
  // the document names it, outside the token scheme
  const doc = (await s.request('GET', '/api/openapi.json')).body;
  t.deepEqual(doc.paths['/metrics'].get.security, []);
  t.truthy(doc.paths['/metrics'].get.responses['200'].content['text/plain; version=0.0.4']);
});

test('metrics: tracker frames decoded, malformed and of unknown devices, positions stored and acknowledgements move by exactly what was sent', async (t) => {
  const s = await start(t, GATEWAY_ENV);
  await device(s, { id: IMEI });
  await device(s, { id: IMEI2 });
  const before = await scrape(s);
  const frames = (protocol: string, outcome: string) => ({ protocol, outcome });

  // Teltonika: a login and one AVL frame of 3 records, acknowledged; the connection is counted while open
  const c = await TrackerClient.connect(s.running.ports.teltonika);
  t.teardown(() => c.end());
  c.write(F.teltonikaLogin(IMEI));
  t.deepEqual(await c.read(1), Buffer.from([1]));
  c.write(F.teltonikaAvl([fix(0), fix(1), fix(2)]));
  t.deepEqual(await c.read(4), Buffer.from('00000003', 'hex'));
  // GT06: a login, a truncated position (malformed: nothing answered), a good position
  const g = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => g.end());
  g.write(F.gt06Login(IMEI2, 1));
  t.deepEqual(await g.read(10), F.gt06Ack(0x01, 1));
  g.write(Buffer.from('7878082201020300049999' + '0d0a', 'hex'));
  g.write(F.gt06Position(fix(3), 5));
  t.deepEqual(await g.read(10), F.gt06Ack(0x22, 5));
  // a tracker no device has: its login is decoded, refused and counted as unknown
  const u = await TrackerClient.connect(s.running.ports.teltonika);
  t.teardown(() => u.end());
  u.write(F.teltonikaLogin('111111111111111'));
  t.deepEqual(await u.read(1), Buffer.from([0]));
  // Teltonika over UDP: one datagram stored and acknowledged, one that cannot be decoded
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
  sock.send(Buffer.from('00050000ffff', 'hex'), s.running.ports['teltonika/udp'], '127.0.0.1');
  sock.send(F.teltonikaDatagram(IMEI, 7, [fix(20)]), s.running.ports['teltonika/udp'], '127.0.0.1');
  t.deepEqual(await reply, Buffer.from('00050000010701', 'hex'));
  // OsmAnd: one position stored (200), one request without an id (malformed, 400)
  t.is(
    (
      await fetch(
        `http://127.0.0.1:${s.running.ports.osmand}/?id=${IMEI}&lat=40.5&lon=-3.5&timestamp=${Math.floor(T0 / 1000) + 10}`,
      )
    ).status,
    200,
  );
  t.is((await fetch(`http://127.0.0.1:${s.running.ports.osmand}/?lat=40.5&lon=-3.5`)).status, 400);

  const after = await scrape(s);
  const delta = (name: string, labels?: Record<string, string>) =>
    after.value(name, labels) - before.value(name, labels);
  t.is(delta('trackgate_tracker_frames_total', frames('teltonika', 'decoded')), 3);
  t.is(delta('trackgate_tracker_frames_total', frames('teltonika', 'unknown')), 1);
  t.is(delta('trackgate_tracker_frames_total', frames('teltonika', 'malformed')), 1);
  t.is(delta('trackgate_tracker_frames_total', frames('gt06', 'decoded')), 2);
  t.is(delta('trackgate_tracker_frames_total', frames('gt06', 'malformed')), 1);
  t.is(delta('trackgate_tracker_frames_total', frames('gt06', 'unknown')), 0);
  t.is(delta('trackgate_tracker_frames_total', frames('osmand', 'decoded')), 1);
  t.is(delta('trackgate_tracker_frames_total', frames('osmand', 'malformed')), 1);
  t.is(delta('trackgate_positions_stored_total', { protocol: 'teltonika' }), 4);
  t.is(delta('trackgate_positions_stored_total', { protocol: 'gt06' }), 1);
  t.is(delta('trackgate_positions_stored_total', { protocol: 'osmand' }), 1);
  t.is(delta('trackgate_ingest_batch_rows_sum'), 6, 'every stored row went through a group-commit transaction');
  t.true(delta('trackgate_ingest_batch_rows_count') >= 4 && delta('trackgate_ingest_batch_rows_count') <= 6);
  // acknowledgements written: Teltonika login, AVL frame and datagram, GT06 login and position, the OsmAnd 200
  t.is(delta('trackgate_tracker_ack_seconds_count', { protocol: 'teltonika' }), 3);
  t.is(delta('trackgate_tracker_ack_seconds_count', { protocol: 'gt06' }), 2);
  t.is(delta('trackgate_tracker_ack_seconds_count', { protocol: 'osmand' }), 1);
  t.is(
    after.value('trackgate_tracker_ack_seconds_bucket', { protocol: 'gt06', le: '+Inf' }),
    after.value('trackgate_tracker_ack_seconds_count', { protocol: 'gt06' }),
  );
  const ackSeconds = after.value('trackgate_tracker_ack_seconds_sum', { protocol: 'teltonika' });
  t.true(ackSeconds > 0 && ackSeconds < 10, `${ackSeconds} s`);
  t.is(after.value('trackgate_tracker_connections', { protocol: 'teltonika' }), 2);
  t.is(after.value('trackgate_tracker_connections', { protocol: 'gt06' }), 1);

  c.end();
  u.end();
  g.end();
  await until(
    'teltonika connections counted closed',
    async () => (await scrape(s)).value('trackgate_tracker_connections', { protocol: 'teltonika' }) === 0,
  );
  t.is((await scrape(s)).value('trackgate_tracker_connections', { protocol: 'gt06' }), 0);
});

test('metrics: REST requests are counted by route pattern, method and status, never by raw path', async (t) => {
  const s = await start(t);
  await device(s, { id: 'dev-a' });
  const before = await scrape(s);
  t.is((await s.request('GET', '/api/devices/dev-a', { token: s.adminToken })).status, 200);
  t.is((await s.request('GET', '/api/devices/dev-b', { token: s.adminToken })).status, 404);
  t.is((await s.request('GET', '/api/devices/dev-c', { token: s.adminToken })).status, 404);
  t.is((await s.request('GET', '/api/devices/dev-a')).status, 401);
  t.is((await s.request('GET', '/api/no-such-thing/42')).status, 404);
  const after = await scrape(s);
  const route = '/api/devices/:deviceId';
  const delta = (labels: Record<string, string>) =>
    after.value('trackgate_http_requests_total', labels) - before.value('trackgate_http_requests_total', labels);
  t.is(delta({ route, method: 'GET', status: '200' }), 1);
  t.is(delta({ route, method: 'GET', status: '404' }), 2);
  t.is(delta({ route, method: 'GET', status: '401' }), 1);
  t.is(delta({ route: '(unmatched)', method: 'GET', status: '404' }), 1);
  t.is(
    after.value('trackgate_http_request_duration_seconds_count', { route, method: 'GET' }) -
      before.value('trackgate_http_request_duration_seconds_count', { route, method: 'GET' }),
    4,
  );
  t.false(/dev-a|dev-b|no-such-thing/.test(after.text), 'no raw path in a label');
  t.true(
    after.has('trackgate_http_requests_total', { route: '/api/Auth/Token', method: 'POST', status: '200' }),
    'the token request of the test helper',
  );
});

for (const backend of BACKENDS) {
  test(`metrics (${backend}): MQTT clients connected and device publishes by topic kind; the outbox backlog is read from storage`, async (t) => {
    // an SMTP server that refuses: the alert's e-mail waits in the outbox
    const s = await start(
      t,
      { TRACKGATE_MQTT_PORT: '0', TRACKGATE_SMTP_URL: 'smtp://127.0.0.1:1', TRACKGATE_NOTIFY_TIMEOUT_MS: '500' },
      backend,
    );
    await device(s, { id: 'dev1', mqttPassword: 'device-secret-1', alertEmails: ['ops@example.com'] });
    t.is((await scrape(s)).value('trackgate_mqtt_clients'), 0);
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${s.running.ports.mqtt}`, {
      username: 'dev1',
      password: 'device-secret-1',
      clientId: 'dev1',
      reconnectPeriod: 0,
      connectTimeout: 5000,
    });
    t.teardown(() => client.endAsync(true).catch(() => {}));
    const before = await scrape(s);
    t.is(before.value('trackgate_mqtt_clients'), 1);
    await client.publishAsync(
      'devices/dev1/locations',
      JSON.stringify([
        { dateTime: '2026-03-01T10:00:00Z', latitude: 40.4, longitude: -3.7 },
        { dateTime: '2026-03-01T10:01:00Z', latitude: 40.5, longitude: -3.7 },
      ]),
      { qos: 1 },
    );
    await client.publishAsync(
      'devices/dev1/alerts',
      JSON.stringify({ alertName: 'SOSButton', dateTime: '2026-03-01T10:02:00Z' }),
      { qos: 1 },
    );
    const after = await scrape(s);
    t.is(
      after.value('trackgate_mqtt_publishes_total', { topic: 'locations' }) -
        before.value('trackgate_mqtt_publishes_total', { topic: 'locations' }),
      1,
    );
    t.is(
      after.value('trackgate_mqtt_publishes_total', { topic: 'alerts' }) -
        before.value('trackgate_mqtt_publishes_total', { topic: 'alerts' }),
      1,
    );
    t.is(
      after.value('trackgate_mqtt_publish_outcomes_total', { outcome: 'accepted' }) -
        before.value('trackgate_mqtt_publish_outcomes_total', { outcome: 'accepted' }),
      2,
    );
    t.is(
      after.value('trackgate_positions_stored_total', { protocol: 'mqtt' }) -
        before.value('trackgate_positions_stored_total', { protocol: 'mqtt' }),
      2,
    );

    const pending = async () =>
      Number(((await s.running.db('outbox').where('status', 'pending').count({ n: '*' }).first()) as { n: number }).n);
    t.is(await pending(), 1, 'the alert e-mail waits');
    t.is(after.value('trackgate_outbox_pending'), 1);

    await client.endAsync();
    await until('the MQTT client counted gone', async () => (await scrape(s)).value('trackgate_mqtt_clients') === 0);
    t.pass('the gauge went back to 0');
  });
}

test('metrics: TRACKGATE_METRICS=off answers 404 at /metrics and leaves it out of the OpenAPI document', async (t) => {
  const s = await start(t, { TRACKGATE_METRICS: 'off' });
  const m = await scrape(s);
  t.is(m.status, 404);
  t.false(m.text.includes('trackgate_'));
  t.is((await s.request('GET', '/api/openapi.json')).body.paths['/metrics'], undefined);
  t.is((await s.request('GET', '/api/health')).status, 200, 'everything else works as before');
});
