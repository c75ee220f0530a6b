import test from 'ava';
import dgram from 'node:dgram';
import { eelinkPacket, envelope } from '../../../protocols/eelink/eelink.encoder.js';
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

const IMEI = '354188048612829';
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0) / 1000;

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_EELINK_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, IMEI, { alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.eelink);
  t.teardown(() => c.end());
  return c;
}

const login = (index: number): Buffer => eelinkPacket(0x01, index, Buffer.from(`0${IMEI}0120`, 'hex'));

/**
 * A V2 location (0x12) or warning (0x14, `alarm` code) packet at T0 + `second`: 40.4168 N,
 * 3.7038 W, 650 m, 42 km/h, 90°, 9 satellites, fix valid, 4.1 V.
 */
function location(index: number, second: number, alarm?: number): Buffer {
  const b = Buffer.alloc(4 + 1 + 4 + 4 + 2 + 2 + 2 + 1 + (alarm === undefined ? 0 : 1) + 2 + 2);
  let o = b.writeUInt32BE(T0 + second, 0);
  o = b.writeUInt8(0x01, o);
  o = b.writeInt32BE(Math.round(40.4168 * 1_800_000), o);
  o = b.writeInt32BE(Math.round(-3.7038 * 1_800_000), o);
  o = b.writeInt16BE(650, o);
  o = b.writeUInt16BE(42, o);
  o = b.writeUInt16BE(90, o);
  o = b.writeUInt8(9, o);
  if (alarm !== undefined) o = b.writeUInt8(alarm, o);
  o = b.writeUInt16BE(0x0001, o);
  if (alarm === undefined) b.writeUInt16BE(4100, o);
  return eelinkPacket(alarm === undefined ? 0x12 : 0x14, index, alarm === undefined ? b : b.subarray(0, o));
}
const ack = (type: number, index: number): Buffer => eelinkPacket(type, index);

const stored = async (
  s: TestServer,
): Promise<
  { dateTime: string; latitude: number; longitude: number; altitude: number; speed: number; protocol: string }[]
> =>
  (
    await s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

/** The login answer: type 01, length 9, the index, the server's UNIX time, version 1, mask 0. */
function checkLoginAnswer(
  t: { is(a: unknown, b: unknown, m?: string): void; true(v: boolean, m?: string): void },
  answer: Buffer,
  index: number,
): void {
  t.is(answer.subarray(0, 7).toString('hex'), `6767010009${index.toString(16).padStart(4, '0')}`);
  t.true(Math.abs(answer.readUInt32BE(7) - Date.now() / 1000) < 600, 'the current time');
  t.is(answer.subarray(11).toString('hex'), '000100');
}

testInGatewayModes(
  test,
  'gateway.eelink: a login names the connection, positions are stored and acknowledged, a warning raises an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(login(1));
    checkLoginAnswer(t, await c.read(14), 1);
    c.write(location(2, 0));
    t.is((await c.read(7)).toString('hex'), ack(0x12, 2).toString('hex'));
    t.is((await stored(s)).length, 1, 'acknowledged once stored');
    const first = (await stored(s))[0];
    t.like(first, { dateTime: '2026-03-01T10:00:00.000Z', speed: 42, altitude: 650, protocol: 'eelink' });
    t.true(Math.abs(first.latitude - 40.4168) < 1e-6 && Math.abs(first.longitude + 3.7038) < 1e-6);
    c.write(location(3, 5, 0x02));
    t.is((await c.read(7)).toString('hex'), ack(0x14, 3).toString('hex'));
    const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z' });
  },
);

testInGatewayModes(
  test,
  'gateway.eelink: a packet split across writes and two packets in one write are stored, each answered',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(login(1));
    await c.read(14);
    const one = location(2, 10);
    for (let i = 0; i < one.length; i += 7) {
      c.write(one.subarray(i, i + 7));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.is((await c.read(7)).toString('hex'), ack(0x12, 2).toString('hex'));
    c.write(Buffer.concat([location(3, 11), location(4, 12)]));
    t.is((await c.read(14)).toString('hex'), Buffer.concat([ack(0x12, 3), ack(0x12, 4)]).toString('hex'));
    t.deepEqual(
      (await stored(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:10.000Z', '2026-03-01T10:00:11.000Z', '2026-03-01T10:00:12.000Z'],
    );
  },
);

testInGatewayModes(
  test,
  'gateway.eelink: a UDP datagram of two packets is stored and each packet answered in an EL envelope',
  async (t, mode) => {
    const s = await start(t, mode);
    const sock = dgram.createSocket('udp4');
    t.teardown(() => sock.close());
    const received: Buffer[] = [];
    sock.on('message', (m) => received.push(m));
    sock.send(
      envelope(IMEI, Buffer.concat([location(7, 20), location(8, 21)])),
      s.running.ports['eelink/udp'],
      '127.0.0.1',
    );
    await until('two answers', () => Buffer.concat(received).length >= 2 * 21);
    t.is(
      Buffer.concat(received).toString('hex'),
      Buffer.concat([envelope(IMEI, ack(0x12, 7)), envelope(IMEI, ack(0x12, 8))]).toString('hex'),
    );
    t.deepEqual(
      (await stored(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:20.000Z', '2026-03-01T10:00:21.000Z'],
    );
  },
);

testInGatewayModes(
  test,
  'gateway.eelink: a Text command goes as a 0x80 downlink packet and the 0x80 answer answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(login(1));
    await c.read(14);
    await untilConnected(s, IMEI);
    const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'RELAY,1#' },
    });
    const expected = Buffer.from('676780000f0000010000000052454c41592c3123', 'hex');
    t.is((await c.read(expected.length)).toString('hex'), expected.toString('hex'));
    const text = Buffer.from('RELAY:OK', 'latin1');
    c.write(eelinkPacket(0x80, 5, Buffer.concat([Buffer.from('0100000000', 'hex'), text])));
    const r = await pending;
    t.is(r.body.command.status, 'answered', JSON.stringify(r.body));
    t.is(r.body.result, 'RELAY:OK');
  },
);

testInGatewayModes(
  test,
  'gateway.eelink: a command to a device heard over UDP goes to its address in an EL envelope',
  async (t, mode) => {
    const s = await start(t, mode);
    const sock = dgram.createSocket('udp4');
    t.teardown(() => sock.close());
    const received: Buffer[] = [];
    sock.on('message', (m) => received.push(m));
    const port = s.running.ports['eelink/udp'];
    sock.send(envelope(IMEI, location(9, 30)), port, '127.0.0.1');
    await until('the datagram answered', () => received.length === 1);
    const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'WHERE#' },
    });
    const downlink = envelope(IMEI, Buffer.from('676780000d00000100000000574845524523', 'hex'));
    await until('the command datagram', () => received.length === 2);
    t.is(received[1].toString('hex'), downlink.toString('hex'));
    const text = Buffer.from(
      'Lat:N40.4168,Lon:W3.7038,Course:90.00,Speed:42.00km/h,DateTime:2026-03-01 10:00:40',
      'latin1',
    );
    sock.send(
      envelope(IMEI, eelinkPacket(0x80, 10, Buffer.concat([Buffer.from('0100000000', 'hex'), text]))),
      port,
      '127.0.0.1',
    );
    const r = await pending;
    t.is(r.body.command.status, 'answered', JSON.stringify(r.body));
    await until('the answer stored as a position too', async () => (await stored(s)).length === 2);
  },
);
