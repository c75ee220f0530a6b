import test from 'ava';
import dgram from 'node:dgram';
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

const ID = '359853000144328';
/** the reference's two-line sample (tools/test-integration.py), device 123456789012345 */
const SAMPLE_ID = '123456789012345';
const SAMPLE = '$PGID,123456789012345*0F\r\n$GPRMC,120500.000,A,6000.0000,N,13000.0000,E,0.00,0.00,010112,,*33\r\n';

async function start(t: Teardown, mode: GatewayMode, device: Record<string, unknown> = {}): Promise<TestServer> {
  const s = await startTestServer(t, { env: { TRACKGATE_T55_PORT: '0', ...mode.env } });
  await createDevice(s, ID, { name: 'boat', alertEmails: [], ...device });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.t55);
  t.teardown(() => c.end());
  return c;
}

/** an RMC at 2026-03-01 `hhmmss` UTC, 40°25.008'N 3°42.228'W, 22.68 knots (42 km/h) */
const rmc = (hhmmss: string): string => `$GPRMC,${hhmmss}.000,A,4025.0080,N,00342.2280,W,22.68,90.00,010326,,*00\r\n`;
const PGID = `$PGID,${ID}*0F\r\n`;

const locations = async (
  s: TestServer,
  id = ID,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${id}/locations`, {
      token: s.adminToken,
      body: { from: '2010-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.t55: $PGID names the device, the bare NMEA after it is stored; nothing is answered by default',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(PGID);
    c.write(rmc('100000'));
    c.write(`$GPGGA,100001.000,4025.0080,N,00342.2280,W,1,09,0.9,650.0,M,0.0,M,,*00\r\n`);
    await until('stored', async () => (await locations(s)).length === 2);
    const [first] = await locations(s);
    t.like(first, { dateTime: '2026-03-01T10:00:00.000Z', protocol: 't55' });
    t.true(Math.abs(first.latitude - 40.4168) < 1e-6 && Math.abs(first.longitude - -3.7038) < 1e-6);
    t.true(Math.abs(first.speed - 42) < 0.01, String(first.speed));
    t.true(await c.nothingFor(300), 'no OK1 without the ack setting');
  },
);

testInGatewayModes(
  test,
  'gateway.t55: with the ack setting each RMC is answered OK1 CR LF, only once it is stored',
  async (t, mode) => {
    const s = await start(t, mode, { protocolOptions: { ack: 'true' } });
    const c = await connect(t, s);
    c.write(PGID);
    c.write(rmc('100000'));
    t.is((await c.read(5)).toString('latin1'), 'OK1\r\n');
    t.is((await locations(s)).length, 1, 'the fix was stored before its answer');
    c.write(rmc('100001') + rmc('100002'));
    t.is((await c.read(10)).toString('latin1'), 'OK1\r\nOK1\r\n');
    t.is((await locations(s)).length, 3);
  },
);

testInGatewayModes(
  test,
  'gateway.t55: a line split across writes and two lines in one write are all stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(PGID);
    const one = Buffer.from(rmc('100010'));
    for (let i = 0; i < one.length; i += 7) {
      c.write(one.subarray(i, i + 7));
      await new Promise((r) => setTimeout(r, 2));
    }
    c.write(rmc('100011') + rmc('100012'));
    await until('three stored', async () => (await locations(s)).length === 3);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
  },
);

testInGatewayModes(
  test,
  'gateway.t55: Maxon: an RMC before identification is stored once $GPFID names the device',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(rmc('100020'));
    c.write(`$GPFID,${ID}\r\n`);
    await until('stored', async () => (await locations(s)).length === 1);
    t.is((await locations(s))[0].dateTime, '2026-03-01T10:00:20.000Z');
  },
);

testInGatewayModes(
  test,
  "gateway.t55: over UDP a sender's $PGID names the device for its later datagrams; no OK1 over UDP",
  async (t, mode) => {
    const s = await start(t, mode, { protocolOptions: { ack: 'true' } });
    const sock = dgram.createSocket('udp4');
    t.teardown(() => sock.close());
    const answers: Buffer[] = [];
    sock.on('message', (m) => answers.push(m));
    const port = s.running.ports['t55/udp'];
    const send = (line: string) => new Promise<void>((r) => sock.send(Buffer.from(line), port, '127.0.0.1', () => r()));
    await send(`$PGID,${ID}*0F`);
    await send(rmc('100030'));
    await send(rmc('100031'));
    await until('stored', async () => (await locations(s)).length === 2);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:30.000Z', '2026-03-01T10:00:31.000Z'],
    );
    t.deepEqual(answers, [], 'the reference answers OK1 over TCP only');
  },
);

testInGatewayModes(test, "gateway.t55: the reference's sample message is stored", async (t, mode) => {
  const s = await start(t, mode);
  await createDevice(s, SAMPLE_ID, { name: 'sample', alertEmails: [] });
  const c = await connect(t, s);
  c.write(SAMPLE);
  await until('stored', async () => (await locations(s, SAMPLE_ID)).length === 1);
  t.like((await locations(s, SAMPLE_ID))[0], {
    dateTime: '2012-01-01T12:05:00.000Z',
    latitude: 60,
    longitude: 130,
    protocol: 't55',
  });
});
