import test from 'ava';
import { suntechProtocol } from '../../../protocols/suntech/suntech.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const decode = suntechProtocol.decode!;
const ctx = (session: Record<string, unknown> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session,
});
const text = (s: string): Buffer => Buffer.from(s, 'latin1');

runVectors(suntechProtocol, {
  now: NOW,
  everyFrameNamesItsDevice: false,
  // Traccar's per-device settings for optional fields: this decoder reads them from the fields themselves
  detectedSetup: /^decoder\.(setHbm|setIncludeAdc|setIncludeRpm|setIncludeTemp|setProtocolType)\(/,
  differences: {
    1: {
      reason: 'the binary zip report (0x02) layout is in no document at hand: a malformed frame naming its device',
      instead(t, decode) {
        const err = t.throws(() => decode(), { instanceOf: ProtocolError });
        t.is(err?.identity, '511340877', 'a frame trackgate cannot read, naming its device');
      },
    },
    // Traccar's own test of this frame (testDecodeCrash) is @Ignore'd: its expected g-sensor value ''
    // is a placeholder, not a value lost in extraction, and its decoder passes nothing either
    48: {
      reason:
        "crash reports (CRR) are not decoded; Traccar's test of this frame is ignored (@Ignore), its expected value a placeholder",
      instead(t, decode) {
        const r = decode();
        t.is(r.identity, '0910000063', 'the device is named');
        t.deepEqual(r.messages, [], 'nothing stored');
        t.deepEqual(r.replies, [], 'nothing answered');
      },
    },
  },
});

const STT =
  'SA200STT;317652;042;20120718;15:37:12;16d41;-15.618755;-056.083241;000.024;000.00;8;1;41548;12.17;100000;2;1979';

test('suntech.decoder: a legacy STT is a position in degrees and km/h, UTC, with I/O; nothing is answered', (t) => {
  const r = decode(text(STT), ctx());
  t.is(r.identity, '317652');
  t.deepEqual(r.replies, []);
  const m = r.messages[0];
  t.is(m.fixTime!.toISOString(), '2012-07-18T15:37:12.000Z');
  t.deepEqual(m.location, {
    latitudeDeg: -15.618755,
    longitudeDeg: -56.083241,
    valid: true,
    speedKmh: 0.024,
    courseDeg: 0,
    satellites: 8,
  });
  t.like(m.attributes, { odometer: 41548, power: 12.17, ignition: true, in1: false, status: 2, index: 1979 });
  t.deepEqual(m.alarms, []);
});

test('suntech.decoder: EMG and ALT codes map to alarms', (t) => {
  const emg = (code: number) =>
    decode(
      text(
        `SA200EMG;317652;042;20120718;15:35:41;16d41;-15.618740;-056.083252;000.034;000.00;8;1;41548;12.17;110000;${code}`,
      ),
      ctx(),
    ).messages[0].alarms;
  t.deepEqual(emg(1), ['sos']);
  t.deepEqual(emg(3), ['powerCut']);
  t.deepEqual(emg(5), ['door']);
  t.deepEqual(emg(8), ['vibration']);
  t.deepEqual(emg(4), []);
  const alt = (code: number) =>
    decode(
      text(
        `ST300ALT;007239104;40;313;20190112;01:07:16;c99139;+04.703287;-074.148897;000.000;189.72;21;1;425512;12.61;100000;${code};003188;4.1;1`,
      ),
      ctx(),
    ).messages[0].alarms;
  for (const [code, alarm] of [
    [1, 'overspeed'],
    [5, 'geofenceExit'],
    [6, 'geofenceEnter'],
    [14, 'lowBattery'],
    [16, 'accident'],
    [40, 'powerRestored'],
    [41, 'powerCut'],
    [42, 'sos'],
    [46, 'hardAcceleration'],
    [47, 'hardBraking'],
    [50, 'jamming'],
    [132, 'door'],
  ] as const) {
    t.deepEqual(alt(code), [alarm], `ALT ${code}`);
  }
  t.deepEqual(alt(33), []);
  const universal = decode(
    text(
      'ALT;0520000295;3FFFFF;52;1.0.2;0;20190703;01:03:24;00004697;732;101;0002;59;+4.682583;-74.128142;0.00;0.00;6;1;00000000;00000000;42;1;',
    ),
    ctx(),
  ).messages[0];
  t.deepEqual(universal.alarms, ['sos'], 'a universal ALT maps its alert id the same way');
  t.is(universal.attributes.alertId, '42');
});

test('suntech.decoder: the session keeps the model prefix, or that the device speaks the universal format', (t) => {
  const session: Record<string, unknown> = {};
  decode(text(STT), ctx(session));
  t.deepEqual(session, { 'suntech.prefix': 'SA200', 'suntech.universal': false });
  decode(
    text(
      'STT;100850000;3FFFFF;26;010;1;20161117;08:37:39;0000004F;450;0;0014;20;+37.479323;+126.887827;62.03;65.43;10;1;00000101;00001000;1;2;0492',
    ),
    ctx(session),
  );
  t.is(session['suntech.universal'], true);
});

test('suntech.decoder: command answers come back as command results, legacy and universal', (t) => {
  const legacy = decode(text('ST300CMD;Res;511848119;315;PresetA;NTW;0'), ctx());
  t.is(legacy.identity, '511848119');
  t.deepEqual(legacy.commandResults, [{ text: '315;PresetA;NTW;0' }]);
  const universal = decode(text('RES;4309999001;04;02;TEST'), ctx());
  t.deepEqual(universal.commandResults, [{ text: '04;02;TEST' }]);
  t.is(decode(text(STT), ctx()).commandResults, undefined);
});

test('suntech.decoder: keep-alives and unknown report types name the device and report nothing', (t) => {
  const alv = decode(text('SA200ALV;317652'), ctx());
  t.is(alv.identity, '317652');
  t.deepEqual(alv.messages, []);
  t.deepEqual(alv.replies, [], 'Suntech expects no answer to ALV');
  t.deepEqual(decode(text('ALV;0560001616'), ctx()).messages, []);
});

test('suntech.decoder: malformed reports throw ProtocolError', (t) => {
  for (const bad of [
    'SA200STT;317652;042;20121318;15:37:12;16d41;-15.6;-56.0;0;0;8;1;1;12.17;100000;2;1979',
    'SA200STT;317652;042;20120718;15:37:12;16d41;-95.6;-56.0;0;0;8;1;1;12.17;100000;2;1979',
    'SA200STT;317652;042;20120718;15:37:12;16d41;x;-56.0;0;0;8;1;1;12.17;100000;2;1979',
    'STT;0560001616;XYZ;1',
    'SA200STT;31 76;042;20120718;15:37:12;16d41;-15.6;-56.0;0;0;8;1;1;12.17;100000;2;1979',
  ]) {
    t.throws(() => decode(text(bad), ctx()), { instanceOf: ProtocolError }, bad);
  }
  t.throws(
    () => decode(Buffer.from('81000a0520', 'hex'), ctx()),
    { instanceOf: ProtocolError },
    'a truncated binary report',
  );
  t.throws(() => decode(text('garbage without fields'), ctx()), {
    instanceOf: ProtocolError,
    message: /text without fields/,
  });
  t.deepEqual(decode(text('-Error'), ctx()).messages, [], "a device's complaint about a command is no malformed frame");
});

test('suntech.decoder: a binary zip report (layout unknown) is a frame it cannot read, naming its device as Traccar does', (t) => {
  const zip = Buffer.from(
    '02003210511340877028813f180c170016041051290c0635652d793653000038001a30e601665e560000000100750002712704000103',
    'hex',
  );
  const e = t.throws(() => decode(zip, ctx()), { instanceOf: ProtocolError, message: /zip report/ });
  t.is(e?.identity, '511340877');
});
