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

const ID = '8800000015';
type T = Teardown;

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_WATCH_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, ID, { name: 'kid', alertEmails: [] });
  return s;
}

async function connect(t: T, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.watch);
  t.teardown(() => c.end());
  return c;
}

/** A `[SG*<id>*<len>*<content>]` frame with its length in hex. */
const frame = (content: string, maker = 'SG'): string =>
  `[${maker}*${ID}*${content.length.toString(16).padStart(4, '0').toUpperCase()}*${content}]`;
const ud = (time: string, status = '00000000', type = 'UD'): string =>
  frame(
    `${type},010326,${time},A,40.416800,N,3.703800,W,42.00,90.0,650.0,9,80,77,1200,0,${status},1,1,214,7,1234,5678,60,0`,
  );

const locations = async (
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; longitude: number; protocol: string; alerts?: string[] }[]> =>
  (
    await s.request('POST', `/api/devices/${ID}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

/** Reads one `[…]` frame the server sent. */
async function readFrame(c: TrackerClient): Promise<string> {
  let text = '';
  while (!text.endsWith(']')) text += (await c.read(1)).toString('latin1');
  return text;
}

testInGatewayModes(
  test,
  'gateway.watch: LK is answered, UD positions are stored unanswered, an AL alarm is answered and becomes an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(frame('LK,0,0,100'));
    t.is(await readFrame(c), '[SG*8800000015*0002*LK]', 'the link frame identifies the watch and is answered');
    c.write(ud('100000'));
    t.true(await c.nothingFor(300), 'a position gets no answer');
    await until('stored', async () => (await locations(s)).length === 1);
    t.like((await locations(s))[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4168,
      longitude: -3.7038,
      protocol: 'watch',
    });
    c.write(ud('100005', '00200000', 'AL'));
    t.is(await readFrame(c), '[SG*8800000015*0002*AL]');
    const alerts = await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'FallDown', dateTime: '2026-03-01T10:00:05.000Z' });
    const last = await s.request('GET', `/api/devices/${ID}/lastLocation`, { token: s.adminToken });
    t.like(last.body.lastLocation, { dateTime: '2026-03-01T10:00:05.000Z', hasCriticalAlert: true });
  },
);

testInGatewayModes(
  test,
  'gateway.watch: a frame split across writes and two frames in one write are both handled',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const lk = Buffer.from(frame('LK', '3G'));
    for (let i = 0; i < lk.length; i += 5) {
      c.write(lk.subarray(i, i + 5));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.is(await readFrame(c), '[3G*8800000015*0002*LK]', 'answered with the maker the watch used');
    c.write(ud('100010', '00010000', 'AL_LTE') + ud('100011'));
    t.is(await readFrame(c), '[SG*8800000015*0002*AL]', 'each frame is answered with its own maker');
    await until('both stored', async () => (await locations(s)).length === 2);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z'],
    );
  },
);

testInGatewayModes(
  test,
  "gateway.watch: a command goes framed with the watch's maker and its echo answers it",
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(frame('LK', '3G'));
    await readFrame(c);
    await untilConnected(s, ID);
    const pending = s.request('POST', `/api/devices/${ID}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'CR' },
    });
    t.is(await readFrame(c), '[3G*8800000015*0002*CR]');
    c.write(frame('LK', '3G'));
    t.is(await readFrame(c), '[3G*8800000015*0002*LK]', 'a link frame meanwhile is answered, and answers no command');
    c.write(frame('CR', '3G'));
    const r = await pending;
    t.is(r.body.command.status, 'answered', JSON.stringify(r.body));
    t.is(r.body.result, 'CR');
  },
);

testInGatewayModes(test, 'gateway.watch: an unknown watch gets no answer and nothing is stored', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write('[SG*1111111111*0002*LK]');
  t.true(await c.nothingFor(300));
  t.deepEqual(await locations(s), []);
});
