import test from 'ava';
import { h02Protocol } from '../../../protocols/h02/h02.protocol.js';
import { CommandError, type CommandContext, type DecodeContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const IMEI = '123456789012345';
/** Traccar's encoder test sends at 01:02:03 */
const AT_010203 = new Date(Date.UTC(2026, 0, 2, 1, 2, 3));
const encode = h02Protocol.encodeCommand!;
const ctx = (o: Partial<CommandContext> = {}): CommandContext => ({ deviceId: IMEI, now: AT_010203, serial: 0, ...o });
const decode = (text: string) =>
  h02Protocol.decode!(Buffer.from(text, 'latin1'), {
    now: AT_010203,
    transport: 'tcp',
    checksum: 'accept',
    session: {},
  } satisfies DecodeContext);

runEncoderVectors(h02Protocol, {
  // alarmArm is `SCF,0,0` and engineResume `S20,1,0` (H02ProtocolEncoder, docs/protocols.md §5)
  73: { encode: () => encode('SCF,0,0', ctx()).bytes },
  74: { encode: () => encode('S20,1,0', ctx()).bytes },
});

test('h02.encoder: the send time goes after the command word, the parameters after it', (t) => {
  const { bytes, match } = encode('S20,1,1', ctx({ now: new Date(Date.UTC(2026, 4, 6, 23, 59, 58)) }));
  t.is(bytes.toString('latin1'), `*HQ,${IMEI},S20,235958,1,1#`);
  t.deepEqual(match, { command: 'S20', commandTime: '235958' });
});

test('h02.encoder: a command word without parameters is sent with its time only', (t) => {
  t.is(encode('D1', ctx()).bytes.toString('latin1'), `*HQ,${IMEI},D1,010203#`);
});

test('h02.encoder: "#" or "*" in the text is refused as a frame delimiter', (t) => {
  const hash = t.throws(() => encode('S71,22,10#', ctx()), { instanceOf: CommandError });
  t.is(hash?.reason, 'DELIMITER');
  t.regex(hash?.message ?? '', /"#"/);
  t.is(t.throws(() => encode('*HQ,1,S20', ctx()), { instanceOf: CommandError })?.reason, 'DELIMITER');
});

test('h02.encoder: the frame stays within the 1,024 bytes the H02 splitter takes', (t) => {
  // *HQ,<15 digits>,<text>,010203# is 28 bytes besides the text
  t.is(encode(`S1,${'x'.repeat(993)}`, ctx()).bytes.length, 1024);
  t.is(t.throws(() => encode(`S1,${'x'.repeat(994)}`, ctx()), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});

test('h02.encoder: an empty text or command word, a control character or a non-numeric id is refused', (t) => {
  t.is(t.throws(() => encode('', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode(',1,1', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('S20,1\n', ctx()), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.is(
    t.throws(() => encode('S20,1,1', ctx({ deviceId: '12,34' })), { instanceOf: CommandError })?.reason,
    'DEVICE_ID',
  );
});

test('h02.decoder: a V4 confirmation echoes the command word and time the encoder matched on', (t) => {
  const sent = encode('S20,1,1', ctx());
  const r = decode(`*HQ,${IMEI},V4,S20,DONE,010203,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,F7FFFBFF#`);
  t.deepEqual(r.commandResults, [{ text: 'S20,DONE,010203', command: 'S20', commandTime: '010203' }]);
  t.like(r.commandResults?.[0], sent.match);
  t.truthy(r.messages[0].location, 'the position it carries is still reported');
  t.is(r.messages[0].attributes.result, 'S20,DONE,010203');
});

test('h02.decoder: a captured V4 without an answer word and one without a position give command results', (t) => {
  t.deepEqual(
    decode('*TH,2020916012,V4,S17,130305,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,FFFFFBFF#').commandResults,
    [{ text: 'S17,130305', command: 'S17', commandTime: '130305' }],
  );
  t.deepEqual(decode(`*HQ,${IMEI},V4,SCF,OK,010203#`).commandResults, [
    { text: 'SCF,OK,010203', command: 'SCF', commandTime: '010203' },
  ]);
});

test('h02.decoder: an SMS text reply is a command result; a position is not', (t) => {
  t.deepEqual(decode(`*HQ,${IMEI},SMS,Relay ok, fuel cut#`).commandResults, [{ text: 'Relay ok, fuel cut' }]);
  t.is(decode(`*HQ,${IMEI},V1,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,FFFFFBFF#`).commandResults, undefined);
});
