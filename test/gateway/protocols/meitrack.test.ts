import test from 'ava';
import dgram from 'node:dgram';
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
import { until } from '../../helpers/wait.js';
import { meitrackAaa, meitrackCcc, meitrackFrame, sum8, type MeitrackFix } from '../../helpers/meitrack-frames.js';

const IMEI = '356307042441013';
const ENV = { TRACKGATE_MEITRACK_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' };
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const fix = (i: number): MeitrackFix => ({
  time: new Date(T0 + i * 1000),
  lat: 40.4168,
  lon: -3.7038,
  speedKmh: 42,
  course: 90,
});
type T = Teardown;

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, { env: { ...ENV, ...mode.env } });
  await createDevice(s, IMEI, { alertEmails: [] });
  return s;
}

async function connect(t: T, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.meitrack);
  t.teardown(() => c.end());
  return c;
}

const stored = async (
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

/** the CCC acknowledgement for `n` packets with data identifier `flag` */
const cccAck = (flag: string, n: number): Buffer => {
  const head = `@@${flag}${26 + String(n).length},${IMEI},CCC,${n}*`;
  return Buffer.from(`${head}${sum8(Buffer.from(head))}\r\n`, 'latin1');
};

/** Reads one `@@...\r\n` frame the server wrote. */
async function readServerFrame(c: TrackerClient): Promise<string> {
  let text = '';
  while (!text.endsWith('\r\n')) text += (await c.read(1)).toString('latin1');
  return text;
}

testInGatewayModes(
  test,
  'gateway.meitrack: the first AAA report names the device and is stored; an SOS event becomes an SOSButton alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(meitrackAaa(IMEI, fix(0), 35));
    c.write(meitrackAaa(IMEI, fix(1), 1));
    await until('stored', async () => (await stored(s)).length === 2);
    const list = await stored(s);
    t.like(list[0], { dateTime: '2026-03-01T10:00:00.000Z', latitude: 40.4168, speed: 42, protocol: 'meitrack' });
    const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:01.000Z' });
    t.true(await c.nothingFor(200), 'AAA reports get no reply');
  },
);

testInGatewayModes(
  test,
  'gateway.meitrack: a CCC batch is stored and acknowledged with its count; split across writes and two in one write',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const first = meitrackCcc(IMEI, [fix(0), fix(1)], 'U');
    for (let i = 0; i < first.length; i += 9) {
      c.write(first.subarray(i, i + 9));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.deepEqual(await c.read(cccAck('U', 2).length), cccAck('U', 2));
    c.write(Buffer.concat([meitrackCcc(IMEI, [fix(2)], 'V'), meitrackCcc(IMEI, [fix(3), fix(4), fix(5)], 'W')]));
    const acks = Buffer.concat([cccAck('V', 1), cccAck('W', 3)]);
    t.deepEqual(await c.read(acks.length), acks);
    t.is((await stored(s)).length, 6, 'acknowledged only once stored');
  },
);

testInGatewayModes(
  test,
  'gateway.meitrack: a UDP datagram is stored and acknowledged to its sender',
  async (t, mode) => {
    const s = await start(t, mode);
    const sock = dgram.createSocket('udp4');
    t.teardown(() => sock.close());
    const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
    sock.send(meitrackCcc(IMEI, [fix(0)], 'Q'), s.running.ports['meitrack/udp'], '127.0.0.1');
    t.deepEqual(await reply, cccAck('Q', 1));
    t.is((await stored(s)).length, 1);
  },
);

testInGatewayModes(
  test,
  'gateway.meitrack: a command is written as @@<flag><len>,<imei>,<text>*XX and the answer with the same flag and word answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(meitrackAaa(IMEI, fix(0)));
    await until('stored', async () => (await stored(s)).length === 1);
    await untilConnected(s, IMEI);
    const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'C01,0,12222' },
    });
    const frame = await readServerFrame(c);
    const m = /^@@(.)(\d+),(\d+),C01,0,12222\*([0-9A-F]{2})\r\n$/.exec(frame);
    t.truthy(m, frame);
    const [, flag, length, imei, checksum] = m!;
    t.is(imei, IMEI);
    t.is(Number(length), frame.length - frame.indexOf(','));
    t.is(checksum, sum8(Buffer.from(frame.slice(0, frame.indexOf('*') + 1), 'latin1')));
    const other = flag === 'A' ? 'B' : 'A';
    c.write(meitrackFrame(other, IMEI, 'C01,FAIL'));
    await new Promise((r) => setTimeout(r, 300));
    c.write(meitrackFrame(flag, IMEI, 'C01,OK'));
    const r = await pending;
    t.is(r.status, 200, JSON.stringify(r.body));
    t.like(
      r.body.command,
      { status: 'answered', result: 'C01,OK' },
      'the answer with another data identifier answers another command',
    );
  },
);
