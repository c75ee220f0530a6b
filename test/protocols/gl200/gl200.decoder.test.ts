import test from 'ava';
import { gl200Protocol } from '../../../protocols/gl200/gl200.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date();

runVectors(gl200Protocol, { now: NOW });

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...over,
});
const decodeText = (s: string, c = ctx()): DecodeResult => gl200Protocol.decode!(Buffer.from(s, 'latin1'), c);
const replies = (r: DecodeResult): string[] => r.replies.map((b) => b.toString('latin1'));

const FRI =
  '+RESP:GTFRI,020102,135790246811220,,0,0,1,1,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0';

test('gl200.decoder: a GTFRI report names its IMEI, gives the fix (longitude before latitude) and is answered +SACK:<count>$', (t) => {
  const r = decodeText(`${FRI}$`);
  t.is(r.identity, '135790246811220');
  t.deepEqual(replies(r), ['+SACK:11F0$']);
  t.is(r.messages.length, 1);
  const m = r.messages[0];
  t.deepEqual(m.location, {
    latitudeDeg: 31.222073,
    longitudeDeg: 121.354335,
    valid: true,
    speedKmh: 4.3,
    courseDeg: 92,
    altitudeM: 70,
  });
  t.is(m.fixTime?.toISOString(), '2009-02-14T01:32:54.000Z');
  t.is(m.attributes.type, 'FRI');
  t.is(m.attributes.hdop, 1);
  t.deepEqual(JSON.parse(String(m.attributes.network)), {
    cellTowers: [{ mobileCountryCode: 460, mobileNetworkCode: 0, locationAreaCode: 0x18d8, cellId: 0x6141 }],
  });
});

test('gl200.decoder: a GTFRI with two location blocks gives two positions, in order', (t) => {
  const r = decodeText(
    '+RESP:GTFRI,020102,135790246811220,,0,0,2,1,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,0,4.3,92,70.0,121.354335,31.222073,20090101000000,0460,0000,18d8,6141,00,,20090214093254,11F0',
  );
  t.deepEqual(
    r.messages.map((m) => m.fixTime?.toISOString()),
    ['2009-02-14T01:32:54.000Z', '2009-01-01T00:00:00.000Z'],
  );
});

test('gl200.decoder: +BUFF: (a buffered report) decodes like +RESP: and is acknowledged the same way', (t) => {
  const r = decodeText(FRI.replace('+RESP:', '+BUFF:'));
  t.deepEqual(r.messages, decodeText(FRI).messages);
  t.deepEqual(replies(r), ['+SACK:11F0$']);
});

test('gl200.decoder: the heartbeat +ACK:GTHBD is answered +SACK:GTHBD,<version>,<count>$ and stores nothing', (t) => {
  const r = decodeText('+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$');
  t.is(r.identity, '135790246811220');
  t.deepEqual(r.messages, []);
  t.deepEqual(replies(r), ['+SACK:GTHBD,1A0401,11F0$']);
  t.is(r.commandResults, undefined);
});

test('gl200.decoder: a command +ACK is a command result with its command word and serial, and a result report', (t) => {
  const r = decodeText('+ACK:GTOUT,1A0401,135790246811220,,001F,20100214093254,11F2$');
  t.deepEqual(r.commandResults, [
    { text: '+ACK:GTOUT,1A0401,135790246811220,,001F,20100214093254,11F2', command: 'GTOUT', replySerial: 0x1f },
  ]);
  t.is(r.messages[0].attributes.result, '+ACK:GTOUT');
  t.is(r.messages[0].fixTime?.toISOString(), '2010-02-14T09:32:54.000Z');
  t.deepEqual(replies(r), ['+SACK:11F2$']);
});

test('gl200.decoder: the geofence ack has the geofence id before its serial', (t) => {
  const r = decodeText('+ACK:GTGEO,1A0102,135790246811220,,0,0008,20100310172830,11F0');
  t.like(r.commandResults?.[0], { command: 'GTGEO', replySerial: 8 });
});

const alarms: ReadonlyArray<[string, string, string]> = [
  [
    'SOS',
    '+RESP:GTSOS,020102,135790246811220,,0,0,1,1,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0',
    'sos',
  ],
  [
    'SPD',
    '+RESP:GTSPD,020102,135790246811220,,0,0,1,1,84.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0',
    'overspeed',
  ],
  [
    'BPL',
    '+RESP:GTBPL,1A0800,860599000773978,GL300,3.55,0,0.0,0,257.1,60.565437,56.818277,20161006070553,,,,,204.7,20161006071028,0C75',
    'lowBattery',
  ],
  [
    'MPF',
    '+RESP:GTMPF,0F0106,862193020451183,,0,0.4,296,-7.6,121.391055,31.164473,20130312183936,0460,0000,1878,0873,00,20130312190551,0298',
    'powerCut',
  ],
  [
    'MPN',
    '+RESP:GTMPN,0F0106,862193020451183,,0,0.4,296,-7.6,121.391055,31.164473,20130312183936,0460,0000,1878,0873,00,20130312190551,0299',
    'powerRestored',
  ],
  [
    'EPF',
    '+RESP:GTEPF,0F0106,862193020451183,,0,0.4,296,-7.6,121.391055,31.164473,20130312183936,0460,0000,1878,0873,00,20130312190551,029A',
    'powerCut',
  ],
  ['PFA', '+RESP:GTPFA,F50201,866425030235982,GL300M,20190208124849,0BD4', 'powerOff'],
  ['PNA', '+RESP:GTPNA,F50201,866425030235982,GL300M,20190208124849,0BD5', 'powerOn'],
  [
    'TOW',
    '+RESP:GTTOW,0F0106,862193020451183,,0,0.4,296,-7.6,121.391055,31.164473,20130312183936,0460,0000,1878,0873,00,20130312190551,029B',
    'tow',
  ],
  [
    'HBM',
    '+RESP:GTHBM,0F0100,135790246811220,,,10,1,1,24.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,2000.0,20090214093254,11F0',
    'hardBraking',
  ],
  [
    'JDS',
    '+RESP:GTJDS,0A0102,135790246811220,,2,0,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,20090214093254,11F0',
    'jamming',
  ],
];
for (const [type, sentence, alarm] of alarms) {
  test(`gl200.decoder: GT${type} raises ${alarm}`, (t) => {
    const r = decodeText(sentence);
    t.deepEqual(r.messages[0]?.alarms, [alarm]);
    t.is(r.messages[0].attributes.type, type);
  });
}

test('gl200.decoder: an alarm report with its fix carries the fix; one without takes its send time', (t) => {
  const [withFix] = decodeText(alarms[0][1]).messages;
  t.is(withFix.location?.latitudeDeg, 31.222073);
  const [power] = decodeText('+RESP:GTPFA,F50201,866425030235982,GL300M,20190208124849,0BD4').messages;
  t.is(power.location, undefined);
  t.is(power.fixTime?.toISOString(), '2019-02-08T12:48:49.000Z');
});

test('gl200.decoder: ignition reports set ignition, on for IGN and VGN, off for IGF and VGF', (t) => {
  const ign =
    '+RESP:GTIGN,6E0202,868589060169789,ra79,379,1,0.0,105,532.2,-70.616413,-33.393457,20240610201712,0730,0001,333A,00CFA301,01,11,,0.0,20240610201713,3AE2';
  t.is(decodeText(ign).messages[0].attributes.ignition, true);
  t.is(decodeText(ign.replace('GTIGN', 'GTIGF')).messages[0].attributes.ignition, false);
  t.is(decodeText(ign.replace('GTIGN', 'GTVGN')).messages[0].attributes.ignition, true);
  t.is(decodeText(ign.replace('GTIGN', 'GTVGF')).messages[0].attributes.ignition, false);
});

test('gl200.decoder: the device record model decides a layout the protocol version would decide otherwise', (t) => {
  // GV350M (protocol version F1) keeps the fuel sensor value in its UART device block
  const eri =
    '+RESP:GTERI,F10415,862599050680717,GV350M,00000001,,50,1,1,0.0,274,2963.1,-78.691767,-0.951295,20250512214226,,,,,,0.0,,,100,210100,,1,1,1,01DF,20250512214226,009D';
  t.is(decodeText(eri).messages[0].attributes.fuel, 0x01df);
  t.not(decodeText(eri.replace('F10415', '060100'), ctx()).messages[0].attributes.fuel, 0x01df);
  t.is(decodeText(eri.replace('F10415', '060100'), ctx({ model: 'gv350m' })).messages[0].attributes.fuel, 0x01df);
});

test('gl200.decoder: a binary +EVT frame gives its fix, battery and power, and no reply', (t) => {
  const hex =
    '2b4556540c00fc1fbf005c4501010108563254030003430564312a41090100000000003f007dff75a11a025c6a7807e1070a14041202680003189c1ac500000000000000000000000000000000000007e1070b041134054e5c6e0d0a';
  const r = gl200Protocol.decode!(Buffer.from(hex, 'hex'), ctx());
  t.deepEqual(r.replies, []);
  t.is(r.messages.length, 1);
  t.like(r.messages[0], { attributes: { batteryLevel: 100, power: 12.586, sat: 9 } });
  t.is(r.messages[0].fixTime?.toISOString(), '2017-07-10T20:04:18.000Z');
});

test('gl200.decoder: a datagram is decoded like a TCP frame, its $ included', (t) => {
  t.deepEqual(gl200Protocol.decodeDatagram!(Buffer.from(`${FRI}$`), ctx({ transport: 'udp' })), decodeText(FRI));
});

test('gl200.decoder: noise before the + of a report is skipped', (t) => {
  t.deepEqual(decodeText(`xy${FRI}`), decodeText(FRI));
});

test('gl200.decoder: text that is no Queclink report throws ProtocolError; an empty frame is nothing', (t) => {
  t.throws(() => decodeText('GET / HTTP/1.1'), { instanceOf: ProtocolError });
  t.throws(
    () =>
      decodeText(
        '+RESP:GTFRI,020102,135790246811220,,0,0,1,1,4.3,92,70.0,121.354335,99.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0',
      ),
    { instanceOf: ProtocolError },
    'latitude out of range',
  );
  t.deepEqual(decodeText('\r\n'), { messages: [], replies: [] });
});

test('gl200.decoder: a report nothing reads (an unknown type, or a known one of another layout) is a frame it cannot read, not acknowledged', (t) => {
  for (const text of ['+RESP:GTXYZ,020102,135790246811220,,abc,0012', '+RESP:GTFRI,135790246811220,garbage,0012']) {
    const e = t.throws(() => decodeText(text), { instanceOf: ProtocolError });
    t.is(e?.identity, '135790246811220', text);
  }
  t.throws(() => decodeText('+RESP:GTFRI,garbage'), {
    instanceOf: ProtocolError,
    message: /unrecognised GTFRI report/,
  });
});
