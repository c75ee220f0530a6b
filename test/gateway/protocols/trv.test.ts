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

const ID = '353456789012345';

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_TRV_PORT: '0', TRACKGATE_COMMAND_WAIT: '1', ...mode.env },
  });
  await createDevice(s, ID, { name: 'kid', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.trv);
  t.teardown(() => c.end());
  return c;
}

const text = async (c: TrackerClient, expected: string): Promise<string> =>
  (await c.read(expected.length)).toString('latin1');

/** An AP01 (or AP10 with an alarm code) position at 2026-03-01 10:00:<ss> UTC, 40.4168 N 3.7038 W, 12.5 km/h */
const position = (ss: number, alarm?: string): string =>
  `IW${alarm ? 'AP10' : 'AP01'}260301A4025.0080N00342.2280W012.5` +
  `1000${String(ss).padStart(2, '0')}090.0006000908000102,214,7,1234,5678${alarm ? `,${alarm},es,00` : ''}` +
  ',HOME|74-DE-2B-44-88-8C|97#';

const locations = async (
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${ID}/locations`, {
      token: s.adminToken,
      body: { from: '2000-01-01T00:00:00Z', to: '2030-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.trv: the IW login gets the server time, AP01 is stored before IWBP01#, AP10 SOS becomes an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const before = Date.now();
    c.write(`IWAP00${ID}#`);
    const login = await text(c, 'IWBP00,20260301100000,0#');
    const at = /^IWBP00,(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2}),0#$/.exec(login);
    t.truthy(at, login);
    const [y, mo, d, h, mi, se] = (at ?? []).slice(1).map(Number);
    const sent = Date.UTC(y, mo - 1, d, h, mi, se);
    t.true(sent >= Math.floor(before / 1000) * 1000 && sent <= Date.now(), 'UTC, the time of the login');
    c.write(position(0));
    t.is(await text(c, 'IWBP01#'), 'IWBP01#');
    const stored = await locations(s);
    t.is(stored.length, 1, 'stored before the acknowledgement');
    t.like(stored[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4168,
      longitude: -3.7038,
      speed: 12.5,
      protocol: 'trv',
    });
    c.write(position(5, '01'));
    t.is(await text(c, 'IWBP10#'), 'IWBP10#');
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
  'gateway.trv: a message split across writes and two in one write are stored and answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(`TRVAP00${ID}#`);
    t.is(await text(c, 'TRVBP00#'), 'TRVBP00#');
    const one = Buffer.from(position(1).replace(/^IW/, 'TRV'));
    for (let i = 0; i < one.length; i += 9) {
      c.write(one.subarray(i, i + 9));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.is(await text(c, 'TRVBP01#'), 'TRVBP01#');
    c.write(position(2).replace(/^IW/, 'TRV') + position(3).replace(/^IW/, 'TRV'));
    t.is(await text(c, 'TRVBP01#TRVBP01#'), 'TRVBP01#TRVBP01#');
    await until('three stored', async () => (await locations(s)).length === 3);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime.substring(11, 19)),
      ['10:00:01', '10:00:02', '10:00:03'],
    );
  },
);

testInGatewayModes(
  test,
  'gateway.trv: heart rate is answered; the ignore list and a bare time get no answer',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(`IWAP00${ID}#`);
    await text(c, 'IWBP00,20260301100000,0#');
    c.write('IWAP12,080835,+491773329827#IWAPXL,080835#IWAP49,68#');
    t.is(await text(c, 'IWBP49#'), 'IWBP49#', 'the first answer is the heart rate one');
    t.true(await c.nothingFor(300));
  },
);

testInGatewayModes(test, 'gateway.trv: an unknown watch gets no answer to its login', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write('IWAP00999999999999999#');
  t.true(await c.nothingFor(300));
});

testInGatewayModes(test, "gateway.trv: a command goes as <vendor><text>#, the watch's own vendor", async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write(`IWAP00${ID}#`);
  await text(c, 'IWBP00,20260301100000,0#');
  await untilConnected(s, ID);
  const pending = s.request('POST', `/api/devices/${ID}/sendCommand`, {
    token: s.adminToken,
    body: { command: 'BP16' },
  });
  t.is(await text(c, 'IWBP16#'), 'IWBP16#');
  const r = await pending;
  t.is(r.status, 200, JSON.stringify(r.body));
});
