import test from 'ava';
import dgram from 'node:dgram';
import { crc16X25 } from '../../../protocols/shared/crc.js';
import {
  createDevice,
  startTestServer,
  testInGatewayModes,
  untilConnected,
  type GatewayMode,
  type Teardown,
  type TestServer,
} from '../../helpers/server.js';
import { TrackerClient } from '../../helpers/tracker-client.js';
import { castelFix, castelFrame, castelStats, u32le } from '../../helpers/castel-frames.js';

const ID = '213GDS2021000052';
const ID_HEX = Buffer.from(ID.padEnd(20, '\0'), 'latin1').toString('hex');
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
type T = Teardown;

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_CASTEL_PORT: '0', TRACKGATE_COMMAND_WAIT: '1', ...mode.env },
  });
  await createDevice(s, ID, { name: 'car', alertEmails: [] });
  return s;
}

async function connect(t: T, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.castel);
  t.teardown(() => c.end());
  return c;
}

/** a fix `sec` seconds after T0 at 40.4168, -3.7038, 1167 cm/s (42.01 km/h), course 90° */
const fixAt = (sec: number): string => castelFix(new Date(T0 + sec * 1000), 40.4168, -3.7038, 1167, 900);
const stats = castelStats(123456, 789, 1000, 0);
/** SC v4 login with one fix (versions and PID list left out) */
const login = (sec: number): Buffer => castelFrame(4, ID, 0x1001, stats + '01' + fixAt(sec));
/** SC v4 GPS data with the fixes */
const gps = (...secs: number[]): Buffer =>
  castelFrame(4, ID, 0x4001, '00' + stats + secs.length.toString(16).padStart(2, '0') + secs.map(fixAt).join(''));
/** SC v4 alarm `index` with one fix and alarm number `code` */
const alarm = (index: number, sec: number, code: number): Buffer =>
  castelFrame(
    4,
    ID,
    0x4007,
    u32le(index) + stats + '01' + fixAt(sec) + '0101' + code.toString(16).padStart(2, '0') + '00000000',
  );
const HEARTBEAT = castelFrame(4, ID, 0x1003, '');

/** an `@@` v4 reply of `type` with `content`, as the server must write it */
function replyOf(type: number, content = ''): Buffer {
  return castelFrame(4, ID, type, content);
}

const locations = async (
  s: TestServer,
): Promise<
  { dateTime: string; latitude: number; longitude: number; speed: number; course: number; protocol: string }[]
> =>
  (
    await s.request('POST', `/api/devices/${ID}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

const alerts = async (s: TestServer): Promise<{ alertName: string; dateTime: string }[]> =>
  (
    await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    })
  ).body.alerts;

/** checks a login answer: 0x9001, FFFFFFFF, 0000, a UNIX time within the test's span, a good CRC */
function checkLoginReply(
  t: { is(a: unknown, b: unknown, m?: string): void; true(v: boolean, m?: string): void },
  r: Buffer,
  before: number,
): void {
  t.is(r.length, 41);
  t.is(r.toString('hex', 0, 27), `4040290004${ID_HEX}9001`);
  t.is(r.toString('hex', 27, 33), 'ffffffff0000');
  const time = r.readUInt32LE(33);
  t.true(time >= Math.floor(before / 1000) && time <= Math.ceil(Date.now() / 1000), `UNIX time ${time}`);
  t.is(r.readUInt16LE(37), crc16X25(r, 0, 37));
  t.is(r.toString('hex', 39), '0d0a');
}

testInGatewayModes(
  test,
  'gateway.castel: login, GPS data and an alarm are stored and answered byte for byte after the commit',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const before = Date.now();
    c.write(login(0));
    checkLoginReply(t, await c.read(41), before);
    t.is((await locations(s)).length, 1, 'the login fix is stored before the answer');
    c.write(gps(1, 2));
    t.true(await c.nothingFor(300), 'GPS data is not answered');
    c.write(HEARTBEAT);
    t.deepEqual(await c.read(31), replyOf(0x9003), 'heartbeat 0x9003');
    const stored = await locations(s);
    t.deepEqual(
      stored.map((l) => l.dateTime),
      ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z', '2026-03-01T10:00:02.000Z'],
    );
    t.like(stored[1], { latitude: 40.4168, longitude: -3.7038, speed: 42.01, course: 90, protocol: 'castel' });
    c.write(alarm(0x01020304, 5, 0x01));
    t.deepEqual(await c.read(35), replyOf(0xc007, '04030201'), 'alarm 0xC007 echoes the index');
    t.is((await locations(s)).length, 4, 'the alarm fix is stored before the answer');
    const raised = await alerts(s);
    t.is(raised.length, 1);
    t.like(raised[0], { alertName: 'SpeedLimit', dateTime: '2026-03-01T10:00:05.000Z' });
  },
);

testInGatewayModes(
  test,
  'gateway.castel: a frame split across writes and two frames in one write are both handled',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const one = alarm(7, 10, 0x0e);
    for (let i = 0; i < one.length; i += 9) {
      c.write(one.subarray(i, i + 9));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.deepEqual(await c.read(35), replyOf(0xc007, u32le(7)));
    c.write(Buffer.concat([alarm(8, 11, 0x0e), HEARTBEAT]));
    t.deepEqual(await c.read(35 + 31), Buffer.concat([replyOf(0xc007, u32le(8)), replyOf(0x9003)]));
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z'],
    );
    t.deepEqual(
      (await alerts(s)).map((a) => a.alertName),
      ['PowerOff', 'PowerOff'],
    );
  },
);

testInGatewayModes(test, 'gateway.castel: an unknown device gets no answer and nothing is stored', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write(castelFrame(4, 'NOTREGISTERED0001', 0x1001, stats + '01' + fixAt(0)));
  t.true(await c.nothingFor(500), 'no login answer for an unknown device');
  t.is((await locations(s)).length, 0);
});

testInGatewayModes(test, 'gateway.castel: UDP datagrams are stored and answered to their sender', async (t, mode) => {
  const s = await start(t, mode);
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const replies: Buffer[] = [];
  let wake: () => void = () => {};
  sock.on('message', (m) => {
    replies.push(m);
    wake();
  });
  const next = async (): Promise<Buffer> => {
    while (replies.length === 0) await new Promise<void>((r) => (wake = r));
    return replies.shift()!;
  };
  const port = s.running.ports['castel/udp'];
  const before = Date.now();
  sock.send(login(20), port, '127.0.0.1');
  checkLoginReply(t, await next(), before);
  sock.send(HEARTBEAT, port, '127.0.0.1');
  t.deepEqual(await next(), replyOf(0x9003));
  sock.send(alarm(3, 21, 0x1c), port, '127.0.0.1');
  t.deepEqual(await next(), replyOf(0xc007, u32le(3)));
  t.deepEqual(
    (await locations(s)).map((l) => l.dateTime),
    ['2026-03-01T10:00:20.000Z', '2026-03-01T10:00:21.000Z'],
  );
  t.like((await alerts(s))[0], { alertName: 'Vibration' });
});

testInGatewayModes(
  test,
  "gateway.castel: engineStop is written as Traccar's petrol control frame with the device id",
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(login(0));
    await c.read(41);
    await untilConnected(s, ID);
    const pending = s.request('POST', `/api/devices/${ID}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'engineStop' },
    });
    t.deepEqual(await c.read(32), castelFrame(1, ID, 0x4583, '01'));
    const r = await pending;
    t.is(r.status, 200, JSON.stringify(r.body));
    t.is(r.body.command.status, 'sent', 'the device answers nothing that echoes the command');
    const refused = await s.request('POST', `/api/devices/${ID}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'reboot' },
    });
    t.is(refused.status, 400);
  },
);

testInGatewayModes(
  test,
  "gateway.castel: the reference's captured SC frames are stored from a real socket",
  async (t, mode) => {
    const s = await start(t, mode);
    await createDevice(s, '213EP2016000585', { alertEmails: [] });
    const c = await connect(t, s);
    // Traccar's test capture: an SC alarm (power off) of device 213EP2016000585, answered 0xC007
    const captured = Buffer.from(
      '40406000043231334550323031363030303538350000000000400708000000831c1c58f4fb1c58ae94040012220000f604000058000000200007630168000084c401040b10090c3532db3f07f07f7520090100000101010e00000000c7920d0a',
      'hex',
    );
    c.write(captured);
    t.deepEqual(
      await c.read(35),
      Buffer.from('40402300043231334550323031363030303538350000000000c00708000000892a0d0a', 'hex'),
    );
    const stored = await s.request('POST', '/api/devices/213EP2016000585/locations', {
      token: s.adminToken,
      body: { from: '2016-01-01T00:00:00Z', to: '2017-01-01T00:00:00Z' },
    });
    t.is(stored.body.locations.length, 1);
    t.like(stored.body.locations[0], { dateTime: '2016-11-04T09:12:53.000Z', protocol: 'castel' });
  },
);
