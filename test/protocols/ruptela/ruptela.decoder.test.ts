import test from 'ava';
import { ruptelaProtocol } from '../../../protocols/ruptela/ruptela.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = ruptelaProtocol.decode!;
const ctx = (checksum: DecodeContext['checksum'] = 'accept'): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum,
  session: {},
});
const hex = (s: string): Buffer => Buffer.from(s, 'hex');

runVectors(ruptelaProtocol, { now: NOW, everyFrameNamesItsDevice: true });

/** A device packet: length, IMEI, command, payload, CRC-16/KERMIT. */
function packet(command: number, payload: Buffer, imei = 863591024076709n): Buffer {
  const body = Buffer.alloc(9 + payload.length);
  body.writeBigUInt64BE(imei, 0);
  body[8] = command;
  payload.copy(body, 9);
  const out = Buffer.alloc(2 + body.length + 2);
  out.writeUInt16BE(body.length, 0);
  body.copy(out, 2);
  let crc = 0;
  for (const b of body) {
    crc ^= b;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0x8408 : crc >>> 1;
  }
  out.writeUInt16BE(crc, 2 + body.length);
  return out;
}

/** One standard record at `seconds` with 1-byte IOs `io` (id -> value). */
function record(seconds: number, lat: number, lon: number, io: [number, number][] = []): Buffer {
  const r = Buffer.alloc(4 + 1 + 1 + 4 + 4 + 2 + 2 + 1 + 2 + 1 + 1);
  let o = r.writeUInt32BE(seconds, 0);
  o = r.writeUInt8(0, o); // timestamp extension
  o = r.writeUInt8(0, o); // priority
  o = r.writeInt32BE(Math.round(lon * 1e7), o);
  o = r.writeInt32BE(Math.round(lat * 1e7), o);
  o = r.writeUInt16BE(6500, o); // 650.0 m
  o = r.writeUInt16BE(9000, o); // 90.00°
  o = r.writeUInt8(9, o);
  o = r.writeUInt16BE(42, o); // km/h
  o = r.writeUInt8(8, o); // hdop 0.8
  r.writeUInt8(5, o); // event
  return Buffer.concat([r, Buffer.from([io.length, ...io.flat(), 0, 0, 0])]);
}

test('ruptela.decoder: records are positions in degrees, km/h and metres, answered 0002 6401 13bc', (t) => {
  const r = decode(
    packet(
      1,
      Buffer.concat([Buffer.from([0, 2]), record(1772359200, 40.4168, -3.7038), record(1772359201, 40.4169, -3.7037)]),
    ),
    ctx('strict'),
  );
  t.is(r.identity, '863591024076709');
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    ['0002640113bc'],
  );
  t.is(r.messages.length, 2);
  t.is(r.messages[0].fixTime!.toISOString(), '2026-03-01T10:00:00.000Z');
  t.deepEqual(r.messages[0].location, {
    latitudeDeg: 40.4168,
    longitudeDeg: -3.7038,
    valid: true,
    altitudeM: 650,
    courseDeg: 90,
    satellites: 9,
    speedKmh: 42,
  });
  t.like(r.messages[0].attributes, { hdop: 0.8, event: 5, sat: 9 });
});

test('ruptela.decoder: alarm IOs raise alarms; named IOs get their names', (t) => {
  const at = (io: [number, number][]) =>
    decode(packet(1, Buffer.concat([Buffer.from([0, 1]), record(1772359200, 1, 2, io)])), ctx()).messages[0];
  t.deepEqual(at([[88, 1]]).alarms, ['jamming']);
  t.deepEqual(
    at([
      [134, 1],
      [136, 1],
    ]).alarms,
    ['hardBraking', 'hardAcceleration'],
  );
  t.deepEqual(
    at([
      [88, 0],
      [134, 0],
    ]).alarms,
    [],
  );
  t.like(
    at([
      [251, 1],
      [2, 1],
    ]).attributes,
    { ignition: true, in1: 1 },
  );
  t.like(at([[200, 7]]).attributes, { io200: 7 });
});

test('ruptela.decoder: identification, heartbeat and DTCs get their answers', (t) => {
  t.deepEqual(
    decode(packet(15, Buffer.from('0102', 'hex')), ctx()).replies.map((b) => b.toString('hex')),
    ['00027301cb25'],
  );
  const heartbeat = decode(packet(16, Buffer.alloc(0)), ctx());
  t.deepEqual(heartbeat.messages, []);
  t.is(heartbeat.replies.length, 1);
  t.is(heartbeat.replies[0].toString('hex').slice(0, 8), '00027401');
  const dtc = Buffer.alloc(1 + 1 + 4 + 4 + 4 + 1 + 5);
  dtc.writeUInt8(1, 0);
  dtc.writeUInt32BE(1772359200, 2);
  dtc.writeInt32BE(-37038000, 6);
  dtc.writeInt32BE(404168000, 10);
  dtc.write('P0300', 15, 'latin1');
  const r = decode(packet(9, dtc), ctx());
  t.deepEqual(
    r.replies.map((b) => b.toString('hex')),
    ['00026d01c4a4'],
  );
  t.like(r.messages[0], { attributes: { dtcs: 'P0300' }, location: { latitudeDeg: 40.4168, longitudeDeg: -3.7038 } });
});

test('ruptela.decoder: a CRC mismatch is a warning, or an error when strict', (t) => {
  const bad = packet(16, Buffer.alloc(0));
  bad[bad.length - 1] ^= 0xff;
  t.truthy(decode(bad, ctx()).checksumError);
  t.throws(() => decode(bad, ctx('strict')), { instanceOf: ProtocolError });
});

test("ruptela.decoder: the device's answer to a text command is a command result", (t) => {
  const r = decode(packet(7, Buffer.from('Ver:01.23 ')), ctx());
  t.deepEqual(r.commandResults, [{ text: 'Ver:01.23' }]);
  t.deepEqual(r.replies, []);
});

test('ruptela.decoder: truncated packets and impossible coordinates throw ProtocolError', (t) => {
  t.throws(() => decode(hex('0005000000000001'), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(packet(1, Buffer.from([0, 3, 1, 2])), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(packet(1, Buffer.concat([Buffer.from([0, 1]), record(1, 95, 2)])), ctx()), {
    instanceOf: ProtocolError,
  });
});
