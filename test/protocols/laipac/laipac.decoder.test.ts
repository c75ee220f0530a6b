import test from 'ava';
import { laipacProtocol } from '../../../protocols/laipac/laipac.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors, type Difference } from '../../helpers/vector-runner.js';

const NOW = new Date();

/**
 * The vector's $EAVACK carries the battery field where LaipacProtocolDecoder writes the event code
 * (the regex group before the battery): trackgate writes what the reference writes.
 */
const eventAck = (event: string, checksum: string): Difference => ({
  reason: `the vector's $EAVACK names the battery, not the event code ${event} Traccar's decoder writes`,
  instead(t, decode) {
    const body = `EAVACK,${event},${checksum}`;
    let x = 0;
    for (const c of body) x ^= c.charCodeAt(0);
    const want = `$${body}*${x.toString(16).toUpperCase().padStart(2, '0')}\r\n`;
    t.deepEqual(
      decode().replies.map((b) => b.toString('latin1')),
      [want],
    );
  },
});

runVectors(laipacProtocol, {
  now: NOW,
  differences: {
    3: eventAck('0', '17'),
    4: eventAck('0', '00'),
    9: eventAck('0', '23'),
    17: eventAck('0', '52'),
    18: eventAck('0', '47'),
    19: eventAck('0', '4D'),
  },
});

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...over,
});
const decodeText = (s: string, c = ctx()): DecodeResult => laipacProtocol.decode!(Buffer.from(s, 'latin1'), c);
const replies = (r: DecodeResult): string[] => r.replies.map((b) => b.toString('latin1'));

test('laipac.decoder: $AVRMC: time, fix, knots to km/h, battery, odometer, no reply for upper case', (t) => {
  const r = decodeText('$AVRMC,99999999,164339,A,4351.0542,N,07923.5445,W,0.29,78.66,180703,0,3.727,17,1,0,0*37');
  t.is(r.identity, '99999999');
  t.is(r.checksumError, undefined);
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2003-07-18T16:43:39.000Z');
  t.true(Math.abs(m.location!.latitudeDeg - 43.8509) < 1e-5);
  t.true(Math.abs(m.location!.longitudeDeg + 79.39241) < 1e-5);
  t.true(Math.abs(m.location!.speedKmh! - 0.29 * 1.852) < 1e-9);
  t.true(m.location!.valid);
  t.like(m.attributes, { status: 'A', event: '0', battery: 3.727, odometer: 17000, gps: 1, adc1: 0 });
  t.deepEqual(r.replies, []);
});

test('laipac.decoder: a battery without a point is millivolts', (t) => {
  const r = decodeText('$AVRMC,MSG00002,041942,V,0000.0000,N,00000.0000,E,0.00,0.00,200614,H,4115,167,1,0,0*0E');
  t.is(r.messages[0].attributes.battery, 4.115);
  t.false(r.messages[0].location!.valid);
  t.deepEqual(r.messages[0].alarms, ['powerOff']);
});

test('laipac.decoder: lower-case status: $EAVACK with the event and the received checksum', (t) => {
  const r = decodeText('$AVRMC,99999999,164339,a,4351.0542,N,07923.5445,W,0.29,78.66,180703,0,3.727,17,1,0,0*17');
  t.deepEqual(replies(r), ['$EAVACK,0,17*2D\r\n']);
  t.true(r.messages[0].location!.valid, 'a is A asking for an ack');
});

test('laipac.decoder: SOS: alarm and $AVCFG with the default password, after $EAVACK', (t) => {
  const r = decodeText('$AVRMC,99999999,164339,r,4351.0542,N,07923.5445,W,0.29,78.66,180703,3,3.727,17,1,0,0*07');
  t.deepEqual(r.messages[0].alarms, ['sos']);
  t.deepEqual(replies(r), ['$EAVACK,3,07*2F\r\n', '$AVCFG,00000000,d*31\r\n']);
});

test('laipac.decoder: $AVCFG carries the devicePassword setting', (t) => {
  const r = decodeText(
    '$AVRMC,99999999,164339,A,4351.0542,N,07923.5445,W,0.29,78.66,180703,X,3.727,17,1,0,0*5F',
    ctx({ options: { devicePassword: '12345678' } }),
  );
  t.deepEqual(r.messages[0].alarms, ['geofenceEnter']);
  t.deepEqual(replies(r), ['$AVCFG,12345678,x*25\r\n']);
});

test('laipac.decoder: event alarms', (t) => {
  const alarmOf = (event: string) =>
    decodeText(`$AVRMC,1,164339,A,4351.0542,N,07923.5445,W,0.29,78.66,180703,${event},3.727,17,1,0,0*00`).messages[0]
      .alarms;
  t.deepEqual(alarmOf('5'), ['powerCut']);
  t.deepEqual(alarmOf('6'), ['overspeed']);
  t.deepEqual(alarmOf('7'), ['geofenceExit']);
  t.deepEqual(alarmOf('4'), ['geofenceExit']);
  t.deepEqual(alarmOf('8'), ['vibration']);
  t.deepEqual(alarmOf('T'), ['tampering']);
  t.deepEqual(alarmOf('Y'), ['tow']);
  t.deepEqual(alarmOf('Z'), ['lowBattery']);
  t.deepEqual(alarmOf('0'), []);
});

test('laipac.decoder: input-status events set in1/in2 (and the SF-Lite in3) and are no event', (t) => {
  const frame = (e: string) => `$AVRMC,1,164339,A,4351.0542,N,07923.5445,W,0.29,78.66,180703,${e},3.727,17,1,0,0*00`;
  t.like(decodeText(frame('B')).messages[0].attributes, { in1: true, in2: false });
  const q = decodeText(frame('Q'), ctx({ model: 'SF-Lite' })).messages[0].attributes;
  t.like(q, { in1: false, in2: true, in3: true });
  t.is(q.event as unknown, undefined);
});

test('laipac.decoder: cell tower, and adc2 only for AVL110/AVL120', (t) => {
  const s =
    '$AVRMC,MSG00002,124058,A,5053.0447,N,00557.8549,E,0.45,65.06,240614,0,4037,167,1,1200,3400,0D7AB913,020408*26';
  const r = decodeText(s, ctx({ model: 'AVL110' }));
  t.deepEqual(JSON.parse(String(r.messages[0].attributes.network)), {
    cellTowers: [{ locationAreaCode: 0x0d7a, cellId: 0xb913, mobileCountryCode: 20, mobileNetworkCode: 408 }],
  });
  t.like(r.messages[0].attributes, { adc1: 1.2, adc2: 3.4 });
  t.false('adc2' in decodeText(s).messages[0].attributes);
});

test('laipac.decoder: $ECHK is echoed as it came', (t) => {
  const r = decodeText('$ECHK,MSG00002,0*5E');
  t.is(r.identity, 'MSG00002');
  t.deepEqual(replies(r), ['$ECHK,MSG00002,0*5E\r\n']);
});

test('laipac.decoder: $EAVSYS: ICCID, phone, firmware without a fix; $AVSYS is nothing', (t) => {
  const r = decodeText('$EAVSYS,MSG00002,8931086013104404999,+15551234567,Owner,0x52014406*49');
  t.is(r.identity, 'MSG00002');
  t.is(r.messages[0].location, undefined);
  t.like(r.messages[0].attributes, { iccid: '8931086013104404999', phone: '+15551234567', versionFw: '0x52014406' });
  const sys = decodeText('$AVSYS,99999999,V1.50,SN0000103,32768*15');
  t.deepEqual(sys.messages, []);
  t.deepEqual(sys.replies, []);
});

test('laipac.decoder: a wrong checksum is accepted with a warning, refused under strict', (t) => {
  const s = '$AVRMC,99999999,164339,A,4351.0542,N,07923.5445,W,0.29,78.66,180703,0,3.727,17,1,0,0*38';
  const r = decodeText(s);
  t.regex(r.checksumError ?? '', /38 does not match 37/);
  t.is(r.messages.length, 1);
  t.throws(() => decodeText(s, ctx({ checksum: 'strict' })), { instanceOf: ProtocolError });
});

test('laipac.decoder: what is no sentence, or an unreadable $AVRMC, throws ProtocolError', (t) => {
  t.throws(() => decodeText('GET / HTTP/1.1'), { instanceOf: ProtocolError });
  const e = t.throws(() => decodeText('$AVRMC,358174067149865,garbage*00'), { instanceOf: ProtocolError });
  t.is(e?.identity, '358174067149865');
});
