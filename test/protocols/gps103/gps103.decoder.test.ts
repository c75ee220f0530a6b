import test from 'ava';
import { gps103Protocol } from '../../../protocols/gps103/gps103.protocol.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../../../protocols/types.js';
import { runVectors } from '../../helpers/vector-runner.js';

const NOW = new Date();

runVectors(gps103Protocol, { now: NOW });

const ctx = (over: Partial<DecodeContext> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'accept',
  session: {},
  ...over,
});
const decodeText = (s: string, c = ctx()): DecodeResult => gps103Protocol.decode!(Buffer.from(s, 'latin1'), c);
const replies = (r: DecodeResult): string[] => r.replies.map((b) => b.toString('latin1'));

test('gps103.decoder: the ##,imei: login names the device and replies LOAD', (t) => {
  const r = decodeText('##,imei:359586015829802,A;');
  t.is(r.identity, '359586015829802');
  t.deepEqual(r.messages, []);
  t.deepEqual(replies(r), ['LOAD']);
});

test('gps103.decoder: a bare IMEI heartbeat replies ON and names the device', (t) => {
  const r = decodeText('359586015829802;');
  t.is(r.identity, '359586015829802');
  t.deepEqual(replies(r), ['ON']);
});

test('gps103.decoder: the local time is corrected to UTC by its offset from the fix time', (t) => {
  // local 2015-10-30 08:01, UTC 00:01:01 -> UTC+8
  const r = decodeText('imei:359710045559474,tracker,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;');
  t.is(r.messages[0].fixTime?.toISOString(), '2015-10-30T00:01:01.000Z');
});

test('gps103.decoder: speed is converted from knots to km/h', (t) => {
  const r = decodeText(
    'imei:863070010423167,tracker,1211060621,,F,062152.000,A,2220.6914,N,11407.5506,E,15.85,347.84,',
  );
  t.true(Math.abs(r.messages[0].location!.speedKmh! - 15.85 * 1.852) < 1e-9);
  t.is(r.messages[0].location!.courseDeg, 347.84);
});

test('gps103.decoder: help me is an sos alarm and is answered with **,imei:<imei>,E;', (t) => {
  const r = decodeText(
    'imei:359586015829802,help me,0809231429,13554900601,F,062947.294,A,2234.4026,N,11354.3277,E,0.00,;',
  );
  t.deepEqual(r.messages[0].alarms, ['sos']);
  t.deepEqual(replies(r), ['**,imei:359586015829802,E;']);
});

test('gps103.decoder: an LBS-only alarm has the alarm and no location', (t) => {
  const r = decodeText('imei:864895030279986,ac alarm,180404174252,,L,,,296a,,51f7,,,;');
  t.is(r.identity, '864895030279986');
  t.deepEqual(r.messages[0].alarms, ['powerCut']);
  t.is(r.messages[0].location, undefined);
});

test('gps103.decoder: text that is no gps103 sentence throws ProtocolError', (t) => {
  t.throws(() => decodeText('GET / HTTP/1.1'), { instanceOf: ProtocolError });
});

test('gps103.decoder: a datagram is decoded like a TCP sentence', (t) => {
  const s = 'imei:359710049092324,tracker,151027025958,,F,235957.000,A,2429.5156,N,04424.5828,E,0.01,27.91,,0,0,,,;';
  t.deepEqual(gps103Protocol.decodeDatagram!(Buffer.from(s), ctx({ transport: 'udp' })), decodeText(s));
});
