import test from 'ava';
import { minifinder2Frame } from '../../../protocols/minifinder2/minifinder2.decoder.js';
import {
  createDevice,
  startTestServer,
  testInGatewayModes,
  type GatewayMode,
  type Teardown,
  type TestServer,
} from '../../helpers/server.js';
import { TrackerClient } from '../../helpers/tracker-client.js';
import { until } from '../../helpers/wait.js';

const IMEI = '861629050625098';
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0) / 1000;

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, { env: { TRACKGATE_MINIFINDER2_PORT: '0', ...mode.env } });
  await createDevice(s, IMEI, { name: 'pet', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.minifinder2);
  t.teardown(() => c.end());
  return c;
}

/** a device frame asking for an answer (flags 0x10) */
function frame(content: Buffer, sequence: number): Buffer {
  const f = minifinder2Frame(sequence, content);
  f[1] = 0x10;
  return f;
}

/** the success answer: `AB 00 03 00 <CRC-16/XMODEM of 7F 01 00> <sequence> 7F 01 00` */
const ack = (sequence: number): Buffer => {
  const a = Buffer.from('ab00030008c700007f0100', 'hex'); // CRC-16/XMODEM of 7F 01 00: 0xC708, LE
  a.writeUInt16LE(sequence, 6);
  return a;
};

/** data records: IMEI, then per position a status (time) and a GPS record; `alarm` adds key 0x02 */
function data(seconds: number[], alarm = 0): Buffer {
  const parts = [Buffer.from('01', 'hex'), Buffer.from('1001', 'hex'), Buffer.from(IMEI, 'latin1')];
  for (const sec of seconds) {
    const status = Buffer.alloc(10);
    status.writeUInt8(9, 0);
    status.writeUInt8(0x24, 1);
    status.writeUInt32LE(T0 + sec, 2);
    status.writeUInt32LE(80 << 24, 6); // battery 80 %
    const gps = Buffer.alloc(23);
    gps.writeUInt8(22, 0);
    gps.writeUInt8(0x20, 1);
    gps.writeInt32LE(593293000, 2);
    gps.writeInt32LE(180686000, 6);
    gps.writeUInt16LE(12, 10); // km/h
    gps.writeUInt16LE(90, 12);
    gps.writeInt16LE(20, 14);
    gps.writeUInt16LE(9, 16); // HDOP 0.9
    gps.writeUInt32LE(0, 18);
    gps.writeUInt8(8, 22);
    parts.push(status, gps);
    if (alarm) {
      const a = Buffer.alloc(6);
      a.writeUInt8(5, 0);
      a.writeUInt8(0x02, 1);
      a.writeUInt32LE(alarm, 2);
      parts.push(a);
    }
  }
  return Buffer.concat(parts);
}

const locations = async (
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: s.adminToken,
      body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.minifinder2: a data frame of two positions is stored, then acked 7F 01 00 with its sequence id',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(frame(data([0, 10]), 0x0102));
    t.deepEqual((await c.read(11)).toString('hex'), ack(0x0102).toString('hex'));
    const stored = await locations(s);
    t.deepEqual(
      stored.map((l) => l.dateTime),
      ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:10.000Z'],
      'stored by the time the ack arrived',
    );
    t.like(stored[0], { latitude: 59.3293, protocol: 'minifinder2' });
    t.is(stored[0].speed, 12);
  },
);

testInGatewayModes(
  test,
  'gateway.minifinder2: a frame split across writes, two frames in one write',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const f = frame(data([0]), 7);
    c.write(f.subarray(0, 5));
    t.true(await c.nothingFor(200), 'half a frame is not answered');
    c.write(f.subarray(5));
    t.deepEqual(await c.read(11), ack(7));
    c.write(Buffer.concat([frame(data([20]), 8), frame(data([30]), 9)]));
    t.deepEqual(await c.read(22), Buffer.concat([ack(8), ack(9)]));
    t.is((await locations(s)).length, 3);
  },
);

testInGatewayModes(test, 'gateway.minifinder2: an SOS alarm record raises an alert', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write(frame(data([5], 1 << 12), 3));
  t.deepEqual(await c.read(11), ack(3));
  const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
    token: s.adminToken,
    body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
  });
  t.is(alerts.body.alerts.length, 1, JSON.stringify(alerts.body));
  t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z' });
});

testInGatewayModes(
  test,
  'gateway.minifinder2: a services request is answered with the time now (key 0x12); an unknown IMEI is not answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const before = Math.floor(Date.now() / 1000);
    c.write(
      frame(Buffer.concat([Buffer.from('031001', 'hex'), Buffer.from(IMEI), Buffer.from('0112', 'hex')]), 0x4a01),
    );
    const answer = await c.read(15);
    const after = Math.floor(Date.now() / 1000);
    t.is(answer.subarray(0, 4).toString('hex'), 'ab000700');
    t.is(answer.readUInt16LE(6), 0x4a01);
    t.is(answer.subarray(8, 11).toString('hex'), '030512');
    const time = answer.readUInt32LE(11);
    t.true(time >= before && time <= after, `${time} within [${before}, ${after}]`);
    const other = await connect(t, s);
    other.write(frame(Buffer.concat([Buffer.from('011001', 'hex'), Buffer.from('111111111111111')]), 1));
    t.true(await other.nothingFor(300), 'an unknown device is not acknowledged');
    await until('the unknown IMEI listed', async () =>
      (await s.running.services.directory.recentUnknown(100)).some((u) => u.identifier === '111111111111111'),
    );
  },
);
