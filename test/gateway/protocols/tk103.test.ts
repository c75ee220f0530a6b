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
import { tk103Sentence, type Tk103Fix } from '../../helpers/tk103-frames.js';

const ID = '013612345678';
const ENV = { TRACKGATE_TK103_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' };
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const fix = (i: number): Tk103Fix => ({
  time: new Date(T0 + i * 1000),
  lat: 40.4168,
  lon: -3.7038,
  speedKmh: 42,
  course: 90,
});
type T = { teardown(fn: () => unknown): void };

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, { env: { ...ENV, ...mode.env } });
  await createDevice(s, ID, { alertEmails: [] });
  return s;
}

async function connect(t: T, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.tk103);
  t.teardown(() => c.end());
  return c;
}

const stored = async (
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${ID}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

const text = async (c: TrackerClient, expected: string): Promise<string> =>
  (await c.read(expected.length)).toString('latin1');

testInGatewayModes(
  test,
  'gateway.tk103: handshake and login get AP01HSO and AP05; positions are stored; a BO01 SOS is answered AS01 and becomes an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(`(${ID}BP00000${ID}HSO)`);
    t.is(await text(c, `(${ID}AP01HSO)`), `(${ID}AP01HSO)`, 'the first frame names the device');
    c.write(tk103Sentence(ID, 'BP05', fix(0), `000${ID}`));
    t.is(await text(c, `(${ID}AP05)`), `(${ID}AP05)`);
    c.write(tk103Sentence(ID, 'BR00', fix(1)));
    c.write(tk103Sentence(ID, 'BO01', fix(2), '2'));
    t.is(await text(c, `(${ID}AS012)`), `(${ID}AS012)`);
    const list = await stored(s);
    t.is(list.length, 3);
    t.like(list[1], { dateTime: '2026-03-01T10:00:01.000Z', speed: 42, protocol: 'tk103' });
    t.true(Math.abs(list[1].latitude - 40.4168) < 1e-4 && Math.abs(list[1].longitude - -3.7038) < 1e-4);
    const alerts = await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:02.000Z' });
  },
);

testInGatewayModes(
  test,
  'gateway.tk103: a sentence split across writes and two in one write are both stored and answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const login = tk103Sentence(ID, 'BP05', fix(0), `000${ID}`);
    for (let i = 0; i < login.length; i += 7) {
      c.write(login.substring(i, i + 7));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.is(await text(c, `(${ID}AP05)`), `(${ID}AP05)`);
    c.write(tk103Sentence(ID, 'BO01', fix(1), '5') + tk103Sentence(ID, 'BO01', fix(2), '1'));
    t.is(await text(c, `(${ID}AS015)(${ID}AS011)`), `(${ID}AS015)(${ID}AS011)`);
    t.is((await stored(s)).length, 3);
  },
);

testInGatewayModes(
  test,
  'gateway.tk103: a UDP login datagram is stored and answered to its sender',
  async (t, mode) => {
    const s = await start(t, mode);
    const sock = dgram.createSocket('udp4');
    t.teardown(() => sock.close());
    const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
    sock.send(Buffer.from(tk103Sentence(ID, 'BP05', fix(0), `000${ID}`)), s.running.ports['tk103/udp'], '127.0.0.1');
    t.is((await reply).toString('latin1'), `(${ID}AP05)`);
    t.is((await stored(s)).length, 1);
  },
);

testInGatewayModes(
  test,
  'gateway.tk103: a command is written as (<id><text>) and a ZC03 free-text answer answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(tk103Sentence(ID, 'BR00', fix(0)));
    await until('stored', async () => (await stored(s)).length === 1);
    await untilConnected(s, ID);
    const pending = s.request('POST', `/api/devices/${ID}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'AV010' },
    });
    t.is(await text(c, `(${ID}AV010)`), `(${ID}AV010)`);
    c.write(`(${ID},ZC03,010326,100005,$Notice: oil cut (relay 1) done$)`);
    const r = await pending;
    t.is(r.status, 200, JSON.stringify(r.body));
    t.like(r.body.command, { status: 'answered', result: 'Notice: oil cut (relay 1) done' });
  },
);
