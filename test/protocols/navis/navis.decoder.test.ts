import test from 'ava';
import { navisProtocol } from '../../../protocols/navis/navis.protocol.js';
import { createNavisSplitter } from '../../../protocols/navis/navis.frame.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';
import type { Vector } from '../../helpers/vectors.js';
import { BASIC_FIELDS, basicRecord, flex, handshake, negotiation, ntcb } from '../../helpers/navis-frames.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = navisProtocol.decode!;
const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const ctx = (o: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...o,
});

/** Traccar's frame-decoder tests set the FLEX record size on the frame decoder: `frameDecoder.setFlexDataSize(73)`. */
function splitterFor(v: Vector) {
  const setup = [v.setup ?? []].flat().join(';');
  const size = /setFlexDataSize\((\d+)\)/.exec(setup)?.[1];
  return createNavisSplitter(size ? { flexDataSize: Number(size) } : {});
}

runVectors(navisProtocol, { now: NOW, splitterFor });

/** a session after *>S and the given *>FLEX */
function session(flexFrame: Buffer, imei = '866795031410689'): DecodeContext {
  const c = ctx();
  c.deviceId = decode(handshake(imei), c).identity;
  decode(flexFrame, c);
  return c;
}

// Traccar NavisProtocolDecoderTest.testDecodeFlex10, a FLEX 1.0 session
const FLEX10_LOGIN = '404e544301000000c9b5f602130046c52a3e533a383639363936303439373232383235';
const FLEX10_NEGOTIATION = '404e544301000000aaecf6021300c8712a3e464c4558b00a0a45ffff300a08080f8388';
const FLEX10_T =
  '7e54040000000400000030129957405c000b00632f9857405ccace03021e129101a103000000000000c4005ba3fe3b00000000120046100000000000001aff7f000080bfffff80000080bfffffffff9f';

test('navis.decoder: *>S names the device and is answered *<S with the ids swapped', (t) => {
  const c = ctx();
  const r = decode(hex(FLEX10_LOGIN), c);
  t.is(r.identity, '869696049722825');
  t.deepEqual(r.messages, []);
  t.is(r.replies[0].toString('hex'), '404e5443c9b5f60201000000030045d62a3c53');
  t.is(c.session['navis.imei'], '869696049722825');
});

test('navis.decoder: the worked example of the Navtelecom FLEX page: *<S and *<FLEX byte for byte', (t) => {
  const c = ctx();
  const s = decode(hex('404e544301000000000000001300464d2a3e533a383636373935303333333233383634'), c);
  t.is(s.identity, '866795033323864');
  t.is(s.replies[0].toString('hex'), '404e544300000000010000000300455e2a3c53');
  const f = decode(
    hex(
      '404e544301000000000000002a0046742a3e464c4558b01e1efffffe300a08000000020000000020003800200000000000000104000000060000',
    ),
    c,
  );
  t.is(f.replies[0].toString('hex'), '404e544300000000010000000900b1a02a3c464c4558b01e1e');
});

test('navis.decoder: *>FLEX stores the versions and the bitfield in the session; decoding it twice changes nothing', (t) => {
  const c = ctx({ deviceId: '869696049722825' });
  const first = decode(hex(FLEX10_NEGOTIATION), c);
  const layout = structuredClone(c.session['navis.flex']);
  t.deepEqual(layout, {
    protocolVersion: 10,
    structVersion: 10,
    bitfieldSize: 69,
    bitfield: 'ffff300a08080f8388',
    dataSize: 73,
  });
  t.deepEqual(decode(hex(FLEX10_NEGOTIATION), c), first);
  t.deepEqual(c.session['navis.flex'], layout);
});

test('navis.decoder: FLEX 1.0 ~T: position, units and the ~T ack with the record index and CRC-8', (t) => {
  const c = ctx();
  c.deviceId = decode(hex(FLEX10_LOGIN), c).identity;
  decode(hex(FLEX10_NEGOTIATION), c);
  const r = decode(hex(FLEX10_T), c);
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2019-01-17T10:23:20.000Z');
  t.true(Math.abs(m.location!.latitudeDeg - 56.33996) < 1e-5);
  t.true(Math.abs(m.location!.longitudeDeg - 43.80762) < 1e-5);
  t.is(m.location?.valid, true);
  t.is(m.location?.satellites, 11);
  t.is(m.location?.altitudeM, 92.9);
  t.is(m.location?.courseDeg, 196);
  t.is(m.attributes.battery, 4.166);
  t.is(m.attributes.temp1, 26);
  t.is(m.attributes.index, 4);
  t.is(r.replies[0].toString('hex'), '7e540400000017');
});

test('navis.decoder: NTCB *>T F5.2: float radians, time fields, *<T with the index', (t) => {
  const c = ctx({ deviceId: '861785005126069' });
  const r = decode(
    hex(
      '404e5443010000000000000059009adb2a3e54250000000000ff1500040b0a1008291838001200760ee600000000000000000000000f1500040b0a10ac20703fb1aec23f00000000320149668f430000000000000000000000000000000000000000000000f3808080',
    ),
    c,
  );
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2016-11-11T21:00:04.000Z');
  t.true(Math.abs(m.location!.latitudeDeg - 53.74336) < 1e-5);
  t.true(Math.abs(m.location!.longitudeDeg - 87.14437) < 1e-5);
  t.is(m.attributes.format, 0x25);
  t.is(m.attributes.temp1, -13);
  t.is(r.replies[0].toString('hex'), '404e544300000000010000000700425d2a3c5400000000');
});

test('navis.decoder: telemetry before *>S is not read and not answered', (t) => {
  const r = decode(ntcb(Buffer.concat([Buffer.from('*>A'), Buffer.from([0])])), ctx());
  t.deepEqual(r.messages, []);
  t.deepEqual(r.replies, []);
  t.deepEqual(decode(hex(FLEX10_NEGOTIATION), ctx()).replies, [], '*>FLEX neither');
});

test('navis.decoder: FLEX data before the *>FLEX negotiation is unreadable', (t) => {
  const error = t.throws(() => decode(hex(FLEX10_T), ctx({ deviceId: '869696049722825' })));
  t.true(error instanceof ProtocolError);
});

test('navis.decoder: a wrong XOR or CRC-8 is a warning when accepted, an error when strict', (t) => {
  const bad = handshake('866795031410689');
  bad[15] ^= 0xff;
  const accepted = decode(bad, ctx());
  t.regex(accepted.checksumError ?? '', /header XOR/);
  t.is(accepted.identity, '866795031410689');
  t.throws(() => decode(bad, ctx({ checksum: 'strict' })), { instanceOf: ProtocolError });
  const c = session(negotiation(BASIC_FIELDS));
  const packet = flex('~C', basicRecord({ index: 1, time: new Date(Date.UTC(2026, 0, 1)), lat: 1, lon: 2 }));
  packet[packet.length - 1] ^= 1;
  t.regex(decode(packet, c).checksumError ?? '', /CRC-8/);
  t.throws(() => decode(packet, { ...c, checksum: 'strict' }), { instanceOf: ProtocolError });
});

test('navis.decoder: ~A of two records: both positions, the ack holds the count', (t) => {
  const c = session(negotiation(BASIC_FIELDS));
  const time = new Date(Date.UTC(2026, 0, 1, 12));
  const records = [
    basicRecord({ index: 7, time, lat: 55.75, lon: 37.61, speedKmh: 42.5, course: 90, altitudeM: 150.5, sats: 12 }),
    basicRecord({ index: 8, time: new Date(time.getTime() + 1000), lat: -33.9, lon: -70.6, valid: false }),
  ];
  const r = decode(flex('~A', Buffer.concat([Buffer.from([2]), ...records])), c);
  t.is(r.messages.length, 2);
  t.deepEqual(r.messages[0].location, {
    latitudeDeg: 55.75,
    longitudeDeg: 37.61,
    valid: true,
    altitudeM: 150.5,
    speedKmh: 42.5,
    courseDeg: 90,
    satellites: 12,
  });
  t.is(r.messages[1].location?.valid, false);
  t.is(r.messages[1].fixTime?.getTime(), time.getTime() + 1000);
  t.is(r.replies[0].toString('hex'), flex('~A', Buffer.from([2])).toString('hex'));
});

test('navis.decoder: ~C carries no packet index; ~T is answered with the record index', (t) => {
  const c = session(negotiation(BASIC_FIELDS));
  const record = basicRecord({ index: 0x01020304, time: new Date(Date.UTC(2026, 0, 1)), lat: 1, lon: 2 });
  const current = decode(flex('~C', record), c);
  t.is(current.messages.length, 1);
  t.is(current.replies[0].toString('hex'), flex('~C', hex('04030201')).toString('hex'));
  const single = decode(flex('~T', Buffer.concat([hex('04030201'), record])), c);
  t.is(single.replies[0].toString('hex'), flex('~T', hex('04030201')).toString('hex'));
});

test('navis.decoder: a record without a navigation time is no position, and still answered', (t) => {
  const c = session(negotiation([0, 1, 18]));
  const r = decode(flex('~T', hex('05000000' + '05000000' + '0900' + 'e02e')), c);
  t.deepEqual(r.messages, []);
  t.is(r.replies[0].toString('hex'), flex('~T', hex('05000000')).toString('hex'));
});

test('navis.decoder: FLEX 1.0 I/O, power, fuel and OBD fields in Traccar units', (t) => {
  // fields 4-7, 19-20, 29-32, 37-38, 44-45, 53-56, 66, 68-69 and the time (field 9)
  const fields = [3, 4, 5, 6, 8, 18, 19, 28, 29, 30, 31, 36, 37, 43, 44, 52, 53, 54, 55, 65, 67, 68];
  const c = session(negotiation(fields));
  const b = Buffer.alloc(64);
  let at = b.writeUInt8(0x03, 0); // armed, alarm
  at = b.writeUInt8(0x11, at); // status low
  at = b.writeUInt8(0x80, at); // status high: Java's short goes negative
  at = b.writeUInt8(21, at); // rssi
  at = b.writeUInt32LE(Date.UTC(2026, 0, 1) / 1000, at);
  at = b.writeUInt16LE(12345, at); // power mV
  at = b.writeUInt16LE(4100, at); // battery mV
  at = b.writeUInt8(0b101, at); // inputs 1 and 3
  at = b.writeUInt8(0b1, at); // input 9
  at = b.writeUInt8(0b10, at); // output 2
  at = b.writeUInt8(0, at);
  at = b.writeUInt32LE(3600, at); // engine hours, s
  at = b.writeUInt16LE(65535, at); // fuel1: no sensor
  at = b.writeUInt16LE(420, at); // fuel
  at = b.writeInt8(-5, at); // temp1
  at = b.writeUInt16LE(0x8000 | 55, at); // OBD fuel level 55 %
  at = b.writeFloatLE(10, at); // fuel used: 0.5 l units
  at = b.writeUInt16LE(2100, at); // rpm
  at = b.writeInt8(-128, at); // coolant: no data
  at = b.writeUInt16LE(123, at); // AdBlue 12.3 l
  at = b.writeUInt16LE(7, at); // service odometer, 5 km units
  at = b.writeUInt8(88, at); // OBD speed
  const r = decode(flex('~C', b.subarray(0, at)), c);
  const a = r.messages[0].attributes;
  t.is(a.armed, true);
  t.deepEqual(r.messages[0].alarms, ['general']);
  t.is(a.status, -32751);
  t.is(a.rssi, 21);
  t.is(a.power, 12.345);
  t.is(a.battery, 4.1);
  t.is(a.input, 0x105);
  t.true(a.in1 === true && a.in2 === false && a.in3 === true && a.in9 === true);
  t.is(a.output, 2);
  t.is(a.out2, true);
  t.is(a.hours, 3_600_000);
  t.false('fuel1' in a);
  t.is(a.fuel, 420);
  t.is(a.temp1, -5);
  t.is(a.obdFuelLevel, 55);
  t.is(a.fuelUsed, 5);
  t.is(a.rpm, 2100);
  t.false('coolantTemp' in a);
  t.is(a.obdAdBlue, 12.3);
  t.is(a.serviceOdometer, 35000);
  t.is(a.obdSpeed, 88);
});

test('navis.decoder: FLEX 2.0 and 3.0 fields: satellites, DOP, fuel temperature, precise temperature, humidity, user fields', (t) => {
  // the time, 70-71, 78, a skipped 3-byte field (85), 163, 167, 207, 223, 238, 253
  const c = session(negotiation([8, 69, 70, 77, 84, 162, 166, 206, 222, 237, 252]));
  const parts = [
    hex('80bb5669'), // time
    hex('0102030405060708'), // satellites per system
    Buffer.from([9, 15]), // hdop 0.9, pdop 1.5
    Buffer.from([0xf6]), // fuel temperature -10
    hex('aabbcc'), // skipped by size
    hex('f401'), // 500 / 20 = 25 °C
    Buffer.from([90]), // 45 %
    Buffer.from([7]),
    hex('3412'),
    hex('78563412'),
    hex('ffffffffffffffff'), // -1
  ];
  const r = decode(flex('~C', Buffer.concat(parts)), c);
  const a = r.messages[0].attributes;
  t.is(a.satVisible, 36);
  t.is(a.hdop, 0.9);
  t.is(a.pdop, 1.5);
  t.is(a.fuelTemp1, -10);
  t.is(a.temp9, 25);
  t.is(a.humidity1, 45);
  t.is(a.user1Byte1, 7);
  t.is(a.user2Byte1, 0x1234);
  t.is(a.user4Byte1, 0x12345678);
  t.is(a.user8Byte1, -1);
  t.is(r.messages[0].fixTime?.toISOString(), new Date(0x6956bb80 * 1000).toISOString());
});

test('navis.decoder: FLEX 2.0 ~E and ~X extra records', (t) => {
  const c = session(negotiation(BASIC_FIELDS));
  const time = Date.UTC(2026, 0, 1, 6) / 1000;
  const body = Buffer.alloc(43);
  let at = body.writeUInt8(0x0a, 0);
  at = body.writeUInt8(41, at);
  at = body.writeUInt32LE(77, at); // index
  at = body.writeUInt16LE(3, at); // event
  at = body.writeUInt32LE(time, at); // event time
  at = body.writeUInt8((5 << 2) | 2, at);
  at = body.writeUInt32LE(time, at);
  at = body.writeInt32LE(30 * 600000, at);
  at = body.writeInt32LE(-60 * 600000, at);
  at = body.writeInt32LE(1000, at);
  at = body.writeFloatLE(36, at);
  at = body.writeUInt16LE(180, at);
  body.writeFloatLE(1.5, at);
  const record = Buffer.concat([Buffer.from([0, body.length]), body]);
  const e = decode(flex('~E', Buffer.concat([Buffer.from([1]), record])), c);
  t.is(e.messages[0].location?.latitudeDeg, 30);
  t.is(e.messages[0].location?.longitudeDeg, -60);
  t.is(e.messages[0].location?.altitudeM, 100);
  t.is(e.messages[0].attributes.odometer, 1500);
  t.is(e.replies[0].toString('hex'), flex('~E', Buffer.from([1])).toString('hex'));
  const x = decode(flex('~X', Buffer.concat([hex('4d000000'), record])), c);
  t.is(x.messages[0].fixTime?.getTime(), time * 1000);
  t.is(x.replies[0].toString('hex'), flex('~X', hex('4d000000')).toString('hex'));
});

test('navis.decoder: *@C is a command result and a result attribute', (t) => {
  const r = decode(ntcb('*@CNCT_DRC OK'), ctx({ deviceId: '866795031410689' }));
  t.deepEqual(r.commandResults, [{ text: '*@CNCT_DRC OK' }]);
  t.is(r.messages[0].attributes.result, '*@CNCT_DRC OK');
  t.deepEqual(r.replies, []);
});

test('navis.decoder: the keep-alives (0x7F, an empty NTCB frame) decode to nothing', (t) => {
  t.deepEqual(decode(Buffer.from([0x7f]), ctx()), { messages: [], replies: [] });
  t.deepEqual(decode(ntcb(''), ctx()).messages, []);
});

test('navis.decoder: flexDataSize is checked against the negotiated record size', (t) => {
  const c = session(negotiation(BASIC_FIELDS));
  const packet = flex('~C', basicRecord({ index: 1, time: new Date(Date.UTC(2026, 0, 1)), lat: 1, lon: 2 }));
  t.is(decode(packet, { ...c, options: { flexDataSize: '31' } }).warnings, undefined);
  t.regex(decode(packet, { ...c, options: { flexDataSize: '73' } }).warnings?.join() ?? '', /differs/);
  t.regex(decode(packet, { ...c, options: { flexDataSize: 'x' } }).warnings?.join() ?? '', /no record size/);
});

test('navis.decoder: a *>FLEX for another protocol is neither answered nor stored', (t) => {
  const c = ctx({ deviceId: '866795031410689' });
  const other = negotiation(BASIC_FIELDS);
  other[16 + 6] = 0xb1;
  other[14] = 0;
  t.deepEqual(decode(other, c).replies, []);
  t.is(c.session['navis.flex'], undefined);
});

test('navis.decoder: truncated records throw ProtocolError', (t) => {
  const c = session(negotiation(BASIC_FIELDS));
  t.throws(() => decode(flex('~A', Buffer.from([3, 1, 2, 3])), c), { instanceOf: ProtocolError });
  t.throws(() => decode(ntcb('*>T\x06\x01'), c), { instanceOf: ProtocolError });
  t.throws(() => decode(hex('404e5443'), c), { instanceOf: ProtocolError });
});
