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

const IMEI = '135790246811220';
const ENV = { TRACKGATE_GL200_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' };

/** `yyyyMMddHHmmss` of 2026-03-01 10:00:00 UTC plus `i` seconds */
const stamp = (i: number): string =>
  new Date(Date.UTC(2026, 2, 1, 10, 0, i)).toISOString().replace(/[-:T]/g, '').slice(0, 14);
const count = (n: number): string => n.toString(16).toUpperCase().padStart(4, '0');
/** a GV300 (protocol version 06...) report of type `type` with one fix at second `i` */
const report = (type: string, i: number, n: number, lat = 40.4168): string =>
  `+RESP:GT${type},060100,${IMEI},,0,0,1,1,4.3,92,70.0,-3.703800,${lat.toFixed(6)},${stamp(i)},0214,0007,18d8,6141,00,,${stamp(i + 1)},${count(n)}$`;
const sack = (n: number): string => `+SACK:${count(n)}$`;

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, { env: { ...ENV, ...mode.env } });
  await createDevice(s, IMEI, { name: 'queclink', alertEmails: [] });
  return s;
}

async function connect(t: { teardown(fn: () => unknown): void }, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.gl200);
  t.teardown(() => c.end());
  return c;
}

async function read(c: TrackerClient, text: string): Promise<string> {
  return (await c.read(Buffer.byteLength(text))).toString('latin1');
}

async function locations(
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; longitude: number; protocol: string; alerts?: string[] }[]> {
  return (
    await s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;
}

testInGatewayModes(
  test,
  'gateway.gl200: the first report names the device, is stored and visible through REST, then acknowledged +SACK:<count>$',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(report('FRI', 0, 1));
    t.is(await read(c, sack(1)), sack(1));
    const stored = await locations(s);
    t.is(stored.length, 1);
    t.like(stored[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4168,
      longitude: -3.7038,
      protocol: 'gl200',
    });
    const device = await s.request('GET', `/api/devices/${IMEI}`, { token: s.adminToken });
    t.is(device.body.device.protocol, 'gl200');
  },
);

testInGatewayModes(
  test,
  'gateway.gl200: an SOS report becomes a SOSButton alert; the heartbeat gets +SACK:GTHBD',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(report('SOS', 0, 2));
    t.is(await read(c, sack(2)), sack(2));
    const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.deepEqual(
      alerts.body.alerts.map((a: { alertName: string }) => a.alertName),
      ['SOSButton'],
    );
    t.like((await locations(s))[0], { alerts: ['SOSButton'] });
    c.write(`+ACK:GTHBD,060100,${IMEI},,${stamp(5)},0003$`);
    t.is(await read(c, '+SACK:GTHBD,060100,0003$'), '+SACK:GTHBD,060100,0003$');
  },
);

testInGatewayModes(
  test,
  'gateway.gl200: a report split across writes and two reports in one write are each stored and acknowledged',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const first = report('FRI', 0, 1);
    c.write(first.slice(0, 50));
    await new Promise((r) => setTimeout(r, 50));
    c.write(first.slice(50));
    t.is(await read(c, sack(1)), sack(1));
    c.write(`\r\n${report('FRI', 10, 2, 40.5)}\r\n${report('FRI', 20, 3, 40.6)}`);
    t.is(await read(c, sack(2) + sack(3)), sack(2) + sack(3));
    t.deepEqual(
      (await locations(s)).map((l) => l.latitude),
      [40.4168, 40.5, 40.6],
    );
  },
);

testInGatewayModes(
  test,
  'gateway.gl200: a report of an unknown device is not stored and not acknowledged',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(report('FRI', 0, 1).replace(IMEI, '860599000000001'));
    t.true(await c.nothingFor(400));
  },
);

testInGatewayModes(test, 'gateway.gl200: a UDP datagram is stored and acknowledged to its sender', async (t, mode) => {
  const s = await start(t, mode);
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
  sock.send(Buffer.from(report('FRI', 0, 7)), s.running.ports['gl200/udp'], '127.0.0.1');
  t.is((await reply).toString('latin1'), sack(7));
  t.like((await locations(s))[0], { dateTime: '2026-03-01T10:00:00.000Z', protocol: 'gl200' });
});

testInGatewayModes(
  test,
  'gateway.gl200: an online command is written with its $ and its +ACK (command word and serial) answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(report('FRI', 0, 1));
    t.is(await read(c, sack(1)), sack(1));
    const command = 'AT+GTOUT=gv300,1,,,0,0,0,0,0,0,0,,,,,,,001F';
    await untilConnected(s, IMEI);
    const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, { token: s.adminToken, body: { command } });
    t.is(await read(c, `${command}$`), `${command}$`);
    // an acknowledgement of another command (other serial) does not answer it
    c.write(`+ACK:GTOUT,060100,${IMEI},,0020,${stamp(2)},0004$`);
    t.is(await read(c, sack(4)), sack(4));
    const answer = `+ACK:GTOUT,060100,${IMEI},,001F,${stamp(3)},0005`;
    c.write(`${answer}$`);
    t.is(await read(c, sack(5)), sack(5));
    const r = await pending;
    t.is(r.status, 200, JSON.stringify(r.body));
    t.is(r.body.result, answer);
    t.like(r.body.command, { status: 'answered', result: answer });
    await until(
      'answered in the list',
      async () =>
        (await s.request('GET', `/api/devices/${IMEI}/commands`, { token: s.adminToken })).body.commands[0].status ===
        'answered',
    );
  },
);
