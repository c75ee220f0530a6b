import dgram from 'node:dgram';
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

const ID = '861230043907626';
/** the device of the reference's one-line sample (tools/test-integration.py) */
const SAMPLE_ID = '123456789012345';

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_WIALON_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, ID, { name: 'truck', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.wialon);
  t.teardown(() => c.end());
  return c;
}

const text = async (c: TrackerClient, expected: string): Promise<string> =>
  (await c.read(expected.length)).toString('latin1');

/** IPS 1.1 data fields at 2026-03-01 10:00:<ss> UTC, 40.4168 N 3.7038 W, 42 km/h, 9 satellites */
const fields = (ss: number): string => `010326;1000${String(ss).padStart(2, '0')};4025.0080;N;00342.2280;W;42;90;650;9`;

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
  'gateway.wialon: #L# names the device, #D# after it is stored and then answered #AD#1',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(`#L#${ID};NA\r\n`);
    t.is(await text(c, '#AL#1\r\n'), '#AL#1\r\n');
    c.write(`#D#${fields(0)};1.2;0;0;;NA;fuel:2:45.8\r\n`);
    t.is(await text(c, '#AD#1\r\n'), '#AD#1\r\n');
    const stored = await locations(s);
    t.is(stored.length, 1, 'stored before the acknowledgement');
    t.like(stored[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4168,
      longitude: -3.7038,
      speed: 42,
      protocol: 'wialon',
    });
    c.write('#P#\r\n');
    t.is(await text(c, '#AP#\r\n'), '#AP#\r\n');
  },
);

testInGatewayModes(
  test,
  'gateway.wialon: a packet split across writes, two in one write and a black box are all stored',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(`#L#2.0;${ID};NA;`);
    c.write('16C7\r\n');
    t.is(await text(c, '#AL#1\r\n'), '#AL#1\r\n');
    const one = Buffer.from(`#SD#${fields(1)}\r\n`);
    for (let i = 0; i < one.length; i += 7) {
      c.write(one.subarray(i, i + 7));
      await new Promise((r) => setTimeout(r, 2));
    }
    c.write(`#SD#${fields(2)}\r\n#SD#${fields(3)}\r\n`);
    t.is(await text(c, '#AD#1\r\n#AD#1\r\n#AD#1\r\n'), '#AD#1\r\n#AD#1\r\n#AD#1\r\n');
    c.write(`#B#${fields(4)}|${fields(5)}\r\n`);
    t.is(await text(c, '#AB#2\r\n'), '#AB#2\r\n');
    await until('five stored', async () => (await locations(s)).length === 5);
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime.substring(11, 19)),
      ['10:00:01', '10:00:02', '10:00:03', '10:00:04', '10:00:05'],
    );
  },
);

testInGatewayModes(test, 'gateway.wialon: a UDP datagram names its device, is stored and answered', async (t, mode) => {
  const s = await start(t, mode);
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
  sock.send(Buffer.from(`${ID}#SD#${fields(6)}\r\n`), s.running.ports['wialon/udp'], '127.0.0.1');
  t.is((await reply).toString('latin1'), '#AD#1\r\n');
  const stored = await locations(s);
  t.is(stored.length, 1);
  t.like(stored[0], { dateTime: '2026-03-01T10:00:06.000Z', protocol: 'wialon' });
  const second = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
  sock.send(Buffer.from(`2.0;${ID}#P#\r\n`), s.running.ports['wialon/udp'], '127.0.0.1');
  t.is((await second).toString('latin1'), '#AP#\r\n');
});

testInGatewayModes(test, "gateway.wialon: the reference's one-line sample is stored", async (t, mode) => {
  const s = await start(t, mode);
  await createDevice(s, SAMPLE_ID, { name: 'sample', alertEmails: [] });
  const c = await connect(t, s);
  c.write('#L#123456789012345;test\r\n#SD#010112;123900;6000.0000;N;13000.0000;E;0;0;0;4\r\n');
  t.is(await text(c, '#AL#1\r\n#AD#1\r\n'), '#AL#1\r\n#AD#1\r\n');
  const stored = await locations(s, SAMPLE_ID);
  t.is(stored.length, 1);
  t.like(stored[0], { dateTime: '2012-01-01T12:39:00.000Z', latitude: 60, longitude: 130, protocol: 'wialon' });
});

testInGatewayModes(test, 'gateway.wialon: an unknown device gets no answer to its login', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write('#L#999999999999999;NA\r\n');
  t.true(await c.nothingFor(300), 'Traccar answers an unknown device nothing');
});

testInGatewayModes(
  test,
  'gateway.wialon: a command goes as its text and CR LF and the #M# after it answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(`#L#${ID};NA\r\n`);
    t.is(await text(c, '#AL#1\r\n'), '#AL#1\r\n');
    await untilConnected(s, ID);
    const pending = s.request('POST', `/api/devices/${ID}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'VER?' },
    });
    t.is(await text(c, 'VER?\r\n'), 'VER?\r\n');
    c.write('#M#FW 1.2.3\r\n');
    t.is(await text(c, '#AM#1\r\n'), '#AM#1\r\n');
    const r = await pending;
    t.is(r.status, 200, JSON.stringify(r.body));
    t.like(r.body.command, { status: 'answered', result: 'FW 1.2.3' });
  },
);
