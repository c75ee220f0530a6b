import test from 'ava';
import { tlt2hProtocol } from '../../../protocols/tlt2h/tlt2h.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 11, 2, 5, 6, 7));

runVectors(tlt2hProtocol, { now: NOW });

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...over,
});
const decodeText = (s: string, c = ctx()): DecodeResult => tlt2hProtocol.decode!(Buffer.from(s, 'latin1'), c);
const message = (status: string, record: string): string => `#357671030946351#V500#0000#${status}#1\r\n${record}\r\n`;
const RMC = '#$GPRMC,223835.000,A,0615.3545,S,10708.5779,E,14.62,97.41,070313,,,D*70';

test('tlt2h.decoder: a $GPRMC record: exact time and fix, knots to km/h, the IMEI of the header', (t) => {
  const r = decodeText(message('AUTO', RMC));
  t.is(r.identity, '357671030946351');
  t.deepEqual(r.replies, [], 'nothing is answered');
  t.is(r.checksumError, undefined);
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2013-03-07T22:38:35.000Z');
  t.true(m.location!.valid);
  t.true(Math.abs(m.location!.latitudeDeg - -6.25591) < 1e-5);
  t.true(Math.abs(m.location!.longitudeDeg - 107.14297) < 1e-5);
  t.true(Math.abs(m.location!.speedKmh! - 14.62 * 1.852) < 1e-9);
  t.is(m.location!.courseDeg, 97.41);
  t.is(m.attributes.ignition, true);
});

test('tlt2h.decoder: the status is ignition or an alarm from the one table', (t) => {
  const status = (s: string) => decodeText(message(s, RMC)).messages[0];
  t.is(status('AUTOSTART').attributes.ignition, true);
  t.is(status('AUTOSTOP').attributes.ignition, false);
  t.is(status('AUTOLOW').attributes.ignition, false);
  for (const [word, alarm] of [
    ['SOS', 'sos'],
    ['TOWED', 'tow'],
    ['SHAKE', 'vibration'],
    ['DEF', 'powerCut'],
    ['BLP', 'lowBattery'],
    ['CLP', 'lowPower'],
    ['OS', 'geofenceExit'],
    ['RS', 'geofenceEnter'],
    ['OVERSPEED', 'overspeed'],
  ]) {
    t.deepEqual(status(word).alarms, [alarm], word);
    t.false(Object.hasOwn(status(word).attributes, 'ignition'));
  }
  t.deepEqual(status('SMS').alarms, []);
});

test('tlt2h.decoder: the MT600 header adds door, adc1, power, battery and temperature; its battery wins', (t) => {
  const r = decodeText(
    '#868105044690301#MT600+#0000#0#0#143#40#0#AUTO#1\r\n#5065$GPRMC,155616.00,A,4931.9210,N,09652.5290,W,53.80,90.00,150224,,,A*48\r\n',
  );
  t.deepEqual(r.messages[0].attributes, { door: false, adc1: 0, power: 14.3, battery: 4, temp1: 0, ignition: true });
});

test('tlt2h.decoder: record battery (2 digits tenths, 4 digits mV) and a hex cell', (t) => {
  const r = decodeText(message('AUTO', '#39#262,03,8CE6,A672$GPRMC,115419.00,V,,,,,,,050123,,,A*7D'));
  const m = r.messages[0];
  t.is(m.location, undefined, 'an empty fix has no location');
  t.is(m.attributes.battery, 3.9);
  t.deepEqual(JSON.parse(String(m.attributes.network)).cellTowers, [
    { mobileCountryCode: 262, mobileNetworkCode: 3, locationAreaCode: 0x8ce6, cellId: 0xa672 },
  ]);
  t.is(
    decodeText(message('AUTO', '#4106#$GPRMC,151410.00,A,3010.4103,N,08146.2728,W,,214.90,010324,,,A*58')).messages[0]
      .attributes.battery,
    4.106,
  );
});

test('tlt2h.decoder: a $WIFI record gives its access points and time, no location', (t) => {
  const r = decodeText(message('TOWED', '#4502$WIFI,051550.00,A,-50,7683C2CBC0B0,-51,7683C29BC0B0,221123*14'));
  const m = r.messages[0];
  t.is(m.location, undefined);
  t.is(m.fixTime?.toISOString(), '2023-11-22T05:15:50.000Z');
  t.deepEqual(m.alarms, ['tow']);
  t.deepEqual(JSON.parse(String(m.attributes.network)).wifiAccessPoints, [
    { macAddress: '76:83:C2:CB:C0:B0', signalStrength: -50 },
    { macAddress: '76:83:C2:9B:C0:B0', signalStrength: -51 },
  ]);
});

test('tlt2h.decoder: several records make several messages; a "##" left on the frame is dropped', (t) => {
  const two =
    '#353686009063310#353686009063310#0000#AUTO#2\r\n#239757a9$GPRMC,150252.001,A,2326.6856,S,4631.8154,W,,,260513,,,A*52\r\n#239757a9$GPRMC,150322.001,A,2326.6854,S,4631.8157,W,,,260513,,,A*55\r\n##\r\n';
  const r = decodeText(two);
  t.deepEqual(
    r.messages.map((m) => m.fixTime?.toISOString()),
    ['2013-05-26T15:02:52.000Z', '2013-05-26T15:03:22.000Z'],
  );
});

test('tlt2h.decoder: a wrong NMEA checksum is reported under accept and refused under strict', (t) => {
  const wrong = message('AUTO', RMC.replace('*70', '*71'));
  const r = decodeText(wrong);
  t.is(r.messages.length, 1);
  t.truthy(r.checksumError);
  t.true(r.warnings?.some((w) => w.includes('checksum')));
  t.throws(() => decodeText(wrong, ctx({ checksum: 'strict' })), { instanceOf: ProtocolError });
});

test('tlt2h.decoder: an impossible date keeps the fix, at the receive time, with a warning', (t) => {
  const r = decodeText(
    '#867665041689485#MT700N#0000#HT#1\r\n#5065$GPRMC,148996.00,A,2485.2458,N,01258.4535,E,,,151348,,,A*5D\r\n',
  );
  t.is(r.messages[0].fixTime, undefined);
  t.truthy(r.messages[0].location);
  t.is(r.messages[0].attributes.battery, 5.065);
  t.true(r.warnings?.some((w) => w.includes('impossible')));
});

test('tlt2h.decoder: a datagram is decoded like a TCP message', (t) => {
  const s = message('AUTO', RMC);
  t.deepEqual(tlt2hProtocol.decodeDatagram!(Buffer.from(s), ctx({ transport: 'udp' })), decodeText(s));
});

test('tlt2h.decoder: a header without status or records, and text that is no message, throw ProtocolError', (t) => {
  for (const s of ['#861075026000000#\r\n#0000#AUTO#1\r\n#002c$GPRMC,,V,,,,,,,,,,A*5C', 'hello', '#1#a#0#AUTO#1']) {
    t.throws(() => decodeText(s), { instanceOf: ProtocolError }, JSON.stringify(s));
  }
});
