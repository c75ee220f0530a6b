import test from 'ava';
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

const ID = '358174067149865';
/** the device of the reference's one-line sample (tools/test-integration.py) */
const SAMPLE_ID = '123456789012345';

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_LAIPAC_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, ID, { name: 'truck', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.laipac);
  t.teardown(() => c.end());
  return c;
}

const text = async (c: TrackerClient, expected: string): Promise<string> =>
  (await c.read(expected.length)).toString('latin1');

const xor = (body: string): string => {
  let x = 0;
  for (const ch of body) x ^= ch.charCodeAt(0);
  return x.toString(16).toUpperCase().padStart(2, '0');
};
const sentence = (body: string): string => `$${body}*${xor(body)}`;

/** an $AVRMC at 2026-03-01 10:00:<ss> UTC, 40.4168 N 3.7038 W, 10 knots, with `status` and `event` */
const avrmc = (ss: number, status = 'R', event = '0'): string =>
  sentence(
    `AVRMC,${ID},1000${String(ss).padStart(2, '0')},${status},4025.0080,N,00342.2280,W,10.00,90.00,010326,${event},3455,119,1,0,0`,
  );

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
  'gateway.laipac: an SOS asking for an ack is stored, raises an alert, then gets $EAVACK and $AVCFG',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const frame = avrmc(0, 'r', '3');
    c.write(`${frame}\r\n`);
    const checksum = frame.substring(frame.length - 2);
    const ack = `${sentence(`EAVACK,3,${checksum}`)}\r\n${sentence('AVCFG,00000000,d')}\r\n`;
    t.is(await text(c, ack), ack);
    const stored = await locations(s);
    t.is(stored.length, 1, 'stored before the acknowledgement');
    t.like(stored[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4168,
      longitude: -3.7038,
      protocol: 'laipac',
    });
    t.true(Math.abs(stored[0].speed - 18.52) < 1e-6, 'knots to km/h');
    const alerts = await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:00.000Z' });
    c.write(avrmc(1));
    c.write('\r\n');
    await until('second stored', async () => (await locations(s)).length === 2);
    t.true(await c.nothingFor(300), 'an upper-case status without an event asks for nothing');
  },
);

testInGatewayModes(test, 'gateway.laipac: $ECHK is echoed back', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  const echk = sentence(`ECHK,${ID},0`);
  c.write(`${echk}\r\n`);
  t.is(await text(c, `${echk}\r\n`), `${echk}\r\n`);
});

testInGatewayModes(
  test,
  'gateway.laipac: a sentence split across writes and two in one write are stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const one = Buffer.from(`${avrmc(10)}\r\n`);
    for (let i = 0; i < one.length; i += 9) {
      c.write(one.subarray(i, i + 9));
      await new Promise((r) => setTimeout(r, 2));
    }
    c.write(`${avrmc(11)}\r\n${avrmc(12)}\r\n`);
    await until('three stored', async () => (await locations(s)).length === 3);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
  },
);

testInGatewayModes(
  test,
  "gateway.laipac: the reference's one-line sample is stored and acknowledged",
  async (t, mode) => {
    const s = await start(t, mode);
    await createDevice(s, SAMPLE_ID, { name: 'sample', alertEmails: [] });
    const c = await connect(t, s);
    // its checksum (17) is wrong: accepted under the default checksum policy
    c.write('$AVRMC,123456789012345,124800,a,6000.0000,N,13000.0000,E,0.00,0.00,010112,0,3.727,17,1,0,0*17\r\n');
    const ack = `${sentence('EAVACK,0,17')}\r\n`;
    t.is(await text(c, ack), ack);
    const stored = await locations(s, SAMPLE_ID);
    t.is(stored.length, 1);
    t.like(stored[0], { dateTime: '2012-01-01T12:48:00.000Z', latitude: 60, longitude: 130, protocol: 'laipac' });
  },
);

testInGatewayModes(test, 'gateway.laipac: a command goes as a $ sentence with its XOR', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write(`${avrmc(20)}\r\n`);
  await until('stored', async () => (await locations(s)).length === 1);
  await untilConnected(s, ID);
  // Laipac answers echo nothing of a command: the request would wait out TRACKGATE_COMMAND_WAIT
  s.request('POST', `/api/devices/${ID}/sendCommand`, {
    token: s.adminToken,
    body: { command: 'AVREQ,00000000,1' },
  }).catch(() => undefined);
  const expected = `${sentence('AVREQ,00000000,1')}\r\n`;
  t.is(await text(c, expected), expected);
});
