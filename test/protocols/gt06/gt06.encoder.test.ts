import test from 'ava';
import { encodeGt06Command, LANGUAGE_ENGLISH } from '../../../protocols/gt06/gt06.encoder.js';
import { gt06Protocol } from '../../../protocols/gt06/gt06.protocol.js';
import { crc16X25 } from '../../../protocols/shared/crc.js';
import { CommandError, type CommandContext, type DecodeContext } from '../../../protocols/types.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';
import * as F from '../../helpers/frames.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const encode = gt06Protocol.encodeCommand!;
const ctx = (o: Partial<CommandContext> = {}): CommandContext => ({
  deviceId: '123456789012345',
  now: NOW,
  serial: 0,
  ...o,
});
const decodeCtx = (): DecodeContext => ({ now: NOW, transport: 'tcp', checksum: 'strict', session: {} });
const decode = (frame: Buffer) => gt06Protocol.decode!(frame, decodeCtx());
const vectorFrame = (line: number): Buffer => frameBytes(loadVectors('gt06').find((v) => v.line === line)!);

runEncoderVectors(gt06Protocol, {
  // engineStop is the text `Relay,1#` (docs/protocols.md §5); Traccar writes server flag 0 and serial 0
  129: { encode: () => encode('Relay,1#', ctx({ serial: 0 })).bytes },
});

test('gt06.encoder: a text command is protocol 0x80 with command length, server flag, ASCII, serial and CRC-ITU', (t) => {
  const { bytes, match } = encode('WHERE#', ctx({ serial: 0x0102, serverFlag: 0xa1b2c3d4 }));
  t.is(bytes.readUInt16BE(0), 0x7878);
  t.is(bytes[2], bytes.length - 5, 'length: protocol number to CRC');
  t.is(bytes[3], 0x80);
  t.is(bytes[4], 4 + 6, 'command length: server flag and text');
  t.is(bytes.readUInt32BE(5), 0xa1b2c3d4);
  t.is(bytes.toString('latin1', 9, 15), 'WHERE#');
  t.is(bytes.readUInt16BE(15), 0x0102, 'serial');
  t.is(bytes.readUInt16BE(17), crc16X25(bytes, 2, 17));
  t.is(bytes.toString('hex', 19), '0d0a');
  t.deepEqual(match, { serverFlag: 0xa1b2c3d4 });
});

test('gt06.encoder: without a server flag the serial is the flag the answer echoes', (t) => {
  const { bytes, match } = encode('Relay,0#', ctx({ serial: 513 }));
  t.is(bytes.readUInt32BE(5), 513);
  t.deepEqual(match, { serverFlag: 513 });
});

test('gt06.encoder: the English language word goes after the text when asked for', (t) => {
  const plain = encodeGt06Command('Relay,1#', ctx()).bytes;
  const english = encodeGt06Command('Relay,1#', ctx(), { language: LANGUAGE_ENGLISH }).bytes;
  t.is(english.length, plain.length + 2);
  t.is(english[2], plain[2] + 2);
  t.is(english[4], plain[4], 'the command length leaves the language out');
  t.is(english.readUInt16BE(17), LANGUAGE_ENGLISH);
  t.is(english.readUInt16BE(english.length - 4), crc16X25(english, 2, english.length - 4));
});

test('gt06.encoder: a text too long for a one-byte frame length goes as 0x7979 with a u16 length', (t) => {
  const short = encode('A'.repeat(245), ctx()).bytes;
  t.is(short.readUInt16BE(0), 0x7878);
  t.is(short[2], 255);
  const long = encode('A'.repeat(246), ctx({ serial: 9 })).bytes;
  t.is(long.readUInt16BE(0), 0x7979);
  t.is(long.readUInt16BE(2), 256);
  t.is(long.length, 256 + 6);
  t.is(long[4], 0x80);
  t.is(long[5], 250);
  t.is(long.readUInt16BE(long.length - 6), 9, 'serial');
  t.is(long.readUInt16BE(long.length - 4), crc16X25(long, 2, long.length - 4));
  // the gateway's own splitter cuts it as one frame
  t.deepEqual(
    gt06Protocol.createSplitter!()
      .push(long)
      .map((f) => f.toString('hex')),
    [long.toString('hex')],
  );
});

test('gt06.encoder: a text beyond the one-byte command length (251 characters) is refused as too long', (t) => {
  t.is(encode('A'.repeat(251), ctx()).bytes[5], 255);
  const e = t.throws(() => encode('A'.repeat(252), ctx()), { instanceOf: CommandError });
  t.is(e?.reason, 'TOO_LONG');
  t.is(e?.protocol, 'gt06');
});

test("gt06.encoder: an empty or non-ASCII text is refused, a serial out of range is the caller's error", (t) => {
  t.is(t.throws(() => encode('', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('Relay,1#\r\n', ctx()), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.is(t.throws(() => encode('Relé,1#', ctx()), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.throws(() => encode('Relay,1#', ctx({ serial: 65536 })), { instanceOf: RangeError });
  t.throws(() => encode('Relay,1#', ctx({ serverFlag: -1 })), { instanceOf: RangeError });
});

test('gt06.decoder: a 0x15 answer gives its text and the echoed server flag as a command result', (t) => {
  const r = decode(F.gt06CommandAnswer(0xa1b2c3d4, 'Cut off the fuel supply: Success!'));
  t.deepEqual(r.commandResults, [{ text: 'Cut off the fuel supply: Success!', serverFlag: 0xa1b2c3d4 }]);
  t.is(r.messages[0].attributes.result, 'Cut off the fuel supply: Success!', 'the result attribute stays');
  t.is(r.replies.length, 1, 'acknowledged as before');
});

test('gt06.decoder: captured 0x15 answers (ICCID, length-0 padded text) give command results', (t) => {
  t.deepEqual(decode(vectorFrame(36)).commandResults, [{ text: '<ICCID:89882390000097302650>', serverFlag: 0 }]);
  t.deepEqual(decode(vectorFrame(88)).commandResults, [{ text: 'Cut off the fuel supply: Success!', serverFlag: 0 }]);
  t.deepEqual(decode(vectorFrame(81)).commandResults, [{ text: 'DYD=Success!', serverFlag: 0 }]);
});

test('gt06.decoder: a 0x21 answer in a 0x7979 frame gives its ASCII or UTF-16 text and server flag', (t) => {
  t.deepEqual(decode(vectorFrame(64)).commandResults, [{ text: 'Command error!', serverFlag: 0 }]);
  const where = decode(vectorFrame(82));
  t.truthy(where.messages[0].location, 'the WHERE# answer is also a position');
  t.regex(where.commandResults?.[0].text ?? '', /^Current position!Lat:N54\.739332/);
});

test('gt06.decoder: a position frame carries no command result', (t) => {
  const r = decode(vectorFrame(72));
  t.truthy(r.messages[0].location);
  t.is(r.commandResults, undefined);
});
