import test from 'ava';
import { trvProtocol } from '../../../protocols/trv/trv.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 11, 2, 5, 6, 7));

runVectors(trvProtocol, {
  now: NOW,
  differences: {
    10: {
      reason:
        'the vector describes its time-dependent ack (IWBP00,<yyyyMMddHHmmss UTC now>,0#) instead of giving bytes',
      instead(t, decode) {
        const r = decode();
        t.is(r.identity, '353456789012345');
        t.deepEqual(r.messages, []);
        t.deepEqual(
          r.replies.map((b) => b.toString('latin1')),
          ['IWBP00,20261202050607,0#'],
        );
      },
    },
  },
});

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  deviceId: '353456789012345',
  ...over,
});
const decodeText = (s: string, c = ctx()): DecodeResult => trvProtocol.decode!(Buffer.from(s, 'latin1'), c);
const replies = (r: DecodeResult): string[] => r.replies.map((b) => b.toString('latin1'));

const AP01 = 'TRVAP01080524A2232.9806N11404.9355E000.1061830323.8706000908000102,460,0,9520,3671';

test('trv.decoder: AP01 gives the exact time, fix, speed in km/h, status and its cell', (t) => {
  const r = decodeText(AP01);
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2008-05-24T06:18:30.000Z');
  t.true(m.location!.valid);
  t.true(Math.abs(m.location!.latitudeDeg - 22.54968) < 1e-5);
  t.true(Math.abs(m.location!.longitudeDeg - 114.08226) < 1e-5);
  t.is(m.location!.speedKmh, 0.1);
  t.is(m.location!.courseDeg, 323.87);
  t.like(m.attributes, { rssi: 60, sat: 9, battery: 80, armed: true, mode: 2 });
  t.false(Object.hasOwn(m.attributes, 'ignition'), 'ACC 0 is not reported');
  t.deepEqual(JSON.parse(String(m.attributes.network)), {
    cellTowers: [{ mobileCountryCode: 460, mobileNetworkCode: 0, locationAreaCode: 9520, cellId: 3671 }],
  });
  t.deepEqual(replies(r), ['TRVBP01#']);
});

test('trv.decoder: AP10 alarm 01 is sos, 05 and 06 fall-down, 00 none; Wi-Fi MACs get colons', (t) => {
  const ap10 = (alarm: string) =>
    `IWAP10080524A2232.9806N11404.9355E000.1061830323.8706000908000502,460,0,9520,3671,${alarm},zh-cn,00,HOME|74-DE-2B-44-88-8C|97&HOME1|74-DE-2B-44-88-8D|90`;
  t.deepEqual(decodeText(ap10('01')).messages[0].alarms, ['sos']);
  t.deepEqual(decodeText(ap10('05')).messages[0].alarms, ['fallDown']);
  t.deepEqual(decodeText(ap10('06')).messages[0].alarms, ['fallDown']);
  const none = decodeText(ap10('00')).messages[0];
  t.deepEqual(none.alarms, []);
  t.deepEqual(JSON.parse(String(none.attributes.network)).wifiAccessPoints, [
    { macAddress: '74:DE:2B:44:88:8C', signalStrength: 97 },
    { macAddress: '74:DE:2B:44:88:8D', signalStrength: 90 },
  ]);
  t.deepEqual(replies(decodeText(ap10('01'))), ['IWBP10#']);
});

test('trv.decoder: YP14 with negative Wi-Fi signals keeps only its cell, as the reference', (t) => {
  const r = decodeText(
    'TRVYP14220217A5235.7885N00724.1840E000.0130919177.561000050660000200004,262,01,14635,52789,FritzBox7|DC-39-8F-7E-94-73|-89&MYAP|44-D4-F7-77-9C-7C|-80#',
  );
  t.is(r.messages[0].fixTime?.toISOString(), '2022-02-17T13:09:19.000Z');
  t.deepEqual(Object.keys(JSON.parse(String(r.messages[0].attributes.network))), ['cellTowers']);
  t.deepEqual(replies(r), ['TRVZP14#']);
});

test('trv.decoder: the logins name the device; only IW gets the server time', (t) => {
  const iw = decodeText('IWAP00355932600077007,8901240204123656505f,310240202365650', ctx({ deviceId: undefined }));
  t.is(iw.identity, '355932600077007');
  t.deepEqual(replies(iw), ['IWBP00,20261202050607,0#']);
  const trv = decodeText('TRVAP00352121088015548', ctx({ deviceId: undefined }));
  t.is(trv.identity, '352121088015548');
  t.deepEqual(replies(trv), ['TRVBP00#']);
});

test('trv.decoder: heartbeats and health data, no location', (t) => {
  const a = (s: string) => decodeText(s).messages[0];
  t.deepEqual(a('IWAP03,06000908000102,5555,30').attributes, { rssi: 60, sat: 9, batteryLevel: 80, steps: 5555 });
  t.deepEqual(a('IWAP49,68').attributes, { heartRate: 68 });
  t.deepEqual(a('IWAPHT,60,130,85').attributes, { heartRate: 60, pressureSystolic: 130, pressureDiastolic: 85 });
  t.deepEqual(a('IWAPHP,60,130,85,95,90,36.5,,,,,,,').attributes, {
    heartRate: 60,
    pressureSystolic: 130,
    pressureDiastolic: 85,
    spo2: 95,
    bloodSugar: 90,
    temperature: 36.5,
  });
  t.deepEqual(a('IWAP50,36.7,90').attributes, { temperature: 36.7, batteryLevel: 90 });
  t.is(a('IWAP50,36.7,90').location, undefined);
  t.deepEqual(replies(decodeText('IWAP50,36.7,90')), ['IWBP50#']);
});

test('trv.decoder: CP01 status with the optional block, power and movement digits', (t) => {
  const r = decodeText('TRVCP01,07800010010000602001206001120124');
  t.like(r.messages[0].attributes, { rssi: 78, sat: 0, battery: 100, ignition: true, charge: false });
  t.is(r.messages[0].attributes.blocked, false);
  t.deepEqual(replies(r), ['TRVDP01#']);
  t.deepEqual(decodeText('TRVCP01,06000908000102').messages[0].attributes, {
    rssi: 60,
    sat: 9,
    battery: 80,
    armed: true,
    mode: 2,
  });
});

test('trv.decoder: no answer for the ignore list and for a bare six-digit time; AP14 of TRV gets zeros', (t) => {
  t.deepEqual(replies(decodeText('IWAP12,080835,+491773329827,+491773329826')), []);
  t.deepEqual(replies(decodeText('IWAP14,080835,004e|+4952032960728,,,#')), []);
  t.deepEqual(replies(decodeText('IWAPXL,080835')), []);
  t.deepEqual(decodeText('IWAPXL,080835').messages, []);
  t.deepEqual(replies(decodeText('TRVAP14,1')), ['TRVBP14,0.000,0.000#']);
  t.deepEqual(replies(decodeText('IWAP33,1')), []);
  t.deepEqual(replies(decodeText('IWAP07,abc')), ['IWBP07#']);
});

test('trv.decoder: before a login a position is answered but reports nothing', (t) => {
  const r = decodeText(AP01, ctx({ deviceId: undefined }));
  t.deepEqual(r.messages, []);
  t.deepEqual(replies(r), ['TRVBP01#']);
});

test('trv.decoder: the vendor is kept in the session, for commands', (t) => {
  const c = ctx();
  decodeText('IWAP49,68', c);
  t.is(c.session['trv.vendor'], 'IW');
});

test('trv.decoder: unreadable frames throw ProtocolError', (t) => {
  for (const s of ['', 'IW', 'iwap01', 'IWAP49', 'IWAP49,x', 'TRVAP00', 'IWAP00,123']) {
    t.throws(() => decodeText(s), { instanceOf: ProtocolError }, JSON.stringify(s));
  }
  // minutes 99 make a latitude past 90
  const bad = AP01.replace('2232.9806N', '9099.9806N');
  t.throws(() => decodeText(bad), { instanceOf: ProtocolError });
});
