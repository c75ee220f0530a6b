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

/** the unit id of the frames: an IMEI, written as u64 in binary frames */
const IMEI = '352964052096642';
const ENV = { TRACKGATE_ATRACK_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' };
/** 2026-03-01 10:00:00 UTC in UNIX seconds */
const T0 = Date.UTC(2026, 2, 1, 10) / 1000;

const unitId = (imei = IMEI): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(imei));
  return b;
};

/** one binary record (no custom fields): fix at T0 + `i` s, 40.4168 N / `lon`, 42 km/h, report type 2 */
function record(i: number, lon = -3.7038): Buffer {
  const b = Buffer.alloc(41);
  b.writeUInt32BE(T0 + i, 0);
  b.writeUInt32BE(T0 + i, 4);
  b.writeUInt32BE(T0 + i, 8);
  b.writeInt32BE(Math.round(lon * 1e6), 12);
  b.writeInt32BE(40_416_800, 16);
  b.writeUInt16BE(90, 20); // course
  b[22] = 2; // report type
  b.writeUInt32BE(1234, 23); // odometer, 0.1 km
  b.writeUInt16BE(9, 27); // hdop
  b[29] = 1; // inputs
  b.writeUInt16BE(42, 30); // speed km/h
  // outputs, adc, empty driver id, temperatures 0, empty message
  return b;
}

/** a binary `@P` report of `records`, sequence `seq` */
function binary(seq: number, records: Buffer[], imei = IMEI): Buffer {
  const body = Buffer.concat(records);
  const head = Buffer.alloc(16);
  head.write('@P', 0, 'latin1');
  head.writeUInt16BE(body.length + 10, 4);
  head.writeUInt16BE(seq, 6);
  unitId(imei).copy(head, 8);
  return Buffer.concat([head, body]);
}
const ack = (seq: number, id: Buffer = unitId()): string =>
  Buffer.concat([Buffer.from([0xfe, 0x02]), id, Buffer.from([seq >> 8, seq & 0xff])]).toString('hex');

/** a text `@P,…` report: its length field counts from the comma after it to the end */
function textReport(seq: number, i: number): { frame: string; length: number } {
  const rest = `,${seq},${IMEI},${T0 + i},${T0 + i},${T0 + i},-3703800,40416800,90,2,1234,9,1,42,0,0,,2000,2000,\r\n`;
  return { frame: `@P,1A2B,${rest.length}${rest}`, length: rest.length };
}

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, { env: { ...ENV, ...mode.env } });
  await createDevice(s, IMEI, { name: 'atrack', alertEmails: [] });
  return s;
}

async function connect(t: Teardown, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.atrack);
  t.teardown(() => c.end());
  return c;
}

const readHex = async (c: TrackerClient, hex: string): Promise<string> =>
  (await c.read(hex.length / 2)).toString('hex');

async function locations(
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> {
  return (
    await s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;
}

testInGatewayModes(
  test,
  'gateway.atrack: a keep-alive is echoed; a binary report is stored, then acknowledged FE 02 + unit id + sequence',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const keepAlive = `fe02${unitId().toString('hex')}0007`;
    c.write(Buffer.from(keepAlive, 'hex'));
    t.is(await readHex(c, keepAlive), keepAlive);
    c.write(binary(0x01e0, [record(0), record(5, -3.7)]));
    t.is(await readHex(c, ack(0x01e0)), ack(0x01e0));
    // the ack is written only after the commit: both positions are there once it has arrived
    const stored = await locations(s);
    t.is(stored.length, 2);
    t.like(stored[0], {
      dateTime: '2026-03-01T10:00:00.000Z',
      latitude: 40.4168,
      longitude: -3.7038,
      speed: 42,
      protocol: 'atrack',
    });
    t.like(stored[1], { dateTime: '2026-03-01T10:00:05.000Z', longitude: -3.7 });
  },
);

testInGatewayModes(
  test,
  'gateway.atrack: a text report is stored and acknowledged with its length field as the u64',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const { frame, length } = textReport(0x1234, 10);
    c.write(frame);
    const lengthId = Buffer.alloc(8);
    lengthId.writeBigUInt64BE(BigInt(length));
    t.is(await readHex(c, ack(0x1234, lengthId)), ack(0x1234, lengthId));
    t.like((await locations(s))[0], { dateTime: '2026-03-01T10:00:10.000Z', latitude: 40.4168, speed: 42 });
  },
);

testInGatewayModes(
  test,
  'gateway.atrack: a report split across writes and two reports in one write are each stored and acknowledged',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const first = binary(1, [record(0)]);
    c.write(first.subarray(0, 7));
    await new Promise((r) => setTimeout(r, 30));
    c.write(first.subarray(7, 30));
    await new Promise((r) => setTimeout(r, 30));
    c.write(first.subarray(30));
    t.is(await readHex(c, ack(1)), ack(1));
    const text = textReport(3, 20);
    c.write(Buffer.concat([binary(2, [record(10)]), Buffer.from(text.frame, 'latin1')]));
    const lengthId = Buffer.alloc(8);
    lengthId.writeBigUInt64BE(BigInt(text.length));
    t.is(await readHex(c, ack(2) + ack(3, lengthId)), ack(2) + ack(3, lengthId));
    t.deepEqual(
      (await locations(s)).map((l) => l.dateTime),
      ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:10.000Z', '2026-03-01T10:00:20.000Z'],
    );
  },
);

testInGatewayModes(
  test,
  'gateway.atrack: a report of an unknown unit is not stored and not acknowledged',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(binary(1, [record(0)], '352964052096643'));
    t.true(await c.nothingFor(400));
  },
);

testInGatewayModes(test, 'gateway.atrack: a UDP datagram is stored and acknowledged to its sender', async (t, mode) => {
  const s = await start(t, mode);
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const reply = new Promise<Buffer>((r) => sock.once('message', (m) => r(m)));
  sock.send(binary(0x0102, [record(30)]), s.running.ports['atrack/udp'], '127.0.0.1');
  t.is((await reply).toString('hex'), ack(0x0102));
  t.like((await locations(s))[0], { dateTime: '2026-03-01T10:00:30.000Z', protocol: 'atrack' });
});

testInGatewayModes(
  test,
  'gateway.atrack: a command goes as its text and CR LF, and the $ answer answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(binary(1, [record(0)]));
    t.is(await readHex(c, ack(1)), ack(1));
    await untilConnected(s, IMEI);
    const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'AT$INFO=?' },
    });
    t.is((await c.read(11)).toString('latin1'), 'AT$INFO=?\r\n');
    const answer = `$INFO=${IMEI},AX7,Rev.0.61 Build.1624,${IMEI},466924131626767,89886920041316267670,144,0,9,1,12,1,0`;
    c.write(`${answer}\r\n`);
    const r = await pending;
    t.is(r.status, 200, JSON.stringify(r.body));
    t.like(r.body.command, { status: 'answered', result: answer });
  },
);
