import test from 'ava';
import { xexunProtocol } from '../../../protocols/xexun/xexun.protocol.js';
import { createXexunSplitter } from '../../../protocols/xexun/xexun.frame.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = xexunProtocol.decode!;
const ctx = (options: Record<string, string> = {}, checksum: 'accept' | 'strict' = 'accept'): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum,
  session: {},
  options,
});
const text = (s: string): Buffer => Buffer.from(s, 'latin1');
const EXTENDED = { extended: 'true' };

// The frame-decoder vectors are Traccar's basic XexunFrameDecoder: the splitter in its basic mode
runVectors(xexunProtocol, { now: NOW, splitterFor: () => createXexunSplitter(undefined, 'basic') });

const FULL =
  '111111120009,+436763737552,GPRMC,120600.000,A,6000.0000,N,13000.0000,E,0.00,0.00,010112,,,A*68,F,help me!, imei:123456789012345,04,481.2,L:3.5V,0,139,2689,232,03,2725,0576';

test('xexun.decoder: a full line with extended=true: serial, phone, satellites, altitude, power, SOS', (t) => {
  const r = decode(text(FULL), ctx(EXTENDED));
  t.is(r.identity, '123456789012345');
  t.deepEqual(r.replies, []);
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2012-01-01T12:06:00.000Z');
  t.deepEqual(m.location, {
    latitudeDeg: 60,
    longitudeDeg: 130,
    valid: true,
    speedKmh: 0,
    courseDeg: 0,
    altitudeM: 481.2,
    satellites: 4,
  });
  t.deepEqual(m.alarms, ['sos']);
  t.like(m.attributes, { serial: '111111120009', number: '+436763737552', signal: 'F', sat: 4, power: 3.5 });
});

test('xexun.decoder: the same line without the setting is read as its basic record only', (t) => {
  const m = decode(text(FULL), ctx()).messages[0];
  t.is(m.location?.altitudeM, undefined);
  t.false('power' in m.attributes);
  t.deepEqual(m.alarms, ['sos']);
});

test('xexun.decoder: status texts: acc on/off set ignition, low battery and move! are alarms', (t) => {
  const line = (status: string) => decode(text(FULL.replace('help me!', status)), ctx(EXTENDED)).messages[0];
  t.is(line('ACC On').attributes.ignition, true);
  t.is(line('ACCStart').attributes.ignition, true);
  t.is(line('ACC OFF').attributes.ignition, false);
  t.is(line('accstop').attributes.ignition, false);
  t.deepEqual(line('low battery').alarms, ['lowBattery']);
  t.deepEqual(line('move!').alarms, ['movement']);
  t.deepEqual(line('tracker').alarms, []);
});

test('xexun.decoder: minutes without degrees, speed in knots, a south latitude; exact values', (t) => {
  const m = decode(
    text('GPRMC,043435.000,A,811.299200,S,11339.9500,E,0.93,29.52,160313,00,0000.0,A*65,F,,imei:359585014597923,'),
    ctx(),
  ).messages[0];
  t.is(m.fixTime?.toISOString(), '2013-03-16T04:34:35.000Z');
  t.true(Math.abs(m.location!.latitudeDeg + (8 + 11.2992 / 60)) < 1e-9);
  t.true(Math.abs(m.location!.speedKmh! - 0.93 * 1.852) < 1e-9);
  const short = decode(
    text('GPRMC,113518.000,A,5303.4150,N,10.2368,E,60.73,207.42,260216,00,0000.0,A*74,F,,imei:351525018007873,'),
    ctx(),
  ).messages[0];
  t.true(Math.abs(short.location!.longitudeDeg - 10.2368 / 60) < 1e-9);
});

test('xexun.decoder: a line without RMC names its device and stores nothing; garbage is refused', (t) => {
  const r = decode(
    text(',+48606717068,,L,, imei:012207005047292,,,F:4.28V,1,52,11565,247,01,000E,1FC5'),
    ctx(EXTENDED),
  );
  t.is(r.identity, '012207005047292');
  t.deepEqual(r.messages, []);
  t.throws(() => decode(text('hello'), ctx()), { instanceOf: ProtocolError });
});

test('xexun.decoder: a wrong RMC checksum is accepted with a warning, refused under strict', (t) => {
  const frame = 'GPRMC,010203.000,A,0102.0003,N,00102.0003,E,1.02,1.02,010203,,,A*00,F,,imei:10000000000000,';
  const r = decode(text(frame), ctx());
  t.truthy(r.checksumError);
  t.is(r.messages.length, 1);
  t.throws(() => decode(text(frame), ctx({}, 'strict')), { instanceOf: ProtocolError });
  const good = 'GPRMC,150120.000,A,3346.4463,S,15057.3083,E,0.0,117.4,010911,,,A*76,F,imei:351525010943661,';
  t.is(decode(text(good), ctx({}, 'strict')).checksumError, undefined);
});
