import test from 'ava';
import { castelProtocol } from '../../../protocols/castel/castel.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';
import { runVectors } from '../../helpers/vector-runner.js';
import { castelFix, castelFrame, castelStats, u16le, u32le } from '../../helpers/castel-frames.js';

const NOW = new Date(Date.UTC(2026, 11, 2, 5, 0, 0));

runVectors(castelProtocol, { now: NOW, everyFrameNamesItsDevice: true });

// ---------------------------------------------------------------------------------------------

const decode = castelProtocol.decode!;
const ctx = (checksum: DecodeContext['checksum'] = 'accept', transport: DecodeContext['transport'] = 'tcp') => ({
  now: NOW,
  transport,
  checksum,
  session: {},
});
const hex = (frames: Buffer[]): string[] => frames.map((f) => f.toString('hex'));
const vector = (type: string): Buffer =>
  frameBytes(loadVectors('castel').find((v) => v.msg_type?.includes(type) && v.test_kind === 'decoder')!);

const frame = castelFrame;
const u16 = u16le;
const u32 = u32le;
const stats = castelStats;
/** a GPS block at 2026-12-01 hh:mm:ss; `flags` 0x97 is north-east, valid, 9 satellites */
const fix = (hh: number, mm: number, ss: number, lat: number, lon: number, cms = 0, course = 0, flags = 0x97) =>
  castelFix(new Date(Date.UTC(2026, 11, 1, hh, mm, ss)), lat, lon, cms, course, flags & ~0x03);

const ID = '213GDS2021000052';

test('castel.decoder: an SC login is answered 0x9001 with FFFFFFFF, 0000 and the UNIX time of ctx.now', (t) => {
  const r = decode(
    Buffer.from(
      '4040d0000432313345503230313630303035383500000000001001831c1c58b1fc1c58ae94040012220000f60400005800000000000763016800008484004944445f3231335730315f532056312e302e37004944445f3231335730315f482056312e302e370032000110021003100410051006100710081009100a100b100c100d100e1011100111021103110411051106110711011202120312041201130213031301160216011701180218011b011c011d011e011f021f031f041f051f061f071f0121022101260127012861780d0a',
      'hex',
    ),
    ctx(),
  );
  t.is(r.identity, '213EP2016000585');
  t.deepEqual(hex(r.replies), ['404029000432313345503230313630303035383500000000009001ffffffff0000d0a50f6b3f260d0a']);
});

test('castel.decoder: an SC login with fixes reports them with the statistics', (t) => {
  const r = decode(
    frame(4, ID, 0x1001, stats(1000, 20, 300, 0) + '02' + fix(1, 2, 3, 22.5, 113.9) + fix(1, 2, 13, 22.6, 114)),
    ctx(),
  );
  t.is(r.messages.length, 2, 'several positions per frame');
  t.is(r.messages[1].fixTime?.toISOString(), '2026-12-01T01:02:13.000Z');
  t.like(r.messages[0].attributes, { odometer: 1000, tripOdometer: 20, fuelConsumption: 300, status: 0, sat: 9 });
  t.is(r.replies.length, 1);
  t.is(r.replies[0].readUInt32LE(r.replies[0].length - 8), Math.floor(NOW.getTime() / 1000));
});

test('castel.decoder: an SC heartbeat is answered 0x9003 with no body and reports nothing', (t) => {
  const r = decode(Buffer.from('40401F00043130303131313235323939383700000000000000100303320D0A', 'hex'), ctx());
  t.is(r.identity, '1001112529987');
  t.deepEqual(r.messages, []);
  t.deepEqual(hex(r.replies), ['40401f000431303031313132353239393837000000000000009003cfbe0d0a']);
});

test('castel.decoder: an SC alarm is answered 0xC007 with its index and its alarms go on every fix', (t) => {
  const f = Buffer.from(
    '40406000043231334550323031363030303538350000000000400708000000831c1c58f4fb1c58ae94040012220000f604000058000000200007630168000084c401040b10090c3532db3f07f07f7520090100000101010e00000000c7920d0a',
    'hex',
  );
  const r = decode(f, ctx());
  t.deepEqual(hex(r.replies), ['40402300043231334550323031363030303538350000000000c00708000000892a0d0a']);
  t.deepEqual(r.messages[0].alarms, ['powerOff']);
  const two = decode(
    frame(
      4,
      ID,
      0x4007,
      u32(7) +
        stats(0, 0, 0, 0) +
        '02' +
        fix(1, 0, 0, 1, 2) +
        fix(1, 0, 5, 1, 2) +
        '03' +
        '0101' +
        '00000000' +
        '00' +
        '0116' +
        '00000000',
    ),
    ctx(),
  );
  t.is(two.messages.length, 2);
  for (const m of two.messages) {
    t.deepEqual(m.alarms, ['overspeed']);
    t.is(m.attributes.ignition, true, '0x16 is ignition on');
  }
  t.is(two.replies[0].readUInt32LE(27), 7);
  const none = decode(frame(4, ID, 0x4007, u32(9) + stats(0, 0, 0, 0) + '00' + '00'), ctx());
  t.deepEqual(none.messages, []);
  t.is(none.replies.length, 1, 'answered without a fix too');
});

test('castel.decoder: SC alarm numbers map to the canonical alarm names', (t) => {
  const names: Record<number, string | undefined> = {
    0x01: 'overspeed',
    0x02: 'lowPower',
    0x03: 'temperature',
    0x04: 'hardAcceleration',
    0x05: 'hardBraking',
    0x06: 'idle',
    0x07: 'tow',
    0x08: 'highRpm',
    0x09: 'powerOn',
    0x0a: undefined,
    0x0b: 'laneChange',
    0x0c: 'hardCornering',
    0x0d: 'fatigueDriving',
    0x0e: 'powerOff',
    0x11: 'accident',
    0x12: 'tampering',
    0x1c: 'vibration',
  };
  for (const [code, name] of Object.entries(names)) {
    const body =
      u32(1) +
      stats(0, 0, 0, 0) +
      '01' +
      fix(1, 0, 0, 1, 2) +
      '01' +
      '01' +
      Number(code).toString(16).padStart(2, '0') +
      '00000000';
    t.deepEqual(decode(frame(4, ID, 0x4007, body), ctx()).messages[0].alarms, name ? [name] : [], `0x${code}`);
  }
});

test('castel.decoder: a fix has exact time, coordinates, speed, course, satellites and validity', (t) => {
  const r = decode(
    Buffer.from(
      '40405f000536303331353030303335313200000000000000004001040212102a2f72b29302a0af8512b40787018e000000000043e4ae000000007ca0f7224d5049503632305f56312e312e30004d5049502d3632302056322e300072140d0a',
      'hex',
    ),
    ctx(),
  );
  t.is(r.identity, '603150003512');
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2018-02-04T16:42:47.000Z');
  t.true(Math.abs(m.location!.latitudeDeg - 12.0094183) < 1e-6);
  t.true(Math.abs(m.location!.longitudeDeg + 86.31976) < 1e-6, 'west: longitude negative');
  t.true(Math.abs(m.location!.speedKmh! - 1972 * 0.036) < 1e-9, 'cm/s to km/h');
  t.is(m.location?.courseDeg, 39.1);
  t.is(m.location?.satellites, 8);
  t.true(m.location?.valid);
  t.deepEqual(hex(r.replies), [frame(5, '603150003512', 0x8001, '').toString('hex')], 'CC login answered 0x8001');
  const south = decode(frame(4, ID, 0x4009, u32(0) + fix(0, 0, 0, -33.5, -151.25, 0, 0, 0x30)), ctx()).messages[0];
  t.is(south.location?.latitudeDeg, -33.5);
  t.is(south.location?.longitudeDeg, -151.25);
  t.false(south.location?.valid, 'bits 2-3 clear: no fix');
});

test('castel.decoder: CC login and heartbeat are answered 0x8001 and 0x8206 in their version', (t) => {
  const login = decode(vector('CC login'), ctx());
  t.deepEqual(hex(login.replies), ['40401f000c3631313135303030303935360000000000000000800159560d0a']);
  t.like(login.messages[0].attributes, { status: 0, battery: 255, odometer: 0 });
  const hb = decode(vector('CC heartbeat'), ctx());
  t.deepEqual(hex(hb.replies), ['40401f000c3631313135303030303935360000000000000000820656110d0a']);
  t.is(hb.messages[0].attributes.network, JSON.stringify({ cellTowers: [{ locationAreaCode: 41083, cellId: 42627 }] }));
  t.like(hb.messages[0].attributes, { battery: 10, status: 262144 });
});

test('castel.decoder: MPIP 0x4001 is answered in an @@ frame with version FF, 0x2001 with a 0x1001 frame', (t) => {
  const login = decode(
    Buffer.from(
      '24245000363137313135313243333133360000000000000040011b011207133ac49a390464514a15000000008e480c00000917000000000000ffafffaf00010000ffff7800ffffffffffffff003c0d0a',
      'hex',
    ),
    ctx(),
  );
  t.is(login.identity, '61711512C3136');
  t.deepEqual(hex(login.replies), ['40401f00ff36313731313531324333313336000000000000004001f7b10d0a']);
  t.is(login.messages[0].fixTime?.toISOString(), '2018-01-27T07:19:58.000Z');
  const register = decode(vector('MPIP'), ctx());
  t.is(register.identity, 'gnghef6101112900174');
  t.deepEqual(hex(register.replies), [
    '40402a00676e676865663631303131313239303031373400100100000000ffffffffffffffffc2cf0d0a',
  ]);
  t.truthy(register.messages[0].location);
});

test('castel.decoder: MPIP 0x4201/0x4202/0x4206 carry one fix, 0x4204 eight', (t) => {
  for (const type of [0x4201, 0x4202, 0x4206]) {
    const r = decode(frame(undefined, 'MP1', type, fix(3, 4, 5, 10, 20)), ctx());
    t.is(r.messages.length, 1);
    t.deepEqual(r.replies, []);
  }
  const history = Array.from({ length: 8 }, (_, i) => fix(3, 4, i, 10, 20) + '00'.repeat(31)).join('');
  const r = decode(frame(undefined, 'MP1', 0x4204, history), ctx());
  t.deepEqual(
    r.messages.map((m) => m.fixTime?.getUTCSeconds()),
    [0, 1, 2, 3, 4, 5, 6, 7],
  );
});

test('castel.decoder: GPS, current location, fuel and AGPS messages', (t) => {
  const gps = decode(
    frame(4, ID, 0x4001, '01' + stats(5, 6, 7, 0) + '02' + fix(1, 0, 0, 1, 2) + fix(1, 0, 1, 1, 2)),
    ctx(),
  );
  t.is(gps.messages.length, 2);
  t.deepEqual(gps.replies, [], 'GPS data is not answered');
  const current = decode(frame(4, ID, 0xb001, '0100' + stats(5, 6, 7, 0) + '01' + fix(1, 0, 0, 1, 2)), ctx());
  t.is(current.messages[0].attributes.odometer, 5);
  const fuel = decode(
    frame(4, ID, 0x400e, stats(5, 6, 7, 0) + '02' + fix(1, 0, 0, 1, 2) + fix(1, 0, 1, 1, 2) + u16(300) + u16(301)),
    ctx(),
  );
  t.deepEqual(
    fuel.messages.map((m) => m.attributes.adc1),
    [300, 301],
  );
  const agps = decode(frame(4, ID, 0x5101, fix(1, 0, 0, 1, 2)), ctx());
  t.is(agps.messages[0].location?.latitudeDeg, 1);
});

test('castel.decoder: comprehensive tags go on the last fix; without a fix nothing is reported', (t) => {
  const tags =
    '1000' +
    u16(2) +
    u16(255) + // device temp 25.5
    '1200' +
    u16(2) +
    'ceff' + // temp2 -5.0
    '2000' +
    u16(2) +
    u16(1234) + // power 12.34 V
    '2100' +
    u16(2) +
    u16(386) + // battery 3.86 V
    '0600' +
    u16(6) +
    '01' +
    '02' +
    u16(0x0133) +
    u16(0x4001) + // faults
    '0700' +
    u16(11) +
    u32(3) +
    '01' +
    '01' +
    '04' +
    '00000000' + // alarm tag: hard acceleration
    '0200' +
    u16(8) +
    '01' +
    u16(0x210c) +
    u16(2) +
    '0c1a' + // PID 0x210c raw
    '0500' +
    u16(3) +
    'aabbcc'; // snapshot: skipped
  const body = '00' + u32(1) + stats(1, 2, 3, 4) + '02' + fix(1, 0, 0, 1, 2) + fix(1, 0, 1, 1, 2) + tags;
  const r = decode(frame(4, ID, 0x401f, body), ctx());
  t.is(r.messages.length, 2);
  t.false('battery' in r.messages[0].attributes, 'the tags go on the last fix only');
  t.like(r.messages[1].attributes, {
    deviceTemp: 25.5,
    temp2: -5,
    power: 12.34,
    battery: 3.86,
    fault1: 0x0133,
    fault2: 0x4001,
    pid8460: '0c1a',
    status: 4,
  });
  t.deepEqual(r.messages[1].alarms, ['hardAcceleration']);
  t.deepEqual(decode(frame(4, ID, 0x401f, '00' + u32(1) + stats(1, 2, 3, 4) + '00' + tags), ctx()).messages, []);
});

test('castel.decoder: PID, OBD, G-sensor, DTC and cell messages report without a fix', (t) => {
  const state = (1 << 4) | (1 << 18); // hard acceleration, ignition
  const pid = decode(
    frame(4, ID, 0x4002, stats(9, 0, 0, state) + u16(5) + '02' + u16(0x210c) + u16(0x2105) + '0101' + u16(800) + '5a'),
    ctx(),
  ).messages[0];
  t.is(pid.location, undefined);
  t.like(pid.attributes, { rpm: 800, coolantTemp: 90, ignition: true, odometer: 9 });
  t.deepEqual(pid.alarms, ['hardAcceleration']);
  const obd = decode(
    frame(4, ID, 0x4005, stats(0, 0, 0, 0) + '00' + '02' + u16(0x210d) + u16(0x2104) + '3c' + '10'),
    ctx(),
  ).messages[0];
  t.like(obd.attributes, { obdSpeed: 60, engineLoad: 16, ignition: false });
  const g = decode(
    frame(
      4,
      ID,
      0x4003,
      stats(0, 0, 0, 0) + u16(10) + '02' + u16(64) + u16(0xffe0) + u16(1) + u16(0) + u16(0) + u16(0),
    ),
    ctx(),
  ).messages[0];
  t.is(g.attributes.gSensor, '[[1.0,-0.5,0.015625],[0.0,0.0,0.0]]');
  const dtc = decode(frame(4, ID, 0x4006, stats(0, 0, 0, 0) + '00' + '02' + u16(0x0133) + u16(0xc101)), ctx())
    .messages[0];
  t.is(dtc.attributes.dtcs, 'P0133 U0101');
  const commercial = decode(frame(4, ID, 0x400b, stats(0, 0, 0, 0) + '00' + '01' + u16(0x8001) + '0102'), ctx())
    .messages[0];
  t.is(commercial.attributes.dtcs, 'B0001');
  const noCodes = decode(frame(4, ID, 0x4006, stats(0, 0, 0, 0) + '00' + '00'), ctx()).messages[0];
  t.false('dtcs' in noCodes.attributes, 'no codes: no dtcs attribute, as Traccar sets no empty string');
  const cell = decode(frame(4, ID, 0x4008, stats(0, 0, 0, 0) + u16(100) + u16(200)), ctx()).messages[0];
  t.is(cell.attributes.network, JSON.stringify({ cellTowers: [{ locationAreaCode: 100, cellId: 200 }] }));
});

test('castel.decoder: a PID of unknown width is a ProtocolError naming the device', (t) => {
  const f = frame(4, ID, 0x4005, stats(0, 0, 0, 0) + '00' + '01' + u16(0x21fe) + '00');
  const e = t.throws(() => decode(f, ctx()), { instanceOf: ProtocolError });
  t.is(e?.identity, ID);
});

test('castel.decoder: a wrong CRC is reported under accept and thrown under strict', (t) => {
  const f = Buffer.from('40401F00043130303131313235323939383700000000000000100303330D0A', 'hex');
  const r = decode(f, ctx());
  t.truthy(r.checksumError);
  t.is(r.replies.length, 1, 'still answered');
  t.throws(() => decode(f, ctx('strict')), { instanceOf: ProtocolError });
  const good = decode(
    Buffer.from('40401F00043130303131313235323939383700000000000000100303320D0A', 'hex'),
    ctx('strict'),
  );
  t.is(good.checksumError, undefined);
});

test('castel.decoder: several frames in one buffer: the first is read, the rest noted', (t) => {
  const r = decode(vector('GPS sleep'), ctx());
  t.is(r.messages.length, 1);
  t.is(r.messages[0].fixTime?.toISOString(), '2016-08-05T06:26:53.000Z');
  t.regex(r.warnings?.join() ?? '', /54 bytes after/);
});

test('castel.decoder: unknown types report nothing and get no answer', (t) => {
  for (const [version, type] of [
    [4, 0x4004],
    [4, 0x9001],
    [12, 0x4583],
    [undefined, 0x1234],
  ] as const) {
    const r = decode(frame(version, ID, type, '0102'), ctx());
    t.deepEqual(r.messages, []);
    t.deepEqual(r.replies, []);
    t.is(r.identity, ID);
  }
});

test('castel.decoder: a frame without a header, too short or with an unprintable id is a ProtocolError', (t) => {
  t.throws(() => decode(Buffer.from('2323'.padEnd(80, '0'), 'hex'), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(Buffer.from('40401f00', 'hex'), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(frame(4, '', 0x1003, ''), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(frame(4, 'ab\x01cd', 0x1003, ''), ctx()), { instanceOf: ProtocolError });
  t.throws(() => decode(frame(4, 'ab\0cd', 0x1003, ''), ctx()), { instanceOf: ProtocolError });
  const farNorth = decode(frame(4, ID, 0x5101, fix(1, 0, 0, 90, 180)), ctx()).messages[0].location;
  t.like(farNorth, { latitudeDeg: 90, longitudeDeg: 180 });
  const e = t.throws(() => decode(frame(4, ID, 0x5101, fix(1, 0, 0, 90.5, 2)), ctx()), { instanceOf: ProtocolError });
  t.regex(e?.message ?? '', /coordinates out of range/);
  t.throws(() => decode(frame(4, ID, 0x4001, '01' + stats(0, 0, 0, 0) + '01'), ctx()), { instanceOf: ProtocolError });
});

test('castel.decoder: a UDP datagram decodes and is answered as a TCP frame', (t) => {
  const f = Buffer.from('40401F00043130303131313235323939383700000000000000100303320D0A', 'hex');
  const r = castelProtocol.decodeDatagram!(f, ctx('accept', 'udp'));
  t.deepEqual(hex(r.replies), ['40401f000431303031313132353239393837000000000000009003cfbe0d0a']);
});
