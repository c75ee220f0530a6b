import test from 'ava';
import dgram from 'node:dgram';
import net from 'node:net';
import { ManualClock } from '../../core/clock.js';
import { backends } from '../helpers/backends.js';
import {
  startServer,
  startTestServer,
  testInGatewayModes,
  type GatewayMode,
  type Teardown,
  type TestServer,
} from '../helpers/server.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import * as F from '../helpers/frames.js';
import { PATIENCE_MS, until } from '../helpers/wait.js';

const GATEWAY_ENV = {
  TRACKGATE_TELTONIKA_PORT: '0',
  TRACKGATE_GT06_PORT: '0',
  TRACKGATE_H02_PORT: '0',
  TRACKGATE_GPS103_PORT: '0',
  TRACKGATE_JT808_PORT: '0',
  TRACKGATE_OSMAND_PORT: '0',
};
const IMEI = '356307042441013';
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const fix = (i: number, lat = 40.4168, lon = -3.7038): F.Fix => ({
  time: new Date(T0 + i * 1000),
  lat,
  lon,
  speedKmh: 42,
  course: 90,
});

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  return startTestServer(t, { env: { ...GATEWAY_ENV, ...mode.env } });
}

async function device(s: TestServer, id = IMEI): Promise<void> {
  const r = await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id, alertEmails: [] } });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
}

/** Connects as a Teltonika tracker and logs in: the client and the one-byte login reply. */
async function teltonikaSession(
  t: { teardown(fn: () => unknown): void },
  s: TestServer,
  imei = IMEI,
): Promise<{ c: TrackerClient; reply: Buffer }> {
  const c = await TrackerClient.connect(s.running.ports.teltonika);
  t.teardown(() => c.end());
  c.write(F.teltonikaLogin(imei));
  return { c, reply: await c.read(1) };
}

async function range(s: TestServer, id = IMEI): Promise<{ dateTime: string; latitude: number; protocol: string }[]> {
  return (
    await s.request('POST', `/api/devices/${id}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;
}

testInGatewayModes(
  test,
  'gateway.teltonika: login, AVL frames acknowledged with their record count, visible through REST',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s);
    const { c, reply } = await teltonikaSession(t, s);
    t.deepEqual(reply, Buffer.from([0x01]));
    t.is(
      (await s.request('GET', `/api/devices/${IMEI}/lastLocation`, { token: s.adminToken })).body.code,
      'LOCATION_NOT_FOUND',
      'read (and remembered) before any fix',
    );
    c.write(F.teltonikaAvl([fix(0), fix(1), fix(2)]));
    t.deepEqual(await c.read(4), Buffer.from('00000003', 'hex'));
    const stored = await range(s);
    t.deepEqual(
      stored.map((l) => l.dateTime),
      ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z', '2026-03-01T10:00:02.000Z'],
    );
    t.like(stored[0], { latitude: 40.4168, protocol: 'teltonika' });
    const last = await s.request('GET', `/api/devices/${IMEI}/lastLocation`, { token: s.adminToken });
    t.like(last.body.lastLocation, {
      dateTime: '2026-03-01T10:00:02.000Z',
      speed: 42,
      course: 90,
      satellites: 9,
      inputs: [true],
    });
    c.write(F.teltonikaAvl([fix(5)]));
    t.deepEqual(await c.read(4), Buffer.from('00000001', 'hex'));
    const next = await s.request('GET', `/api/devices/${IMEI}/lastLocation`, { token: s.adminToken });
    t.is(
      next.body.lastLocation.dateTime,
      '2026-03-01T10:00:05.000Z',
      'a fix acknowledged to the tracker is the last location at once',
    );
    const dev = await s.request('GET', `/api/devices/${IMEI}`, { token: s.adminToken });
    t.is(dev.body.device.protocol, 'teltonika');
    t.truthy(dev.body.device.lastConnection);
  },
);

testInGatewayModes(
  test,
  'gateway.teltonika: a frame split across writes and two frames in one write are both acknowledged; a resend is not duplicated',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s);
    const { c } = await teltonikaSession(t, s);
    const frame = F.teltonikaAvl([fix(10)]);
    for (let i = 0; i < frame.length; i += 7) {
      c.write(frame.subarray(i, i + 7));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.deepEqual(await c.read(4), Buffer.from('00000001', 'hex'));
    c.write(Buffer.concat([F.teltonikaAvl([fix(11), fix(12)]), F.teltonikaAvl([fix(13)])]));
    t.deepEqual(await c.read(8), Buffer.from('0000000200000001', 'hex'));
    c.write(F.teltonikaAvl([fix(11), fix(12)]));
    t.deepEqual(await c.read(4), Buffer.from('00000002', 'hex'), 'a resend is acknowledged again');
    t.is((await range(s)).length, 4, 'and not stored twice');
  },
);

testInGatewayModes(
  test,
  'gateway.gt06: login, positions, heartbeat and an SOS alarm get the exact acks; the alarm becomes an SOSButton alert',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s);
    const c = await TrackerClient.connect(s.running.ports.gt06);
    t.teardown(() => c.end());
    c.write(F.gt06Login(IMEI, 1));
    t.deepEqual(await c.read(10), Buffer.from('787805010001d9dc0d0a', 'hex'));
    c.write(F.gt06Position(fix(0), 2));
    t.deepEqual(await c.read(10), F.gt06Ack(0x22, 2));
    c.write(F.gt06Heartbeat(3));
    t.deepEqual(await c.read(10), F.gt06Ack(0x13, 3));
    c.write(F.gt06Alarm(fix(5), 4));
    t.deepEqual(await c.read(10), F.gt06Ack(0x16, 4));
    const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z', latitude: 40.4168 });
    const stored = await range(s);
    t.is(stored.length, 2);
    t.like(stored[1], {
      dateTime: '2026-03-01T10:00:05.000Z',
      alerts: ['SOSButton'],
      hasCriticalAlert: true,
    } as object);
    c.write(F.gt06Alarm(fix(5), 5));
    await c.read(10);
    const again = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(again.body.alerts.length, 1, 'a resent alarm does not raise the alert twice');
  },
);

testInGatewayModes(
  test,
  'gateway: unknown and expired devices get no positive acknowledgement, nothing is stored, operators see the identifier',
  async (t, mode) => {
    const s = await start(t, mode);
    const { c, reply } = await teltonikaSession(t, s, '111111111111111');
    t.deepEqual(reply, Buffer.from([0x00]), 'Teltonika rejection byte');
    c.write(F.teltonikaAvl([fix(0)]));
    t.true(await c.nothingFor(300), 'no acknowledgement');
    const g = await TrackerClient.connect(s.running.ports.gt06);
    t.teardown(() => g.end());
    g.write(F.gt06Login('222222222222222', 1));
    await until('the GT06 login seen', async () =>
      (await s.running.services.directory.recentUnknown(100)).some((u) => u.identifier === '222222222222222'),
    );
    t.true(await g.nothingFor(0), 'not answered');
    // Identifiers of no device belong to no account: the operator sees them, no account's admin does.
    const unknown = await s.running.services.directory.recentUnknown(100);
    const ids = unknown.map((u) => `${u.protocol}:${u.identifier}`);
    t.true(ids.includes('teltonika:111111111111111'));
    t.true(ids.includes('gt06:222222222222222'));
    t.like(
      unknown.find((u) => u.identifier === '111111111111111'),
      { reason: 'unknown', remoteAddress: '127.0.0.1' },
    );
    const listed = async () =>
      (await s.request('GET', '/api/unknownDevices', { token: s.adminToken })).body.unknownDevices.map(
        (u: { identifier: string }) => u.identifier,
      );
    t.deepEqual(await listed(), []);
    // An expired device is refused the same way, and its account's admin sees it.
    await s.request('POST', '/api/devices', {
      token: s.adminToken,
      body: { id: '333333333333333', name: 'old', expires: '2020-01-01T00:00:00Z' },
    });
    t.deepEqual((await teltonikaSession(t, s, '333333333333333')).reply, Buffer.from([0x00]));
    t.is((await range(s, '333333333333333')).length, 0);
    t.deepEqual(await listed(), ['333333333333333']);
  },
);

testInGatewayModes(
  test,
  'gateway: garbage and malformed frames are logged and skipped; the connection and others live on',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s);
    const c = await TrackerClient.connect(s.running.ports.gt06);
    t.teardown(() => c.end());
    c.write(Buffer.from('hello world garbage\r\n'));
    c.write(F.gt06Login(IMEI, 1));
    t.deepEqual(await c.read(10), F.gt06Ack(0x01, 1), 'resynchronised after garbage');
    const future = F.gt06Position(fix(0), 2);
    future[4] = 0xfe; // year 2254: decodable, but no real fix
    c.write(future);
    t.deepEqual(await c.read(10), F.gt06Ack(0x22, 2), 'acknowledged so the tracker does not resend it forever');
    const truncated = Buffer.from('7878082201020300049999' + '0d0a', 'hex'); // a 0x22 frame with 3 bytes of GPS
    c.write(truncated);
    c.write(F.gt06Position(fix(1), 5));
    t.deepEqual(
      await c.read(10),
      F.gt06Ack(0x22, 5),
      'the malformed frame got nothing; the next good frame is acknowledged',
    );
    t.deepEqual(
      (await range(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:01.000Z'],
      'only the good fix is stored',
    );
    t.false(c.closed);
  },
);

testInGatewayModes(test, 'gateway: a device that reconnects replaces its older connection', async (t, mode) => {
  const s = await start(t, mode);
  await device(s);
  const { c: first } = await teltonikaSession(t, s);
  const { c: second } = await teltonikaSession(t, s);
  t.true(await first.waitClosed(), 'the older connection is closed');
  second.write(F.teltonikaAvl([fix(0)]));
  t.deepEqual(await second.read(4), Buffer.from('00000001', 'hex'));
});

testInGatewayModes(
  test,
  'gateway: when the write fails nothing is acknowledged, the connection stays usable and a resend is stored',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s);
    const { c } = await teltonikaSession(t, s);
    await s.running.db.schema.renameTable('locations', 'locations_away');
    c.write(F.teltonikaAvl([fix(0), fix(1)]));
    t.true(await c.nothingFor(500), 'no ack while storage fails');
    t.false(c.closed);
    await s.running.db.schema.renameTable('locations_away', 'locations');
    c.write(F.teltonikaAvl([fix(0), fix(1)]));
    t.deepEqual(await c.read(4), Buffer.from('00000002', 'hex'));
    t.is((await range(s)).length, 2);
  },
);

testInGatewayModes(
  test,
  'gateway.udp: a Teltonika datagram is stored and acknowledged to its sender',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s);
    const avl = F.teltonikaAvl([fix(0)]);
    const data = avl.subarray(8, avl.length - 4); // codec .. N2
    const imei = Buffer.from(IMEI, 'ascii');
    const body = Buffer.concat([Buffer.from([0xca, 0xfe, 0x01, 0x07, 0x00, imei.length]), imei, data]);
    const datagram = Buffer.concat([Buffer.from([body.length >> 8, body.length & 0xff]), body]);
    const sock = dgram.createSocket('udp4');
    t.teardown(() => sock.close());
    const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
    sock.send(datagram, s.running.ports['teltonika/udp'], '127.0.0.1');
    t.deepEqual(await reply, Buffer.from('00050000010701', 'hex'));
    t.is((await range(s)).length, 1);
  },
);

testInGatewayModes(
  test,
  'gateway.osmand: an HTTP position is stored before 200; an unknown id gets 404 and nothing is stored',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s, 'phone-1');
    const base = `http://127.0.0.1:${s.running.ports.osmand}`;
    const ok = await fetch(`${base}/?id=phone-1&lat=40.5&lon=-3.5&timestamp=${T0 / 1000}&speed=10&batt=80`);
    t.is(ok.status, 200);
    const stored = await range(s, 'phone-1');
    t.is(stored.length, 1);
    t.like(stored[0], { dateTime: '2026-03-01T10:00:00.000Z', latitude: 40.5, protocol: 'osmand' });
    t.is((await fetch(`${base}/?id=nobody&lat=1&lon=1`)).status, 404);
    t.is((await fetch(`${base}/?lat=1&lon=1`)).status, 400);
  },
);

testInGatewayModes(test, 'gateway: the listening line names every listener with its actual port', async (t, mode) => {
  const s = await start(t, mode);
  for (const p of ['http', 'teltonika', 'teltonika/udp', 'gt06', 'h02', 'gps103', 'jt808', 'osmand']) {
    t.true(Number.isInteger(s.running.ports[p]) && s.running.ports[p] > 0, p);
  }
});

testInGatewayModes(
  test,
  'gateway.gt06: a refused login for another IMEI ends the earlier identity; later positions are not stored under it',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s);
    const c = await TrackerClient.connect(s.running.ports.gt06);
    t.teardown(() => c.end());
    c.write(F.gt06Login(IMEI, 1));
    t.deepEqual(await c.read(10), F.gt06Ack(0x01, 1));
    c.write(F.gt06Position(fix(0), 2));
    t.deepEqual(await c.read(10), F.gt06Ack(0x22, 2));
    c.write(F.gt06Login('999999999999999', 3));
    t.true(await c.nothingFor(300), 'the login of an unknown IMEI is not acknowledged');
    c.write(F.gt06Position(fix(1), 4));
    t.true(await c.nothingFor(300), 'nor a position after it');
    t.deepEqual(
      (await range(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:00.000Z'],
      'the earlier device got nothing more',
    );
    c.write(F.gt06Login(IMEI, 5));
    t.deepEqual(await c.read(10), F.gt06Ack(0x01, 5), 'logging in again as a known device works');
    c.write(F.gt06Position(fix(2), 6));
    t.deepEqual(await c.read(10), F.gt06Ack(0x22, 6));
  },
);

test('gateway.osmand: a bare `GET /?id=&lat=&lon=` over HTTP/1.1 without Host or timestamp is stored at the receive time', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 12, 30, 0));
  const s = await startServer('sqlite', { env: GATEWAY_ENV, clock });
  t.teardown(() => s.stop());
  await device(s, 'phone-1');
  // What Traccar's load tool and `printf … | nc` integrations send: no Host header, no timestamp.
  const answer = await rawHttp(s.running.ports.osmand, 'GET /?id=phone-1&lat=40.5&lon=-3.5 HTTP/1.1\r\n\r\n');
  t.regex(answer, /^HTTP\/1\.1 200 /);
  const stored = await range(s, 'phone-1');
  t.is(stored.length, 1);
  t.like(stored[0], { dateTime: '2026-03-01T12:30:00.000Z', latitude: 40.5, protocol: 'osmand' });
});

testInGatewayModes(
  test,
  "gateway.osmand: requests whose target lacks the leading slash (`GET ?id=…`, as Traccar's load tool sends) are stored, on one keep-alive connection and pipelined",
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s, 'phone-1');
    const socket = net.connect({ port: s.running.ports.osmand, host: '127.0.0.1' });
    // a gateway process that stops first resets the connection: the answers are what is checked
    socket.on('error', () => undefined);
    t.teardown(() => socket.destroy());
    let received = '';
    socket.on('data', (d) => (received += d.toString('latin1')));
    const answers = () => received.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
    const get = (i: number) =>
      `GET ?id=phone-1&lat=40.5&lon=-3.5&timestamp=${T0 / 1000 + i} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n`;
    // Python's http.client, as tools/test-generator.py uses it: one request, its answer, the next one
    socket.write(get(0));
    await until('the first answer', () => answers().length === 1);
    socket.write(get(1));
    await until('the second answer', () => answers().length === 2);
    // pipelined, with a form body (Content-Length) between two requests
    const form = 'id=phone-1&lat=40.6&lon=-3.6&timestamp=' + (T0 / 1000 + 2);
    socket.write(
      `POST ? HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}${get(3)}`,
    );
    await until('the pipelined answers', () => answers().length >= 4);
    t.deepEqual(answers(), ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200'], received);
    const stored = await range(s, 'phone-1');
    t.deepEqual(
      stored.map((l) => l.dateTime),
      ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z', '2026-03-01T10:00:02.000Z', '2026-03-01T10:00:03.000Z'],
    );
    t.is(stored[2].latitude, 40.6);
    // a request with its slash, on a new connection, is served as before
    t.regex(
      await rawHttp(
        s.running.ports.osmand,
        `GET /?id=phone-1&lat=40.5&lon=-3.5&timestamp=${T0 / 1000 + 4} HTTP/1.1\r\n\r\n`,
      ),
      /^HTTP\/1\.1 200 /,
    );
  },
);

testInGatewayModes(
  test,
  'gateway.jt808: a terminal id with a leading 0 is found as the terminal reports it (014164192753) or without the 0; an unknown one is listed as reported',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s, '014164192753'); // as the label prints it
    await device(s, '13912345678'); // as trackgate named such a terminal before
    for (const [terminal, stored] of [
      ['014164192753', '014164192753'],
      ['013912345678', '13912345678'],
    ]) {
      const c = await TrackerClient.connect(s.running.ports.jt808);
      t.teardown(() => c.end());
      c.write(F.jt808Location(terminal, fix(0), 5));
      const ack = await c.read(20);
      t.is(ack.subarray(0, 3).toString('hex'), '7e8001', `${terminal}: general response`);
      t.is(ack.subarray(5, 11).toString('hex'), terminal, `${terminal}: to the terminal as it named itself`);
      t.deepEqual(
        (await range(s, stored)).map((l) => l.dateTime),
        ['2026-03-01T10:00:00.000Z'],
        `${terminal}: stored under ${stored}`,
      );
    }
    const c = await TrackerClient.connect(s.running.ports.jt808);
    t.teardown(() => c.end());
    c.write(F.jt808Location('012300000001', fix(0), 5));
    t.true(await c.nothingFor(300), 'an unknown terminal gets no acknowledgement');
    await until(
      'the unknown terminal listed',
      async () => (await s.running.services.directory.recentUnknown(100)).length > 0,
    );
    const unknown = await s.running.services.directory.recentUnknown(100);
    t.deepEqual(
      unknown.map((u) => `${u.protocol}:${u.identifier}`),
      ['jt808:012300000001'],
      'listed as the terminal reports it, and only so',
    );
  },
);

testInGatewayModes(
  test,
  'gateway.gt06: a frame of a type it does not decode (0xff after the login) gets no acknowledgement; the next position does',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s);
    const c = await TrackerClient.connect(s.running.ports.gt06);
    t.teardown(() => c.end());
    c.write(F.gt06Login(IMEI, 1));
    t.deepEqual(await c.read(10), F.gt06Ack(0x01, 1));
    c.write(F.gt06Frame(0xff, Buffer.from('0102030405', 'hex'), 2));
    t.true(await c.nothingFor(500), 'not echoed: nothing of it was understood or stored');
    c.write(F.gt06Position(fix(0), 3));
    t.deepEqual(await c.read(10), F.gt06Ack(0x22, 3));
    t.is((await range(s)).length, 1);
  },
);

testInGatewayModes(
  test,
  'gateway.gt06: an IMEI with a leading 0 is the device id as printed (15 digits, the 0 kept)',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s, '012345678901234');
    const c = await TrackerClient.connect(s.running.ports.gt06);
    t.teardown(() => c.end());
    c.write(F.gt06Login('012345678901234', 1));
    t.deepEqual(await c.read(10), F.gt06Ack(0x01, 1));
    c.write(F.gt06Position(fix(0), 2));
    t.deepEqual(await c.read(10), F.gt06Ack(0x22, 2));
    t.is((await range(s, '012345678901234')).length, 1);
  },
);

testInGatewayModes(
  test,
  'gateway.h02: 35 knots are stored and served as 64.82 km/h, coordinates to 7 decimals, without floating-point noise',
  async (t, mode) => {
    const s = await start(t, mode);
    await device(s, '4210051415');
    const c = await TrackerClient.connect(s.running.ports.h02);
    t.teardown(() => c.end());
    c.write('*HQ,4210051415,V1,100000,A,4024.6080,N,00342.2280,W,35.00,90,010326,FFFFFBFF#');
    t.is((await c.read(20)).toString('latin1'), '*HQ,4210051415,V4,V1', 'acknowledged once stored');
    const [stored] = await range(s, '4210051415');
    t.like(stored, { speed: 64.82, latitude: 40.4101333, longitude: -3.7038, course: 90 });
    const last = await s.request('GET', '/api/devices/4210051415/lastLocation', { token: s.adminToken });
    t.is(JSON.stringify(last.body).match(/"speed":([\d.]+)/)?.[1], '64.82', 'the JSON text itself');
  },
);

test('gateway.osmand: an id with a NUL byte or too long for any device is a 400, not recorded, and the listener lives on', async (t) => {
  for (const backend of await backends()) {
    const s = await startServer(backend, { env: GATEWAY_ENV });
    t.teardown(() => s.stop());
    await device(s, 'phone-1');
    const base = `http://127.0.0.1:${s.running.ports.osmand}`;
    for (const id of ['abc%00def', 'a'.repeat(65), '%01']) {
      const r = await fetch(`${base}/?id=${id}&lat=40.5&lon=-3.5`);
      t.is(r.status, 400, `${backend}: ${id}`);
    }
    t.is((await fetch(`${base}/?id=phone-1&lat=40.5&lon=-3.5`)).status, 200, `${backend}: the next request is served`);
    const unknown = await s.request('GET', '/api/unknownDevices', { token: s.adminToken });
    t.is(unknown.status, 200);
    t.deepEqual(unknown.body.unknownDevices, [], `${backend}: nothing recorded`);
  }
});

/** Sends `text` as it is and returns what the server answered before closing (or within PATIENCE_MS). */
function rawHttp(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' }, () => socket.write(text));
    socket.on('error', () => undefined); // 'close' follows and resolves with what arrived
    let answer = '';
    const timer = setTimeout(() => socket.destroy(), PATIENCE_MS);
    socket.on('data', (d) => {
      answer += d.toString('latin1');
      if (/\r\n\r\n/.test(answer)) socket.destroy();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on('error', reject);
  });
}
