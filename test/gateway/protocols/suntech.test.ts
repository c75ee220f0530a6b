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

const ID = '205027329';
type T = Teardown;

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_SUNTECH_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, ID, { name: 'truck', alertEmails: [] });
  return s;
}

async function connect(t: T, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.suntech);
  t.teardown(() => c.end());
  return c;
}

/** A legacy ST300 report of `type` at 2026-03-01 `time` UTC, then its type's field (status / alert id) and CR. */
const report = (type: string, time: string, last: string): string =>
  `ST300${type};${ID};03;374;20260301;${time};177b38;+40.416800;-003.703800;042.000;090.00;9;1;1000;12.11;100000;${last}\r`;

const locations = async (
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${ID}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.suntech: the first report identifies the device, positions are stored and an alert raised; nothing is answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(report('STT', '10:00:00', '1;0312'));
    c.write(report('ALT', '10:00:05', '42'));
    await until('stored', async () => (await locations(s)).length === 2);
    t.like((await locations(s))[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4168,
      longitude: -3.7038,
      speed: 42,
      protocol: 'suntech',
    });
    const alerts = await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z' });
    c.write(`ST300ALV;${ID}\r`);
    t.true(await c.nothingFor(300), 'Suntech devices get no acknowledgement');
  },
);

testInGatewayModes(
  test,
  'gateway.suntech: a report split across writes and two reports in one write are both stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const one = Buffer.from(report('STT', '10:00:10', '1;0313'));
    for (let i = 0; i < one.length; i += 9) {
      c.write(one.subarray(i, i + 9));
      await new Promise((r) => setTimeout(r, 2));
    }
    c.write(report('STT', '10:00:11', '1;0314') + report('STT', '10:00:12', '1;0315'));
    await until('three stored', async () => (await locations(s)).length === 3);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
  },
);

testInGatewayModes(
  test,
  "gateway.suntech: a command goes with the device's model prefix and its CMD;Res answers it",
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(report('STT', '10:00:00', '1;0312'));
    await until('stored', async () => (await locations(s)).length === 1);
    await untilConnected(s, ID);
    const pending = s.request('POST', `/api/devices/${ID}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'Enable1' },
    });
    const expected = `ST300CMD;${ID};02;Enable1\r`;
    t.is((await c.read(expected.length)).toString('latin1'), expected);
    c.write(`ST300CMD;Res;${ID};374;Enable1\r`);
    const r = await pending;
    t.is(r.body.command.status, 'answered', JSON.stringify(r.body));
    t.is(r.body.result, '374;Enable1');
  },
);
