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

const ID = '861157040554384';
/** the reference's one-line sample (tools/test-integration.py), device 123456789012345 */
const SAMPLE_ID = '123456789012345';
const SAMPLE =
  '&&o125,123456789012345,000,0,,210702235150,A,27.263505,153.037061,11,1.2,0,0,31,5125,505|1|7032|8C89802,20,0000002D,00,00,01E2|019DF0\r\n';

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_STARTEK_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, ID, { name: 'van', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.startek);
  t.teardown(() => c.end());
  return c;
}

/** `&&<index><length>,<imei>,<code>,<content><checksum>` CR LF, length and checksum computed */
function frame(imei: string, code: string, content: string): string {
  const counted = `,${imei},${code},${content}`;
  const head = `&&a${counted.length}${counted}`;
  let sum = 0;
  for (const b of Buffer.from(head, 'latin1')) sum = (sum + b) & 0xff;
  return `${head}${sum.toString(16).toUpperCase().padStart(2, '0')}\r\n`;
}

/** a 000 report of `event` at 2026-03-01 `hhmmss` UTC, 42 km/h */
const report = (event: number, hhmmss: string): string =>
  frame(
    ID,
    '000',
    `${event},,260301${hhmmss},A,40.416800,-3.703800,9,0.9,42,90,650,1000,214|7|1A2B|00C3D4,25,00000001,02,00,0514|019A|0000|0000,1,,`,
  );

const locations = async (
  s: TestServer,
  id = ID,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${id}/locations`, {
      token: s.adminToken,
      body: { from: '2020-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.startek: the first report names the device, positions are stored, an SOS event raises an alert; nothing is answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(report(0, '100000'));
    c.write(report(1, '100005'));
    await until('stored', async () => (await locations(s)).length === 2);
    t.like((await locations(s))[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4168,
      longitude: -3.7038,
      speed: 42,
      protocol: 'startek',
    });
    const alerts = await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z' });
    t.true(await c.nothingFor(300), 'iStartek devices get no acknowledgement');
  },
);

testInGatewayModes(
  test,
  'gateway.startek: a frame split across writes and two frames in one write are all stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const one = Buffer.from(report(0, '100010'));
    for (let i = 0; i < one.length; i += 9) {
      c.write(one.subarray(i, i + 9));
      await new Promise((r) => setTimeout(r, 2));
    }
    c.write(report(0, '100011') + report(0, '100012'));
    await until('three stored', async () => (await locations(s)).length === 3);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
  },
);

testInGatewayModes(
  test,
  'gateway.startek: a command goes as $$:<len>,<imei>,<text><sum> CR LF and the device answer answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(report(0, '100000'));
    await until('stored', async () => (await locations(s)).length === 1);
    await untilConnected(s, ID);
    const pending = s.request('POST', `/api/devices/${ID}/sendCommand`, {
      token: s.adminToken,
      body: { command: '900,1,1' },
    });
    const expected = `$$:24,${ID},900,1,1`;
    const written = (await c.read(expected.length + 4)).toString('latin1');
    t.true(written.startsWith(expected) && written.endsWith('\r\n'), written);
    c.write(frame(ID, '900', 'OK'));
    const r = await pending;
    t.is(r.status, 200, JSON.stringify(r.body));
    t.like(r.body.command, { status: 'answered', result: 'OK' });
  },
);

testInGatewayModes(test, "gateway.startek: the reference's sample message is stored", async (t, mode) => {
  const s = await start(t, mode);
  await createDevice(s, SAMPLE_ID, { name: 'sample', alertEmails: [] });
  const c = await connect(t, s);
  c.write(SAMPLE);
  await until('stored', async () => (await locations(s, SAMPLE_ID)).length === 1);
  t.like((await locations(s, SAMPLE_ID))[0], {
    dateTime: '2021-07-02T23:51:50.000Z',
    latitude: 27.263505,
    longitude: 153.037061,
    protocol: 'startek',
  });
});
