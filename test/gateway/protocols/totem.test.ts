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

/** The reference's one-line sample (tools/test-integration.py): old format, its length counting the CR. */
const SAMPLE =
  '$$B3123456789012345|AA$GPRMC,120700.000,A,6000.0000,N,13000.0000,E,0.00,,010112,,,A*74|01.8|01.0|01.5|000000000000|20120403234603|14251914|00000000|0012D888|0000|0.0000|3674|940B\r\n';

const xor = (s: string): string =>
  [...s]
    .reduce((x, c) => x ^ c.charCodeAt(0), 0)
    .toString(16)
    .toUpperCase()
    .padStart(2, '0');

/**
 * A new-format frame of `type` at 2026-03-01 10:00:`ss` UTC with serial `serial`, valid, 60 km/h,
 * and its XOR; returns the frame and the acknowledgement it must get.
 */
function report(type: string, ss: string, serial: string): { frame: string; ack: string } {
  const body =
    `${type}${ID}|00024000260301100${ss.padStart(3, '0')}4114057728A058AE112108306000.60000066` +
    `4024.0080N00342.2280W${serial}`;
  const head = `$$${String(body.length + 8).padStart(4, '0')}`;
  const frame = head + body + xor(head + body);
  const ack = `$$0014AA${serial}`;
  return { frame: `${frame}\r\n`, ack: ack + xor(ack) };
}

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, { env: { TRACKGATE_TOTEM_PORT: '0', ...mode.env } });
  await createDevice(s, ID, { name: 'van', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.totem);
  t.teardown(() => c.end());
  return c;
}

type Row = { dateTime: string; latitude: number; longitude: number; speed: number };
const locations = async (s: TestServer, from = '2026-01-01T00:00:00Z'): Promise<Row[]> =>
  (
    await s.request('POST', `/api/devices/${ID}/locations`, {
      token: s.adminToken,
      body: { from, to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  "gateway.totem: the reference's sample (old format) is stored and answered ACK OK CR LF",
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(SAMPLE);
    t.is((await c.read(8)).toString('latin1'), 'ACK OK\r\n');
    const rows = await locations(s, '2012-01-01T00:00:00Z');
    t.is(rows.length, 1, 'stored before the ack');
    t.like(rows[0], { dateTime: '2012-01-01T12:07:00.000Z', latitude: 60, longitude: 130 });
  },
);

testInGatewayModes(
  test,
  'gateway.totem: a new-format report is stored and answered with its serial; an SOS frame raises an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const aa = report('AA', '00', '0042');
    c.write(aa.frame);
    t.is((await c.read(aa.ack.length)).toString('latin1'), aa.ack);
    const [first] = await locations(s);
    t.like(first, { dateTime: '2026-03-01T10:00:00.000Z', speed: 60 });
    t.true(Math.abs(first.latitude - 40.4001333) < 1e-6 && Math.abs(first.longitude + 3.7038) < 1e-6);
    const sos = report('01', '05', '0043');
    c.write(sos.frame);
    t.is((await c.read(sos.ack.length)).toString('latin1'), sos.ack);
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
  'gateway.totem: a frame split across writes and two frames in one write are stored and each answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const [a, b, d] = [report('AA', '10', '0001'), report('AA', '11', '0002'), report('AA', '12', '0003')];
    const one = Buffer.from(a.frame);
    for (let i = 0; i < one.length; i += 13) {
      c.write(one.subarray(i, i + 13));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.is((await c.read(a.ack.length)).toString('latin1'), a.ack);
    c.write(b.frame + d.frame);
    t.is((await c.read(b.ack.length + d.ack.length)).toString('latin1'), b.ack + d.ack);
    await until('three stored', async () => (await locations(s)).length === 3);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
  },
);
