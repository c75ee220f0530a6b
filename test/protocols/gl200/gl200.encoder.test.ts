import test from 'ava';
import { gl200Protocol } from '../../../protocols/gl200/gl200.protocol.js';
import { CommandError, type CommandContext } from '../../../protocols/types.js';

const encode = gl200Protocol.encodeCommand!;
const ctx = (o: Partial<CommandContext> = {}): CommandContext => ({
  deviceId: '135790246811220',
  now: new Date(Date.UTC(2026, 0, 2)),
  serial: 7,
  ...o,
});

test('gl200.encoder: a command goes as written with $ added, matched by its command word and serial', (t) => {
  const { bytes, match } = encode('AT+GTOUT=gv300,1,,,0,0,0,0,0,0,0,,,,,,,001F', ctx());
  t.is(bytes.toString('hex'), Buffer.from('AT+GTOUT=gv300,1,,,0,0,0,0,0,0,0,,,,,,,001F$', 'latin1').toString('hex'));
  t.deepEqual(match, { command: 'GTOUT', replySerial: 0x1f });
});

test('gl200.encoder: a trailing $ in the text is its end, not doubled', (t) => {
  t.is(encode('AT+GTRTO=gl300,1,,,,,,FFFF$', ctx()).bytes.toString('latin1'), 'AT+GTRTO=gl300,1,,,,,,FFFF$');
  t.deepEqual(encode('AT+GTRTO=gl300,1,,,,,,FFFF$', ctx()).match, { command: 'GTRTO', replySerial: 0xffff });
});

test("gl200.encoder: the encoded command answers to the decoder's result for its +ACK", (t) => {
  const { match } = encode('at+gtout=gv300,1,,,0,0,0,0,0,0,0,,,,,,,001F', ctx());
  const r = gl200Protocol.decode!(Buffer.from('+ACK:GTOUT,1A0401,135790246811220,,001F,20100214093254,11F2'), {
    now: new Date(),
    transport: 'tcp',
    checksum: 'accept',
    session: {},
  });
  const answer = r.commandResults![0];
  t.true((Object.keys(match) as (keyof typeof match)[]).every((k) => answer[k] === match[k]));
});

test('gl200.encoder: without a hex serial only the command word is matched; a text that is no AT+GT command matches nothing', (t) => {
  t.deepEqual(encode('AT+GTRTO=gl300,1', ctx()).match, { command: 'GTRTO' });
  t.deepEqual(encode('AT+GTRTO=gl300', ctx()).match, { command: 'GTRTO' });
  const free = encode('hello', ctx());
  t.is(free.bytes.toString('latin1'), 'hello$');
  t.deepEqual(free.match, {});
});

test('gl200.encoder: a $ inside the text is refused as a frame delimiter', (t) => {
  const e = t.throws(() => encode('AT+GTOUT=gv300,1$AT+GTRTO=gv300,3', ctx()), { instanceOf: CommandError });
  t.is(e?.reason, 'DELIMITER');
  t.is(e?.protocol, 'gl200');
  t.is(t.throws(() => encode('$$', ctx()), { instanceOf: CommandError })?.reason, 'DELIMITER');
});

test('gl200.encoder: empty, non-ASCII, control characters and over-long texts are refused', (t) => {
  t.is(t.throws(() => encode('', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('$', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('AT+GTRTO=gl300,1\r\n', ctx()), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.is(t.throws(() => encode('AT+GTRTO=gl300,é', ctx()), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.is(encode('A'.repeat(1023), ctx()).bytes.length, 1024);
  t.is(t.throws(() => encode('A'.repeat(1024), ctx()), { instanceOf: CommandError })?.reason, 'TOO_LONG');
});

test('gl200.encoder: the bytes depend on the text only (no serial, clock or device id written)', (t) => {
  const text = 'AT+GTRTO=gl300,3,,,,,,0001';
  t.deepEqual(encode(text, ctx()).bytes, encode(text, ctx({ serial: 9, now: new Date(0), deviceId: 'x' })).bytes);
});
