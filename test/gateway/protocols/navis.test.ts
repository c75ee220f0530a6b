import test, { type ExecutionContext } from 'ava';
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
import { basicRecord, flex, handshake, negotiation, ntcb } from '../../helpers/navis-frames.js';

const ID = '866795031410689';
const hex = (s: string): Buffer => Buffer.from(s, 'hex');

/** FLEX fields 1, 3, 4 (armed/alarm) and 8-14: index, event time, armed, nav state, time, position, speed, course */
const FIELDS = [0, 2, 3, 7, 8, 9, 10, 11, 12, 13];
/** a record of FIELDS: the basic record with the armed byte after the event time */
function record(index: number, seconds: number, armed = 0): Buffer {
  const r = basicRecord({ index, time: new Date(Date.UTC(2026, 2, 1, 10, 0, seconds)), lat: 55.75, lon: 37.61 });
  return Buffer.concat([r.subarray(0, 8), Buffer.from([armed]), r.subarray(8)]);
}

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_NAVIS_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, ID, { name: 'truck', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.navis);
  t.teardown(() => c.end());
  return c;
}

/** *>S and *>FLEX, each answered byte for byte (the receiver and sender ids swapped) */
async function login(t: ExecutionContext, c: TrackerClient): Promise<void> {
  c.write(handshake(ID));
  t.is((await c.read(19)).toString('hex'), '404e544300000000010000000300455e2a3c53', '*<S');
  c.write(negotiation(FIELDS));
  t.is((await c.read(25)).toString('hex'), '404e544300000000010000000900b1a02a3c464c4558b01e1e', '*<FLEX');
}

const locations = async (s: TestServer): Promise<{ dateTime: string; latitude: number; longitude: number }[]> =>
  (
    await s.request('POST', `/api/devices/${ID}/locations`, {
      token: s.adminToken,
      body: { from: '2010-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.navis: a FLEX session: *>S, *>FLEX, a ~A stored before its ack, an alarm raises an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    await login(t, c);
    c.write(flex('~A', Buffer.concat([Buffer.from([2]), record(1, 0), record(2, 5, 0x02)])));
    t.is((await c.read(4)).toString('hex'), flex('~A', Buffer.from([2])).toString('hex'));
    t.is((await locations(s)).length, 2, 'both stored when the ack arrives');
    t.like((await locations(s))[0], { dateTime: '2026-03-01T10:00:00.000Z', latitude: 55.75, longitude: 37.61 });
    const alerts = await s.request('POST', `/api/devices/${ID}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'General', dateTime: '2026-03-01T10:00:05.000Z' });
    c.write(Buffer.from([0x7f]));
    t.true(await c.nothingFor(200), 'a keep-alive is not answered');
  },
);

testInGatewayModes(
  test,
  'gateway.navis: a ~T split across writes and two ~C in one write are stored and answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    await login(t, c);
    const single = flex('~T', Buffer.concat([hex('0a000000'), record(10, 10)]));
    for (let i = 0; i < single.length; i += 5) {
      c.write(single.subarray(i, i + 5));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.is((await c.read(7)).toString('hex'), flex('~T', hex('0a000000')).toString('hex'));
    c.write(Buffer.concat([flex('~C', record(11, 11)), flex('~C', record(12, 12))]));
    t.is(
      (await c.read(14)).toString('hex'),
      flex('~C', hex('0b000000')).toString('hex') + flex('~C', hex('0c000000')).toString('hex'),
    );
    await until('three stored', async () => (await locations(s)).length === 3);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
  },
);

testInGatewayModes(test, 'gateway.navis: NTCB *>T telemetry is stored and answered *<T', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write(handshake(ID));
  await c.read(19);
  // Traccar NavisProtocolDecoderTest.testDecodeNtcb: an F5.2 record of 2016-11-11 21:00:04
  c.write(
    hex(
      '404e5443010000000000000059009adb2a3e54250000000000ff1500040b0a1008291838001200760ee600000000000000000000000f1500040b0a10ac20703fb1aec23f00000000320149668f430000000000000000000000000000000000000000000000f3808080',
    ),
  );
  t.is((await c.read(23)).toString('hex'), '404e544300000000010000000700425d2a3c5400000000');
  const stored = await locations(s);
  t.is(stored.length, 1);
  t.is(stored[0].dateTime, '2016-11-11T21:00:04.000Z');
  t.true(Math.abs(stored[0].latitude - 53.74336) < 1e-5 && Math.abs(stored[0].longitude - 87.14437) < 1e-5);
});

testInGatewayModes(test, 'gateway.navis: a command goes NTCB-wrapped and *@C answers it', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  await login(t, c);
  await untilConnected(s, ID);
  const pending = s.request('POST', `/api/devices/${ID}/sendCommand`, {
    token: s.adminToken,
    body: { command: '*!SETOUT 1Y' },
  });
  t.is((await c.read(27)).toString('hex'), '404e544300000000010000000b004f5c2a215345544f5554203159');
  c.write(ntcb('*@C SETOUT OK'));
  const r = await pending;
  t.is(r.body.command.status, 'answered', JSON.stringify(r.body));
  t.is(r.body.result, '*@C SETOUT OK');
});
