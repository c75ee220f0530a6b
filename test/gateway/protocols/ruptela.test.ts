import test from 'ava';
import { crc16Kermit } from '../../../protocols/shared/crc.js';
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

const IMEI = '863591024076709';
const ACK = Buffer.from('0002640113bc', 'hex');
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0) / 1000;
type T = Teardown;

async function start(t: Teardown, mode: GatewayMode): Promise<TestServer> {
  const s = await startTestServer(t, {
    env: { TRACKGATE_RUPTELA_PORT: '0', TRACKGATE_COMMAND_WAIT: '120', ...mode.env },
  });
  await createDevice(s, IMEI, { name: 'van', alertEmails: [] });
  return s;
}

async function connect(t: T, s: TestServer): Promise<TrackerClient> {
  const c = await TrackerClient.connect(s.running.ports.ruptela);
  t.teardown(() => c.end());
  return c;
}

/** A device packet: length, IMEI, command, payload, CRC-16/KERMIT over IMEI..payload. */
function packet(command: number, payload: Buffer, imei = IMEI): Buffer {
  const body = Buffer.alloc(9 + payload.length);
  body.writeBigUInt64BE(BigInt(imei), 0);
  body[8] = command;
  payload.copy(body, 9);
  const out = Buffer.alloc(2 + body.length + 2);
  out.writeUInt16BE(body.length, 0);
  body.copy(out, 2);
  out.writeUInt16BE(crc16Kermit(body), 2 + body.length);
  return out;
}

/** Records packet (command 1), one record per second offset, with 1-byte IOs (id, value). */
function records(seconds: number[], io: [number, number][] = []): Buffer {
  const recs = seconds.map((sec) => {
    const r = Buffer.alloc(23);
    let o = r.writeUInt32BE(T0 + sec, 0);
    o = r.writeUInt16BE(0, o); // timestamp extension, priority
    o = r.writeInt32BE(-37038000, o); // lon -3.7038
    o = r.writeInt32BE(404168000, o); // lat 40.4168
    o = r.writeUInt16BE(6500, o);
    o = r.writeUInt16BE(9000, o);
    o = r.writeUInt8(9, o);
    o = r.writeUInt16BE(42, o);
    o = r.writeUInt8(8, o);
    r.writeUInt8(0, o); // event
    return Buffer.concat([r, Buffer.from([io.length, ...io.flat(), 0, 0, 0])]);
  });
  return packet(1, Buffer.concat([Buffer.from([0, seconds.length]), ...recs]));
}

const locations = async (
  s: TestServer,
): Promise<{ dateTime: string; latitude: number; longitude: number; speed: number; protocol: string }[]> =>
  (
    await s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;

testInGatewayModes(
  test,
  'gateway.ruptela: identification and records get their exact answers; positions are stored and an alarm IO becomes an alert',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(packet(15, Buffer.from('0102', 'hex')));
    t.deepEqual(await c.read(6), Buffer.from('00027301cb25', 'hex'));
    c.write(records([0, 1]));
    t.deepEqual(await c.read(6), ACK);
    const stored = await locations(s);
    t.deepEqual(
      stored.map((l) => l.dateTime),
      ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z'],
    );
    t.like(stored[0], { latitude: 40.4168, longitude: -3.7038, speed: 42, protocol: 'ruptela' });
    c.write(records([5], [[88, 1]]));
    t.deepEqual(await c.read(6), ACK);
    const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
      token: s.adminToken,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.is(alerts.body.alerts.length, 1);
    t.like(alerts.body.alerts[0], { alertName: 'Jamming', dateTime: '2026-03-01T10:00:05.000Z' });
  },
);

testInGatewayModes(
  test,
  'gateway.ruptela: a packet split across writes and two packets in one write are both acknowledged',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    const one = records([10]);
    for (let i = 0; i < one.length; i += 7) {
      c.write(one.subarray(i, i + 7));
      await new Promise((r) => setTimeout(r, 2));
    }
    t.deepEqual(await c.read(6), ACK);
    c.write(Buffer.concat([records([11]), records([12])]));
    t.deepEqual(await c.read(12), Buffer.concat([ACK, ACK]));
    t.is((await locations(s)).length, 3);
  },
);

testInGatewayModes(test, 'gateway.ruptela: an unknown IMEI gets no answer and nothing is stored', async (t, mode) => {
  const s = await start(t, mode);
  const c = await connect(t, s);
  c.write(packet(1, Buffer.from([0, 0]), '111111111111111'));
  t.true(await c.nothingFor(300));
});

testInGatewayModes(
  test,
  'gateway.ruptela: a text command goes as packet 0x6C and the SMS-via-GPRS response answers it',
  async (t, mode) => {
    const s = await start(t, mode);
    const c = await connect(t, s);
    c.write(records([0]));
    t.deepEqual(await c.read(6), ACK);
    await untilConnected(s, IMEI);
    const pending = s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
      token: s.adminToken,
      body: { command: 'getver' },
    });
    const head = await c.read(2);
    const rest = await c.read(head.readUInt16BE(0) + 2);
    t.is(rest[0], 0x6c);
    t.is(rest.toString('latin1', 1, rest.length - 2), 'getver');
    t.is(rest.readUInt16BE(rest.length - 2), crc16Kermit(rest, 0, rest.length - 2));
    c.write(packet(7, Buffer.from('Ver:01.23.45')));
    const r = await pending;
    t.is(r.body.command.status, 'answered', JSON.stringify(r.body));
    t.is(r.body.result, 'Ver:01.23.45');
  },
);
