import test from 'ava';
import { galileoProtocol } from '../../../protocols/galileo/galileo.protocol.js';
import { crc16Modbus } from '../../../protocols/shared/crc.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const IMEI = '868204001549087';
const decode = galileoProtocol.decode!;
const ctx = (o: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...o,
});
const hex = (s: string): Buffer => Buffer.from(s.replace(/ /g, ''), 'hex');
const replies = (r: { replies: Buffer[] }): string[] => r.replies.map((b) => b.toString('hex'));

runVectors(galileoProtocol, { now: NOW });

/** A packet: header, u16 LE length (with the archive flag), the tag bytes, CRC-16/MODBUS LE. */
function packet(data: Buffer, header = 0x01, archive = false): Buffer {
  const head = Buffer.from([header, 0, 0]);
  head.writeUInt16LE(data.length | (archive ? 0x8000 : 0), 1);
  const body = Buffer.concat([head, data]);
  const crc = Buffer.alloc(2);
  crc.writeUInt16LE(crc16Modbus(body), 0);
  return Buffer.concat([body, crc]);
}

const imeiTag = (imei = IMEI): Buffer => Buffer.concat([Buffer.from([0x03]), Buffer.from(imei, 'latin1')]);

/** Tags of one record: time, coordinates, speed and course, altitude, hdop, power, input. */
function record(seconds: number, lat: number, lon: number, valid = true): Buffer {
  const b = Buffer.alloc(5 + 10 + 5 + 3 + 2 + 3 + 3);
  let o = b.writeUInt8(0x20, 0);
  o = b.writeUInt32LE(seconds, o);
  o = b.writeUInt8(0x30, o);
  o = b.writeUInt8(valid ? 0x09 : 0x19, o); // 9 satellites
  o = b.writeInt32LE(Math.round(lat * 1e6), o);
  o = b.writeInt32LE(Math.round(lon * 1e6), o);
  o = b.writeUInt8(0x33, o);
  o = b.writeUInt16LE(425, o); // 42.5 km/h
  o = b.writeUInt16LE(1803, o); // 180.3°
  o = b.writeUInt8(0x34, o);
  o = b.writeInt16LE(-12, o);
  o = b.writeUInt8(0x35, o);
  o = b.writeUInt8(12, o); // hdop 1.2
  o = b.writeUInt8(0x41, o);
  o = b.writeUInt16LE(12500, o); // 12.5 V
  o = b.writeUInt8(0x46, o);
  b.writeUInt16LE(5, o);
  return b;
}

test('galileo.decoder: a main packet is positions in degrees, km/h and metres, acked 02 + its CRC as received', (t) => {
  const p = packet(
    Buffer.concat([imeiTag(), record(1772359200, 55.75, 37.61), record(1772359210, -33.5, -70.25, false)]),
  );
  const r = decode(p, ctx({ checksum: 'strict' }));
  t.is(r.identity, IMEI);
  t.deepEqual(replies(r), [`02${p.subarray(-2).toString('hex')}`]);
  t.is(r.messages.length, 2, 'the repeated time tag starts the second record');
  t.is(r.messages[0].fixTime!.toISOString(), '2026-03-01T10:00:00.000Z');
  t.deepEqual(r.messages[0].location, {
    latitudeDeg: 55.75,
    longitudeDeg: 37.61,
    valid: true,
    speedKmh: 42.5,
    courseDeg: 180.3,
    altitudeM: -12,
  });
  t.deepEqual(r.messages[0].attributes, { hdop: 1.2, power: 12.5, input: 5 });
  t.like(r.messages[1], { location: { latitudeDeg: -33.5, longitudeDeg: -70.25, valid: false } });
});

test('galileo.decoder: a head packet (IMEI, versions) names the device, stores nothing and is acked', (t) => {
  const p = packet(Buffer.concat([hex('0182 0213'), imeiTag(), hex('043200')]), 0x01, true);
  const r = decode(p, ctx());
  t.is(r.identity, IMEI);
  t.deepEqual(r.messages, []);
  t.deepEqual(replies(r), [`02${p.subarray(-2).toString('hex')}`]);
});

test('galileo.decoder: a packet without the IMEI is the connection device; without one it is not acked', (t) => {
  const p = packet(Buffer.concat([hex('043200 10a406'), record(1772359200, 1, 2)]));
  const known = decode(p, ctx({ deviceId: IMEI }));
  t.is(known.identity, undefined);
  t.is(known.messages.length, 1);
  t.like(known.messages[0].attributes, { deviceId: 50, index: 1700 });
  t.is(known.replies.length, 1);
  const unknown = decode(p, ctx());
  t.deepEqual(unknown.messages, []);
  t.deepEqual(unknown.replies, []);
});

test('galileo.decoder: a record without coordinates or a time is no position', (t) => {
  const noTime = record(1772359200, 1, 2).subarray(5);
  t.deepEqual(decode(packet(Buffer.concat([imeiTag(), noTime])), ctx()).messages, []);
});

test("galileo.decoder: the device's answer to a command (E0, E1) is a message without position and a command result", (t) => {
  const text = Buffer.from('OUT(3..0) = 1110');
  const r = decode(packet(Buffer.concat([imeiTag(), hex('e000000000 e1'), Buffer.from([text.length]), text])), ctx());
  t.deepEqual(r.messages, [{ alarms: [], attributes: { index: 0, result: 'OUT(3..0) = 1110' } }]);
  t.deepEqual(r.commandResults, [{ text: 'OUT(3..0) = 1110' }]);
  t.is(r.replies.length, 1);
});

test('galileo.decoder: tag values in their units and keys (CAN, user data, counters, temperatures)', (t) => {
  const tags = hex(
    '20 00e07b69 30 00 80969800 002d3101' + // time, 10.0 / 20.0
      '42 a00f 43 f6 44 01000000 45 0300 50 e803 58 0200 60 1000 90 39300000' +
      'c0 0a000000 c1 fa 50 4000 c4 07 a0 08 b0 0900 d4 10270000 d6 0a00 db 0b000000 e2 0c000000 f0 0d000000' +
      'ea 02 abcd fe 0300 010203 70 0119 5c' +
      '00'.repeat(68),
  );
  const m = decode(packet(Buffer.concat([imeiTag(), tags])), ctx()).messages[0];
  t.like(m, { location: { latitudeDeg: 10, longitudeDeg: 20 } });
  t.deepEqual(m.attributes, {
    battery: 4,
    deviceTemp: -10,
    acceleration: 1,
    output: 3,
    adc0: 1000,
    rs2320: 2,
    fuel0: 16,
    driverUniqueId: '12345',
    fuelTotal: 5,
    fuel: 100,
    temp1: 40,
    rpm: 8,
    can8BitR0: 7,
    can8BitR15: 8,
    can16BitR5: 9,
    odometer: 10000,
    can16BitR0: 10,
    can32BitR0: 11,
    userData0: 12,
    can32BitR5: 13,
    userDataArray: 'abcd',
  });
});

test('galileo.decoder: coordinates out of range, an unknown tag, a truncated value or a bad CRC when strict throw', (t) => {
  const coordinates = hex('20 00e07b69 30 00 00e1f505 00c2eb0b'); // 100° latitude
  t.throws(() => decode(packet(Buffer.concat([imeiTag(), coordinates])), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(packet(Buffer.concat([imeiTag(), hex('0f00')])), ctx()), {
    instanceOf: ProtocolError,
    message: /unknown tag 0x0f/,
  });
  t.throws(() => decode(packet(Buffer.concat([imeiTag(), hex('2000')])), ctx()), { instanceOf: ProtocolError });
  const bad = packet(Buffer.concat([imeiTag(), record(1772359200, 1, 2)]));
  bad[bad.length - 1] ^= 0xff;
  const accepted = decode(bad, ctx());
  t.truthy(accepted.checksumError);
  t.deepEqual(replies(accepted), [`02${bad.subarray(-2).toString('hex')}`], 'the checksum as received');
  t.throws(() => decode(bad, ctx({ checksum: 'strict' })), { instanceOf: ProtocolError });
  t.throws(() => decode(hex('05 0000 0000'), ctx()), { instanceOf: ProtocolError, message: /unknown packet header/ });
});

/** Packs [value, bits] fields most significant bit first into `bytes` bytes. */
function bitsOf(fields: [number, number][], bytes: number): Buffer {
  let v = 0n;
  let n = 0;
  for (const [value, width] of fields) {
    v = (v << BigInt(width)) | BigInt(value);
    n += width;
  }
  v <<= BigInt(bytes * 8 - n);
  return Buffer.from(v.toString(16).padStart(bytes * 2, '0'), 'hex');
}

/** A minimal data set: seconds since the year began, fix flag, longitude and latitude in range steps, alarm. */
const minimal = (seconds: number, lon: number, lat: number, alarm = 0): Buffer =>
  bitsOf(
    [
      [0, 1],
      [seconds, 25],
      [0, 1],
      [Math.round(((lon + 180) * 4194304) / 360), 22],
      [Math.round(((lat + 90) * 2097152) / 180), 21],
      [alarm, 1],
    ],
    10,
  );

test('galileo.decoder: a compressed packet (0x08) is minimal data sets in the current year, each with its tag list', (t) => {
  const data = Buffer.concat([
    minimal(86400 + 3600, 37.5, 55.25),
    hex('02 41 34 d430 e803'), // tags 0x41 power, 0x34 altitude; values
    minimal(86400 + 3610, -70, -33.5, 1),
    hex('00'),
  ]);
  const p = packet(data, 0x08);
  const r = decode(p, ctx({ deviceId: IMEI }));
  t.deepEqual(replies(r), [`02${p.subarray(-2).toString('hex')}`]);
  t.is(r.messages.length, 2);
  t.is(r.messages[0].fixTime!.toISOString(), '2026-01-02T01:00:00.000Z');
  t.true(Math.abs(r.messages[0].location!.latitudeDeg - 55.25) < 1e-4);
  t.true(Math.abs(r.messages[0].location!.longitudeDeg - 37.5) < 1e-4);
  t.like(r.messages[0], { location: { valid: true, altitudeM: 1000 }, attributes: { power: 12.5 }, alarms: [] });
  t.deepEqual(r.messages[1].alarms, ['general']);
  t.deepEqual(decode(p, ctx()).replies, [], 'no device named yet: not acked');
});

const IRIDIUM =
  '01003a01001c07553e40333030323334303639363034353930020021000063d1921c03000b0321ac2c4545b20000009f02000ac200000000db00000000';

test('galileo.decoder: an Iridium message takes the envelope position; its tags may refine it; no ack', (t) => {
  const r = decode(hex(IRIDIUM), ctx());
  t.is(r.identity, '300234069604590');
  t.deepEqual(r.replies, []);
  t.is(r.messages[0].fixTime!.toISOString(), '2023-01-25T20:33:32.000Z');
  t.like(r.messages[0], {
    location: { latitudeDeg: -(33 + 0xac2c / 60000), longitudeDeg: -(69 + 0x45b2 / 60000), valid: false },
    attributes: { canB0: 0, can32BitR0: 0 },
  });
});

test('galileo.decoder: with compressed=true an Iridium payload is a minimal data set and its tags', (t) => {
  const payload = Buffer.concat([minimal(7200, 10, 20), hex('01 42 a00f')]);
  const head = hex(IRIDIUM).subarray(0, 48);
  const frame = Buffer.concat([head, Buffer.from([0x02, 0, payload.length]), payload]);
  frame.writeUInt16BE(frame.length - 3, 1);
  const r = decode(frame, ctx({ options: { compressed: 'true' } }));
  t.is(r.messages[0].fixTime!.toISOString(), '2026-01-01T02:00:00.000Z');
  t.true(Math.abs(r.messages[0].location!.latitudeDeg - 20) < 1e-4);
  t.like(r.messages[0], { location: { valid: true }, attributes: { battery: 4 } });
  t.throws(() => decode(frame, ctx()), { instanceOf: ProtocolError }, 'read as tags it is not Galileo tags');
});

test('galileo.decoder: photo parts are acked 07 + their CRC; the closing part stores nothing and says so', (t) => {
  const part = packet(hex('00 ffd8ffe0'), 0x07);
  const r = decode(part, ctx());
  t.deepEqual(r.messages, []);
  t.deepEqual(replies(r), [`07${part.subarray(-2).toString('hex')}`]);
  const end = decode(packet(hex('01'), 0x07), ctx({ deviceId: IMEI }));
  t.deepEqual(end.messages, []);
  t.is(end.replies.length, 1);
  t.regex(end.warnings?.join() ?? '', /photo/);
});
