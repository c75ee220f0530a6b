import test from 'ava';
import { jt808Protocol } from '../../../protocols/jt808/jt808.protocol.js';
import { ProtocolError, type DecodeContext } from '../../../protocols/types.js';
import { loadVectors, vectorTime } from '../../helpers/vectors.js';
import { decodeVector, runVectors } from '../../helpers/vector-runner.js';
import * as F from '../../helpers/frames.js';

const NOW = new Date('2026-07-01T00:00:00Z');

const ctx = (checksum: 'accept' | 'strict' = 'accept'): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum,
  session: {},
});

const decode = (frame: Buffer, c: DecodeContext) => jt808Protocol.decode!(frame, c);

const vectors = loadVectors('jt808');

runVectors(jt808Protocol, { now: NOW });

test('jt808.decoder: a heartbeat names its terminal and is acknowledged with 0x8001', (t) => {
  const result = decode(Buffer.from('7e0002000004304832546500b7ca7e', 'hex'), ctx());
  t.is(result.identity, '043048325465', 'the id as the terminal sends it, its leading zero kept');
  t.deepEqual(result.alternativeIdentities, ['43048325465'], 'and without it, tried next');
  t.deepEqual(result.messages, []);
  t.is(result.replies[0].toString('hex'), '7e80010005043048325465000000b70002004e7e');
});

test('jt808.decoder: registration returns identity, no message, 0x8100 and a refusal for unknown terminals', (t) => {
  const frame = Buffer.from(
    '7e0100002d0141305678720024002c012f373031313142534a2d41362d424400000000000000000000003035363738373201d4c14238383838386d7e',
    'hex',
  );
  const c = ctx();
  const result = decode(frame, c);
  t.is(result.identity, '014130567872');
  t.deepEqual(result.alternativeIdentities, ['14130567872']);
  t.is(c.session['jt808.terminalId'], '014130567872');
  t.deepEqual(result.messages, []);
  t.is(result.replies[0].toString('hex'), '7e8100000f0141305678720000002400303134313330353637383732887e');
  t.is(result.rejection?.toString('hex').slice(0, 10), '7e81000003');
});

test('jt808.decoder: a 2019 frame carries the version byte and a 10-byte id into the reply', (t) => {
  // 0x0002 heartbeat, attribute 0x4000, version 1, BCD id 00000000000141305678, serial 0x0007
  const content = Buffer.from('0002400001000000000001413056780007', 'hex');
  let x = 0;
  for (const b of content) x ^= b;
  const frame = Buffer.concat([Buffer.from([0x7e]), content, Buffer.from([x, 0x7e])]);
  const result = decode(frame, ctx());
  t.is(result.identity, '00000000000141305678');
  t.deepEqual(
    result.alternativeIdentities,
    ['000141305678', '141305678'],
    'its 12 digits of the 2013 header, then without the zeros',
  );
  const reply = result.replies[0].toString('hex');
  t.true(reply.startsWith('7e8001400501000000000001413056780000'), reply);
  t.true(reply.endsWith('0007000200' + reply.slice(-4)), reply);
});

test('jt808.decoder: a location report is read in Beijing time (GMT+8), the JT/T 808 device clock', (t) => {
  const frame = Buffer.from(
    '7e020000220014012499170007000000000000400e012af16f02cbd2ba000000000000150101194257010400000077a97e',
    'hex',
  );
  const beijing = decode(frame, ctx()).messages[0];
  t.is(vectorTime(beijing.fixTime!), '2015-01-01 11:42:57.000');
  // status 0x400e: fixed, south, west
  t.true(Math.abs(beijing.location!.latitudeDeg + 19.591535) < 1e-6);
  t.true(Math.abs(beijing.location!.longitudeDeg + 46.912186) < 1e-6);
});

test('jt808.decoder: a terminal id without leading zeros has no other form', (t) => {
  const result = decode(
    F.jt808Location('123456789012', { time: new Date(Date.UTC(2026, 2, 1)), lat: 1, lon: 2 }, 1),
    ctx(),
  );
  t.is(result.identity, '123456789012');
  t.is(result.alternativeIdentities, undefined);
});

test('jt808.decoder: a checksum mismatch is a warning by default and an error when strict', (t) => {
  const frame = Buffer.from('7e0002000004304832546500b7cb7e', 'hex');
  const accepted = decode(frame, ctx());
  t.is(accepted.warnings?.length, 1);
  t.throws(() => decode(frame, ctx('strict')), { instanceOf: ProtocolError });
});

test('jt808.decoder: a frame still escaped as captured on the wire is unescaped by its length', (t) => {
  // vector 12's ack as a device frame: 0x8001 whose checksum 7E is escaped as 7D 02
  const raw = Buffer.from('7e800100050120400000040000019c0200007d027e', 'hex');
  const result = decode(raw, ctx());
  t.is(result.identity, '012040000004');
  t.falsy(result.warnings);
});

test('jt808.decoder: a Jimi BASE,2 text asks for the time and gets it back', (t) => {
  const result = decode(Buffer.from('(794104004140,1,001,BASE,2,TIME)'), ctx());
  t.deepEqual(result.messages, []);
  t.is(result.replies[0].toString(), '(794104004140,1,001,BASE,2,20260701000000)');
});

test('jt808.decoder: truncated and foreign frames throw ProtocolError', (t) => {
  for (const hex of ['7e', '7e7e', '7e0200', '7e02000022001401249917000700000000007e', '00112233', '28']) {
    t.throws(() => decode(Buffer.from(hex, 'hex'), ctx()), { instanceOf: ProtocolError }, hex);
  }
});

test('jt808.decoder: batches are acknowledged, JT701 reports answer 0x4401 when asked', (t) => {
  const batch = vectors.find((v) => v.msg_type?.startsWith('0x0704'))!;
  const batchReply = decodeVector(jt808Protocol, batch, NOW).replies[0].toString('hex');
  t.true(batchReply.startsWith('7e80010005'), batchReply);
  t.true(batchReply.includes('0704'), batchReply);
  const jt701 = vectors.find((v) => v.msg_type?.startsWith('0x5501') && v.checksum_ok)!;
  const reply = decodeVector(jt808Protocol, jt701, NOW).replies[0].toString('hex');
  t.true(reply.startsWith('7e44010003'), reply);
  t.true(reply.includes('01550100'), reply);
});

test('jt808.decoder: the E7 delimiter carries a 7-byte terminal id, and the reply uses E7 too', (t) => {
  const content = Buffer.from('00020000' + '01234567890123' + '0005', 'hex');
  let x = 0;
  for (const b of content) x ^= b;
  const result = decode(Buffer.concat([Buffer.from([0xe7]), content, Buffer.from([x, 0xe7])]), ctx());
  t.is(result.identity, '01234567890123');
  t.deepEqual(result.alternativeIdentities, ['1234567890123']);
  const reply = result.replies[0];
  t.is(reply[0], 0xe7);
  t.is(reply[reply.length - 1], 0xe7);
  t.is(reply.subarray(1, 5).toString('hex'), '80010005');
});
