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

const ID = '123456789012345';

/** The reference's one-line sample (tools/test-integration.py), a full line ending LF. */
const SAMPLE =
  '111111120009,+436763737552,GPRMC,120600.000,A,6000.0000,N,13000.0000,E,0.00,0.00,010112,,,A*68,F,, imei:123456789012345,04,481.2,F:4.15V,0,139,2689,232,03,2725,0576\n';

/** A full line at 2026-03-01 `hhmmss` UTC with status text `status`, ending LF CR as the trackers do. */
const line = (hhmmss: string, status = ''): string =>
  `260301${hhmmss},+4367,GPRMC,${hhmmss}.000,A,4024.0080,N,00342.2280,W,10.00,90.00,010326,,,A*68,F,${status}, imei:${ID},07,650.5,F:4.10V,0,139,2689,232,03,2725,0576\n\r`;

async function start(t: Teardown, mode: GatewayMode, options?: Record<string, string>): Promise<TestServer> {
  const s = await startTestServer(t, { env: { TRACKGATE_XEXUN_PORT: '0', ...mode.env } });
  await createDevice(s, ID, { name: 'car', alertEmails: [], ...(options && { protocolOptions: options }) });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.xexun);
  t.teardown(() => c.end());
  return c;
}

type Row = { dateTime: string; latitude: number; longitude: number; speed: number; altitude?: number | null };
const locations = async (s: TestServer, from = '2026-01-01T00:00:00Z'): Promise<Row[]> =>
  (
    await s.request('POST', `/api/devices/${ID}/locations`, {
      token: s.adminToken,
      body: { from, to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  "gateway.xexun: the reference's sample line is stored (basic mode, the default); nothing is answered",
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(SAMPLE);
    await until('stored', async () => (await locations(s, '2012-01-01T00:00:00Z')).length === 1);
    t.like((await locations(s, '2012-01-01T00:00:00Z'))[0], {
      dateTime: '2012-01-01T12:06:00.000Z',
      latitude: 60,
      longitude: 130,
    });
    t.true(await c.nothingFor(300), 'Xexun devices get no acknowledgement');
  },
);

testInGatewayModes(
  test,
  'gateway.xexun: with extended=true the full line is read (altitude); help me! raises an SOS alert',
  async (t, mode) => {
    const s = await start(t, mode, { extended: 'true' });
    const c = await connect(t, s);
    c.write(line('100000'));
    c.write(line('100005', 'help me!'));
    await until('stored', async () => (await locations(s)).length === 2);
    const [first] = await locations(s);
    t.like(first, { dateTime: '2026-03-01T10:00:00.000Z', latitude: 40.4001333, altitude: 650.5 });
    t.true(Math.abs(first.longitude + 3.7038) < 1e-6);
    t.true(Math.abs(first.speed - 18.52) < 1e-6, 'knots to km/h');
    const alerts = await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z' });
  },
);

testInGatewayModes(
  test,
  'gateway.xexun: a line split across writes and two lines in one write are all stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const one = Buffer.from(line('100010'));
    for (let i = 0; i < one.length; i += 11) {
      c.write(one.subarray(i, i + 11));
      await new Promise((r) => setTimeout(r, 2));
    }
    c.write(line('100011') + line('100012'));
    await until('three stored', async () => (await locations(s)).length === 3);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
  },
);
