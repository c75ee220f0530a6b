import dgram from 'node:dgram';
import test from 'ava';
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

const ID = '357671030946351';
/** the device of the reference's one-line sample (tools/test-integration.py) */
const SAMPLE_ID = '123456789012345';

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, { env: { TRACKGATE_TLT2H_PORT: '0', ...mode.env } });
  await createDevice(s, ID, { name: 'car', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.tlt2h);
  t.teardown(() => c.end());
  return c;
}

/** `$GPRMC` record at 2026-03-01 10:00:<ss> UTC, 40.4168 N 3.7038 W, 10 knots, with its NMEA checksum */
function record(ss: number): string {
  const rmc = `GPRMC,1000${String(ss).padStart(2, '0')}.00,A,4025.0080,N,00342.2280,W,10.00,90.00,010326,,,A`;
  let x = 0;
  for (const ch of Buffer.from(rmc)) x ^= ch;
  return `#4106$${rmc}*${x.toString(16).toUpperCase().padStart(2, '0')}\r\n`;
}

const message = (status: string, ...seconds: number[]): string =>
  `#${ID}#MT700#0000#${status}#${seconds.length}\r\n${seconds.map(record).join('')}##\r\n`;

const locations = async (
  s: TestServer,
  id = ID,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${id}/locations`, {
      token: s.adminToken,
      body: { from: '2000-01-01T00:00:00Z', to: '2030-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.tlt2h: a message names the device and is stored unanswered; SOS becomes an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(message('AUTO', 0));
    t.true(await c.nothingFor(300), 'nothing is answered');
    await until('stored', async () => (await locations(s)).length === 1);
    const stored = (await locations(s))[0];
    t.like(stored, { dateTime: '2026-03-01T10:00:00.000Z', latitude: 40.4168, longitude: -3.7038, protocol: 'tlt2h' });
    t.true(Math.abs(stored.speed - 18.52) < 1e-6, 'knots to km/h');
    c.write(message('SOS', 5));
    await until('the alarm stored', async () => (await locations(s)).length === 2);
    const alerts = await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1, JSON.stringify(alerts.body));
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z' });
  },
);

testInGatewayModes(
  test,
  'gateway.tlt2h: a message split across writes, two in one write and several records are all stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const one = Buffer.from(message('AUTO', 1));
    for (let i = 0; i < one.length; i += 7) {
      c.write(one.subarray(i, i + 7));
      await new Promise((r) => setTimeout(r, 2));
    }
    c.write(message('AUTO', 2) + message('AUTOSTOP', 3, 4));
    await until('four stored', async () => (await locations(s)).length === 4);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime.substring(11, 19)),
      ['10:00:01', '10:00:02', '10:00:03', '10:00:04'],
    );
  },
);

testInGatewayModes(test, 'gateway.tlt2h: a UDP datagram is stored and not answered', async (t, mode) => {
  const s = await start(t, mode);
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  let answered = false;
  sock.on('message', () => {
    answered = true;
  });
  const datagram = `#${ID}#MT700#0000#AUTO#1\r\n${record(6)}`;
  sock.send(Buffer.from(datagram), s.running.ports['tlt2h/udp'], '127.0.0.1');
  await until('stored', async () => (await locations(s)).length === 1);
  t.like((await locations(s))[0], { dateTime: '2026-03-01T10:00:06.000Z', protocol: 'tlt2h' });
  t.false(answered);
});

testInGatewayModes(test, "gateway.tlt2h: the reference's one-line sample is stored", async (t, mode) => {
  const s = await start(t, mode);
  await createDevice(s, SAMPLE_ID, { name: 'sample', alertEmails: [] });
  const c = await connect(t, s);
  c.write(
    '#123456789012345#V500#0000#AUTO#1\r\n#$GPRMC,123000.000,A,6000.0000,N,13000.0000,E,0.00,0.00,010112,,,D*70\r\n##\r\n',
  );
  await until('stored', async () => (await locations(s, SAMPLE_ID)).length === 1);
  t.like((await locations(s, SAMPLE_ID))[0], {
    dateTime: '2012-01-01T12:30:00.000Z',
    latitude: 60,
    longitude: 130,
    protocol: 'tlt2h',
  });
});
