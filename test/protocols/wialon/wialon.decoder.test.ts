import test from 'ava';
import { wialonProtocol } from '../../../protocols/wialon/wialon.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { decodeVector, runVectors } from '../../helpers/vector-runner.js';
import { loadVectors } from '../../helpers/vectors.js';

const NOW = new Date();

runVectors(wialonProtocol, { now: NOW });

test('wialon.decoder: cell towers become the network attribute; an incomplete tower stays as its params', (t) => {
  const v = loadVectors('wialon').find((x) => x.line === 17)!;
  const m = decodeVector(wialonProtocol, v, NOW).messages[0];
  t.is(m.attributes.mcc3, 333, 'an incomplete third tower stays as its params');
  t.is(m.attributes.cell_id1, 45542, 'cell_id stays an attribute, as in Traccar');
});

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...over,
});
const decodeText = (s: string, c = ctx()): DecodeResult => wialonProtocol.decode!(Buffer.from(s, 'utf8'), c);
const replies = (r: DecodeResult): string[] => r.replies.map((b) => b.toString('latin1'));

test('wialon.decoder: an IPS 1.1 login names the device and is answered #AL#1', (t) => {
  const c = ctx();
  const r = decodeText('#L#123456789012345;test', c);
  t.is(r.identity, '123456789012345');
  t.deepEqual(r.messages, []);
  t.deepEqual(replies(r), ['#AL#1\r\n']);
  t.is(c.session['wialon.version'], '1.1');
  t.is(r.checksumError, undefined);
});

test('wialon.decoder: an IPS 2.0 login is checked by its CRC16', (t) => {
  const c = ctx();
  const r = decodeText('#L#2.0;123456789012345;NA;15CD', c);
  t.is(r.identity, '123456789012345');
  t.is(c.session['wialon.version'], '2.0');
  t.is(r.checksumError, undefined);
  const bad = decodeText('#L#2.0;123456789012345;NA;15CE', ctx());
  t.regex(bad.checksumError ?? '', /does not match 15CD/);
  t.deepEqual(replies(bad), ['#AL#1\r\n'], 'accepted with a warning');
  t.throws(() => decodeText('#L#2.0;123456789012345;NA;15CE', ctx({ checksum: 'strict' })), {
    instanceOf: ProtocolError,
  });
});

test('wialon.decoder: a ping is answered #AP#', (t) => {
  t.deepEqual(replies(decodeText('#P#')), ['#AP#\r\n']);
});

test('wialon.decoder: #SD# after a login: fix, time, km/h, satellites, #AD#1', (t) => {
  const r = decodeText('#SD#270413;205601;5544.6025;N;03739.6834;W;36;120;150;4', ctx({ deviceId: '123' }));
  t.is(r.identity, '123');
  const m = r.messages[0];
  t.is(m.fixTime?.toISOString(), '2013-04-27T20:56:01.000Z');
  t.true(Math.abs(m.location!.latitudeDeg - 55.74338) < 1e-5);
  t.true(Math.abs(m.location!.longitudeDeg + 37.66139) < 1e-5);
  t.is(m.location!.speedKmh, 36, 'Wialon sends km/h');
  t.is(m.location!.courseDeg, 120);
  t.is(m.location!.altitudeM, 150);
  t.true(m.location!.valid);
  t.is(m.attributes.sat, 4);
  t.deepEqual(replies(r), ['#AD#1\r\n']);
});

test('wialon.decoder: #D# extended fields: hdop, inputs, outputs, adc, iButton, params', (t) => {
  const r = decodeText(
    '#D#110315;045857;5364.0167;N;06127.8262;E;0;155;965;2;2.40;4;1;14.77,,3.6;AB45DF01145;fuel:2:45.8,hw:3:V4.5,ok:3:true,count1:1:564,accuracy:2:12.5,temp:2:18.9,bat:1:99',
    ctx({ deviceId: '123' }),
  );
  const m = r.messages[0];
  t.false(m.location!.valid, 'fewer than 3 satellites');
  t.like(m.attributes, {
    hdop: 2.4,
    input: '4',
    output: '1',
    adc1: '14.77',
    adc3: '3.6',
    driverUniqueId: 'AB45DF01145',
    fuel: 45.8,
    hw: 'V4.5',
    ok: true,
    count1: 564,
    deviceTemp: 18,
    batteryLevel: 99,
  });
  t.false('adc2' in m.attributes, 'an empty adc is left out');
  t.is(m.location!.accuracyM, 12.5);
  t.false('accuracy' in m.attributes);
});

test('wialon.decoder: a #D# without date or fix has the receive time and no location', (t) => {
  const r = decodeText('#D#NA;NA;NA;NA;NA;NA;NA;NA;NA;NA;NA;NA;NA;;NA;SOS:1:0', ctx({ deviceId: '123' }));
  t.is(r.messages[0].fixTime?.getTime(), NOW.getTime());
  t.is(r.messages[0].location, undefined);
  t.is(r.messages[0].attributes.sos, 0);
  t.deepEqual(replies(r), ['#AD#1\r\n']);
});

test('wialon.decoder: #B# gives every record, archived, and #AB#<parts>', (t) => {
  const rec = '080914;073235;5027.50625;N;03026.19321;E;0.700;0.000;NA;4';
  const r = decodeText(`#B#${rec}|${rec}|garbage`, ctx({ deviceId: '123' }));
  t.is(r.messages.length, 2);
  t.true(r.messages.every((m) => m.attributes.archive === true));
  t.deepEqual(replies(r), ['#AB#3\r\n'], 'Traccar counts the unreadable part too');
});

test('wialon.decoder: #M# is a message and a command result, answered #AM#1', (t) => {
  const r = decodeText('#M#Привет', ctx({ deviceId: '123' }));
  t.is(r.messages[0].attributes.result, 'Привет');
  t.is(r.messages[0].location, undefined);
  t.deepEqual(r.commandResults, [{ text: 'Привет' }]);
  t.deepEqual(replies(r), ['#AM#1\r\n']);
});

test('wialon.decoder: data before any login is nothing, as in Traccar', (t) => {
  const r = decodeText('#SD#270413;205601;5544.6025;N;03739.6834;E;1;2;3;4');
  t.deepEqual(r.messages, []);
  t.deepEqual(r.replies, []);
});

test('wialon.decoder: after an IPS 2.0 login the CRC16 of data packets is checked', (t) => {
  const c = ctx();
  decodeText('#L#2.0;123456789012345;NA;15CD', c);
  const d = '#SD#300924;154245;5554.350052;N;3644.670410;E;2.92;NA;NA;NA;';
  const good = decodeText(`${d}7A01`, { ...c, deviceId: '123456789012345' });
  t.is(good.checksumError, undefined);
  const bad = decodeText(`${d}7A02`, { ...c, deviceId: '123456789012345' });
  t.regex(bad.checksumError ?? '', /7A02 does not match 7A01/);
  t.is(bad.messages.length, 1);
  t.throws(() => decodeText(`${d}7A02`, { ...c, deviceId: '1', checksum: 'strict' }), { instanceOf: ProtocolError });
});

test('wialon.decoder: a UDP datagram names its device and version in front', (t) => {
  const d = '101118;061143;0756.0930;N;12338.6403;E;18.223;99.766;-4.000;10;0.800;NA;NA;NA;NA;a:1:1;';
  const udp = ctx({ transport: 'udp' });
  const r = wialonProtocol.decodeDatagram!(Buffer.from(`2.0;99999999#D#${d}0000\r\n`), udp);
  t.is(r.identity, '99999999');
  t.is(r.messages.length, 1);
  t.regex(r.checksumError ?? '', /does not match/, 'the datagram says 2.0, so its CRC is checked');
  const v1 = wialonProtocol.decodeDatagram!(Buffer.from(`99999999#P#`), udp);
  t.is(v1.identity, '99999999');
  t.deepEqual(replies(v1), ['#AP#\r\n']);
});

test('wialon.decoder: text that is no #TYPE# packet, or unreadable data, throws ProtocolError', (t) => {
  t.throws(() => decodeText('GET / HTTP/1.1'), { instanceOf: ProtocolError });
  t.throws(() => decodeText('#SD#garbage', ctx({ deviceId: '1' })), { instanceOf: ProtocolError });
  t.throws(() => decodeText('#L#2.0'), { instanceOf: ProtocolError });
});

test('wialon.decoder: a type Traccar does not read is nothing', (t) => {
  const r = decodeText('#I#1;2;3', ctx({ deviceId: '1' }));
  t.deepEqual(r.messages, []);
  t.deepEqual(r.replies, []);
});
