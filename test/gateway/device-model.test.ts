/**
 * The device record's `model` reaches the decoders through real sockets: device record -> gateway
 * -> the decoder's model branch -> the stored location and alert.
 */
import test from 'ava';
import dgram from 'node:dgram';
import { createDevice, startTestServer, type Teardown, type TestServer } from '../helpers/server.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import { capturingLogger, type CapturingLogger } from '../helpers/capture-logger.js';
import { frameBytes, loadVectors } from '../helpers/vectors.js';
import * as F from '../helpers/frames.js';

const PORTS = { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_GT06_PORT: '0', TRACKGATE_JT808_PORT: '0' };
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const fix = (i: number): F.Fix => ({
  time: new Date(T0 + i * 1000),
  lat: 40.4168,
  lon: -3.7038,
  speedKmh: 42,
  course: 90,
});
/** Teltonika IO 247: a crash on FM models (Traccar's `accident`), something else on others */
const CRASH = { 247: 1 };

const start = (t: Teardown, logger?: CapturingLogger) => startTestServer(t, { env: PORTS, logger });

const RANGE = { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' };

async function alertNames(s: TestServer, id: string): Promise<string[]> {
  const r = await s.request('POST', `/api/devices/${id}/alerts`, { token: s.adminToken, body: RANGE });
  return r.body.alerts.map((a: { alertName: string }) => a.alertName);
}

async function locations(
  s: TestServer,
  id: string,
): Promise<{ dateTime: string; alerts?: string[]; attributes?: Record<string, unknown> }[]> {
  return (await s.request('POST', `/api/devices/${id}/locations`, { token: s.adminToken, body: RANGE })).body.locations;
}

test('devices: model is stored and shown, cleared by a PUT without it, and checked', async (t) => {
  const s = await start(t);
  await createDevice(s, '356307042441013', { model: 'FMB920' });
  const path = '/api/devices/356307042441013';
  t.is((await s.request('GET', path, { token: s.adminToken })).body.device.model, 'FMB920');
  const patched = await s.request('PATCH', path, {
    token: s.adminToken,
    body: [{ op: 'replace', path: '/model', value: ' VL103 ' }],
  });
  t.is(patched.body.device.model, 'VL103', 'trimmed');
  t.is((await s.request('PUT', path, { token: s.adminToken, body: { name: 'x' } })).body.device.model, null);
  for (const model of ['', ' ', 'x'.repeat(65), 7]) {
    const bad = await s.request('PATCH', path, {
      token: s.adminToken,
      body: [{ op: 'replace', path: '/model', value: model }],
    });
    t.is(bad.status, 400, JSON.stringify(model));
  }
  const doc = (await s.request('GET', '/api/openapi.json')).body;
  t.truthy(doc.components.schemas.Device.properties.model.description, 'documented in OpenAPI');
});

test("gateway.teltonika: an FM device's crash IO becomes an Accident alert; on a device without a model it stays io247", async (t) => {
  const s = await start(t);
  await createDevice(s, '356307042441013', { model: 'FMB920' });
  await createDevice(s, '356307042441014');
  for (const imei of ['356307042441013', '356307042441014']) {
    const c = await TrackerClient.connect(s.running.ports.teltonika);
    t.teardown(() => c.end());
    c.write(F.teltonikaLogin(imei));
    t.deepEqual(await c.read(1), Buffer.from([0x01]));
    c.write(F.teltonikaAvl([fix(0)], CRASH));
    t.deepEqual(await c.read(4), Buffer.from('00000001', 'hex'));
  }
  t.deepEqual(await alertNames(s, '356307042441013'), ['Accident']);
  t.like((await locations(s, '356307042441013'))[0], { alerts: ['Accident'] });
  t.deepEqual(await alertNames(s, '356307042441014'), []);
  t.is((await locations(s, '356307042441014'))[0].attributes?.io247, 1);
});

test("gateway.teltonika: a UDP datagram, decoded before its device is known, is stored as decoded for the device's model", async (t) => {
  const s = await start(t);
  await createDevice(s, '356307042441013', { model: 'FMB920' });
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
  sock.send(F.teltonikaDatagram('356307042441013', 7, [fix(0)], CRASH), s.running.ports['teltonika/udp'], '127.0.0.1');
  t.deepEqual(await reply, Buffer.from('00050000010701', 'hex'));
  t.deepEqual(await alertNames(s, '356307042441013'), ['Accident']);
});

test('gateway.gt06: alarm 0x09 is Tow on a VL103 and Vibration once the model is removed, from the next frame on', async (t) => {
  const s = await start(t);
  const imei = '356307042441013';
  await createDevice(s, imei, { model: 'vl103' });
  const c = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => c.end());
  c.write(F.gt06Login(imei, 1));
  t.deepEqual(await c.read(10), F.gt06Ack(0x01, 1));
  c.write(F.gt06Alarm(fix(0), 2, 0x09));
  t.deepEqual(await c.read(10), F.gt06Ack(0x16, 2));
  t.deepEqual(await alertNames(s, imei), ['Tow']);
  await s.request('PATCH', `/api/devices/${imei}`, { token: s.adminToken, body: [{ op: 'remove', path: '/model' }] });
  c.write(F.gt06Alarm(fix(1), 3, 0x09));
  t.deepEqual(await c.read(10), F.gt06Ack(0x16, 3));
  t.deepEqual(await alertNames(s, imei), ['Tow', 'Vibration']);
});

test("gateway.jt808: a connection whose first frame is a position stores it as decoded for the device's model", async (t) => {
  const s = await start(t);
  await createDevice(s, '13912345678', { model: 'G-360P' });
  await createDevice(s, '13912345679');
  for (const terminal of ['13912345678', '13912345679']) {
    const c = await TrackerClient.connect(s.running.ports.jt808);
    t.teardown(() => c.end());
    // alarm bit 0: removal on G-360P padlocks, an emergency (SOS) on standard terminals
    c.write(F.jt808Location(terminal, fix(0), 5, 0x01));
    const ack = await c.read(20);
    t.is(ack.subarray(0, 3).toString('hex'), '7e8001', 'general response');
  }
  t.deepEqual(await alertNames(s, '13912345678'), ['Removing']);
  t.deepEqual(await alertNames(s, '13912345679'), ['SOSButton']);
});

test("gateway.gt06: a frame that cannot be read with the device's new model is logged as malformed and not acknowledged; the connection lives on", async (t) => {
  const logger = capturingLogger();
  const s = await start(t, logger);
  const imei = '356307042441013';
  await createDevice(s, imei);
  const c = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => c.end());
  c.write(F.gt06Login(imei, 1));
  t.deepEqual(await c.read(10), F.gt06Ack(0x01, 1));
  // a captured 0x22 frame: a position for most models, one field short for the NT layout of an XT40
  const frame = frameBytes(loadVectors('gt06').find((v) => v.line === 72)!);
  await s.request('PATCH', `/api/devices/${imei}`, {
    token: s.adminToken,
    body: [{ op: 'add', path: '/model', value: 'XT40' }],
  });
  c.write(frame);
  t.true(await c.nothingFor(300), 'no acknowledgement');
  t.like(logger.at('warn', 'malformed frame')[0], { protocol: 'gt06', device: imei });
  t.deepEqual(await locations(s, imei), []);
  c.write(F.gt06Heartbeat(5));
  t.deepEqual(await c.read(10), F.gt06Ack(0x13, 5));
  t.false(c.closed);
});
