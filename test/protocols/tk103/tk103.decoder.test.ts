import test from 'ava';
import { tk103Protocol } from '../../../protocols/tk103/tk103.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date();
runVectors(tk103Protocol, { now: NOW, everyFrameNamesItsDevice: true });

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...over,
});
const decode = (s: string, c = ctx()): DecodeResult => tk103Protocol.decode!(Buffer.from(s, 'latin1'), c);
const replies = (r: DecodeResult): string[] => r.replies.map((b) => b.toString('latin1'));

const BR00 = '(088047365460BR00151024A2555.3531S02855.3329E004.7055148276.1701000000L00009AA3)';

test('tk103.decoder: BR00 is a position in km/h with course, ignition, fuel and odometer; no reply', (t) => {
  const r = decode(BR00);
  t.is(r.identity, '088047365460');
  const [m] = r.messages;
  t.is(m.fixTime?.toISOString(), '2015-10-24T05:51:48.000Z');
  t.like(m.location, { valid: true, speedKmh: 4.7, courseDeg: 276.17 });
  t.true(Math.abs(m.location!.latitudeDeg - -(25 + 55.3531 / 60)) < 1e-9);
  t.like(m.attributes, { charge: true, ignition: true, fuel: 0, odometer: 0x9aa3 });
  t.deepEqual(r.replies, []);
});

test('tk103.decoder: the BP00 handshake names the device and is answered (<id>AP01HSO)', (t) => {
  const r = decode('(027044702512BP00027044702512HSO01A4)');
  t.is(r.identity, '027044702512');
  t.deepEqual(r.messages, []);
  t.deepEqual(replies(r), ['(027044702512AP01HSO)']);
});

test('tk103.decoder: the BP05 login is a position answered (<id>AP05)', (t) => {
  const r = decode(
    '(088046338039BP05000088046338039160727A3354.7768N03540.7258E000.0140309065.1000000000L00BEB0D4+017.3)',
  );
  t.deepEqual(replies(r), ['(088046338039AP05)']);
  t.is(r.messages.length, 1);
  t.is(r.messages[0].attributes.temp1, 17.3);
});

test('tk103.decoder: a BO01 alarm raises its alarm and is answered (<id>AS01<alarm>)', (t) => {
  const r = decode('(013612345678BO012061830A2934.0133N10627.2544E040.0080331309.6200000000L000770AD)');
  t.deepEqual(r.messages[0].alarms, ['sos']);
  t.deepEqual(replies(r), ['(013612345678AS012)']);
  const alarm = (digit: number) =>
    decode(`(013612345678BO01${digit}061830A2934.0133N10627.2544E040.0080331309.6200000000L000770AD)`).messages[0]
      .alarms;
  t.deepEqual([1, 3, 4, 5, 6].map(alarm), [['accident'], ['vibration'], ['lowspeed'], ['overspeed'], ['geofenceExit']]);
});

test('tk103.decoder: the comma form takes ddMMyy, names the IMEI, and its ZC/DW events are alarms', (t) => {
  const r = decode('(013632651491,ZC13,040613,A,2234.0297N,11405.9101E,000.0,040137,178.48)');
  t.is(r.identity, '013632651491');
  t.is(r.messages[0].fixTime?.toISOString(), '2013-06-04T04:01:37.000Z');
  t.deepEqual(r.messages[0].alarms, ['powerCut']);
  t.deepEqual(decode('(013632651491,ZC25,040613,A,2234.0297N,11405.9101E,000.0,040137,178.48)').messages[0].alarms, [
    'sos',
  ]);
  t.deepEqual(decode('(013632651491,ZC17,040613,A,2234.0297N,11405.9101E,000.0,040137,178.48)').messages[0].alarms, [
    'removing',
  ]);
  t.is(
    decode('(013632651491,ZC15,040613,A,2234.0297N,11405.9101E,000.0,040137,178.48)').messages[0].attributes.ignition,
    true,
  );
});

test('tk103.decoder: BQ81 ALARM codes are alarms', (t) => {
  const r = decode('(044027395704BQ81,ALARM,4,164,151101A2238.5237N11349.4571E0.7031241010.0000,00000000)');
  t.deepEqual(r.messages[0].alarms, ['hardBraking']);
});

test('tk103.decoder: a ZC03 free-text answer is a command result (a ) inside $..$ included)', (t) => {
  const r = decode('(864555555555555,ZC03,191117,234207,$Notice: relay (1) on$)');
  t.deepEqual(r.commandResults, [{ text: 'Notice: relay (1) on' }]);
  t.is(r.messages[0].attributes.result, 'Notice: relay (1) on');
});

test('tk103.decoder: ZC20 battery: level code, battery and power volts', (t) => {
  const r = decode('(013632651491,ZC20,040613,040137,6,421,112,0)');
  t.like(r.messages[0].attributes, { batteryLevel: 100, battery: 4.21, power: 11.200000000000001 });
});

test('tk103.decoder: a datagram is decoded like a TCP sentence', (t) => {
  t.deepEqual(tk103Protocol.decodeDatagram!(Buffer.from(BR00), ctx({ transport: 'udp' })), decode(BR00));
});

test('tk103.decoder: text that is no (…) sentence, or impossible coordinates, throws ProtocolError', (t) => {
  t.throws(() => decode('imei:359586015829802,tracker,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;'), {
    instanceOf: ProtocolError,
  });
  t.throws(() => decode('(088047365460BR00151024A9555.3531S02855.3329E004.7055148276.1701000000L00009AA3)'), {
    instanceOf: ProtocolError,
  });
});
