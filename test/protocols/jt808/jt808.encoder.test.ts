import test from 'ava';
import {
  encodeJt808Command,
  encodeJt808TerminalControl,
  terminalIdBytes,
} from '../../../protocols/jt808/jt808.encoder.js';
import { jt808Protocol } from '../../../protocols/jt808/jt808.protocol.js';
import { formatMessage } from '../../../protocols/jt808/jt808.replies.js';
import { xor8 } from '../../../protocols/shared/crc.js';
import { CommandError, type CommandContext, type DecodeContext } from '../../../protocols/types.js';
import { frameBytes, loadVectors } from '../../helpers/vectors.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const IMEI = '123456789012345';
const encode = jt808Protocol.encodeCommand!;
const ctx = (o: Partial<CommandContext> = {}): CommandContext => ({ deviceId: IMEI, now: NOW, serial: 0, ...o });
const decodeCtx = (session: Record<string, unknown> = {}): DecodeContext => ({
  now: NOW,
  transport: 'tcp',
  checksum: 'strict',
  session,
});
/** what the gateway does with the bytes: the splitter unescapes, the decoder reads the header */
const unescaped = (bytes: Buffer): Buffer => {
  const frames = jt808Protocol.createSplitter!().push(bytes);
  if (frames.length !== 1) throw new Error(`${frames.length} frames`);
  return frames[0];
};
const vectorFrame = (line: number): Buffer => frameBytes(loadVectors('jt808').find((v) => v.line === line)!);

runEncoderVectors(jt808Protocol, {
  73: {
    encode: () => encode('7e830000140b3a73ce2ff2000001546573742c20436f6d6d616e642c2031323323a57e', ctx()).bytes,
    differs: {
      reason:
        "Traccar writes a custom command of hex digits as raw bytes; in trackgate raw bytes are the API's Hex format, " +
        'which bypasses encoders, and a Text command is always framed (here as 0x8300)',
      instead(t, bytes) {
        const f = unescaped(bytes());
        t.is(f.readUInt16BE(1), 0x8300, 'a 0x8300 text message');
        t.is(
          f.toString('latin1', 14, f.length - 2),
          '7e830000140b3a73ce2ff2000001546573742c20436f6d6d616e642c2031323323a57e',
          'carrying the digits as text',
        );
      },
    },
  },
  74: { encode: ({ model }) => encode('Test, Command, 123#', ctx({ ...(model && { model }) })).bytes },
  75: { encode: ({ model }) => encode('TEST', ctx({ ...(model && { model }) })).bytes },
});

test('jt808.encoder: a text command is 0x8300 with flag 0x01, the terminal id, the serial and the XOR check', (t) => {
  const { bytes, match } = encodeJt808Command('STATUS#', ctx({ deviceId: '13912345678', serial: 0x1234 }));
  const f = unescaped(bytes);
  t.is(f.readUInt16BE(1), 0x8300);
  t.is(f.readUInt16BE(3), 8, 'body length, no version bit');
  t.is(f.toString('hex', 5, 11), '013912345678', 'terminal id as zero-padded BCD');
  t.is(f.readUInt16BE(11), 0x1234);
  t.is(f[13], 0x01, 'flag');
  t.is(f.toString('latin1', 14, 21), 'STATUS#');
  t.is(f[21], xor8(f, 1, 21));
  t.deepEqual(match, { replySerial: 0x1234, replyMessageId: 0x8300 });
  t.deepEqual(
    jt808Protocol.decode!(f, decodeCtx()).alternativeIdentities,
    ['13912345678'],
    'the decoder reads the device id back (as the second form of the id)',
  );
});

test('jt808.encoder: 0x7e and 0x7d anywhere in the frame are escaped as 7d02 and 7d01', (t) => {
  const { bytes } = encodeJt808Command('a~b}c', ctx({ serial: 0x7e7d }));
  t.false(bytes.subarray(1, -1).includes(0x7e), 'no delimiter inside the frame');
  t.true(bytes.toString('hex').includes('7d027d01'), 'the serial 7e7d escaped');
  const f = unescaped(bytes);
  t.is(f.readUInt16BE(11), 0x7e7d);
  t.is(f.toString('latin1', 14, 19), 'a~b}c');
  t.notThrows(() => jt808Protocol.decode!(f, decodeCtx()), 'the XOR check holds after unescaping');
});

test('jt808.encoder: an IMEI goes as the 6-byte number the decoder reads back, Luhn digit appended', (t) => {
  t.is(terminalIdBytes(IMEI, undefined).toString('hex'), '0b3a73ce2ff2');
  const login = jt808Protocol.decode!(vectorFrame(23), decodeCtx());
  t.is(vectorFrame(23).toString('hex', 5, 11), '4f07788ef676');
  const id = login.identity!;
  t.is(terminalIdBytes(id, undefined).toString('hex'), '4f07788ef676');
  t.is(jt808Protocol.decode!(unescaped(encode('X', ctx({ deviceId: id })).bytes), decodeCtx()).identity, id);
});

test('jt808.encoder: a terminal that spoke 2019 gets the version bit, its version byte, a 20-digit id and a text type', (t) => {
  const session: Record<string, unknown> = {};
  const frame2019 = formatMessage(
    { delimiter: 0x7e, version: 1, id: Buffer.from('00000000013912345678', 'hex') },
    0x0002,
    Buffer.alloc(0),
  );
  const heartbeat = jt808Protocol.decode!(unescaped(frame2019), decodeCtx(session));
  t.is(heartbeat.identity, '00000000013912345678');
  t.deepEqual(heartbeat.alternativeIdentities, ['013912345678', '13912345678']);
  t.is(session['jt808.version'], 1);
  const f = unescaped(encode('STATUS#', ctx({ deviceId: '13912345678', serial: 5, session })).bytes);
  t.is(f.readUInt16BE(3), 0x4000 | 9, 'version bit and body length');
  t.is(f[5], 1, 'version byte');
  t.is(f.toString('hex', 6, 16), '00000000013912345678');
  t.is(f.readUInt16BE(16), 5);
  t.deepEqual([f[18], f[19]], [0x01, 0x01], 'flag, text type 1 (notice)');
  t.is(f.toString('latin1', 20, 27), 'STATUS#');
  t.is(jt808Protocol.decode!(f, decodeCtx()).identity, '00000000013912345678');
  // a later 2013 frame on the connection drops the version again
  jt808Protocol.decode!(
    unescaped(formatMessage({ delimiter: 0x7e, id: Buffer.from('013912345678', 'hex') }, 0x0002, Buffer.alloc(0))),
    decodeCtx(session),
  );
  t.false('jt808.version' in session);
});

test('jt808.encoder: a Jimi JC371 takes the text as 0x8900 pass-through type 0xF0', (t) => {
  const { bytes, match } = encode('STATUS#', ctx({ model: 'JC371', serial: 3 }));
  const f = unescaped(bytes);
  t.is(f.readUInt16BE(1), 0x8900);
  t.is(f[13], 0xf0);
  t.is(f.toString('latin1', 14, 21), 'STATUS#');
  t.deepEqual(match, { replySerial: 3, replyMessageId: 0x8900 });
});

test('jt808.encoder: terminal control 0x8105 carries the command word and its parameters', (t) => {
  const stop = encodeJt808TerminalControl(0xf0, '', ctx({ serial: 7 }));
  // 8105 | body length 1 | id | serial 0007 | word F0 | XOR 23 (worked by hand)
  t.is(stop.bytes.toString('hex'), '7e810500010b3a73ce2ff20007f0237e');
  t.deepEqual(stop.match, { replySerial: 7, replyMessageId: 0x8105 });
  const f = unescaped(encodeJt808TerminalControl(2, '0;apn;;;host.example;7018;0;;0', ctx()).bytes);
  t.is(f[13], 2);
  t.is(f.toString('latin1', 14, f.length - 2), '0;apn;;;host.example;7018;0;;0');
  t.throws(() => encodeJt808TerminalControl(256, '', ctx()), { instanceOf: RangeError });
});

test('jt808.encoder: the body stays within 1,023 bytes: 1,022 characters of text are the most', (t) => {
  t.is(unescaped(encode('x'.repeat(1022), ctx()).bytes).readUInt16BE(3), 1023);
  const e = t.throws(() => encode('x'.repeat(1023), ctx()), { instanceOf: CommandError });
  t.is(e?.reason, 'TOO_LONG');
  t.regex(e?.message ?? '', /at most 1022/);
});

test('jt808.encoder: an empty text, GBK-only text or an id that is no terminal number is refused', (t) => {
  t.is(t.throws(() => encode('', ctx()), { instanceOf: CommandError })?.reason, 'EMPTY');
  t.is(t.throws(() => encode('你好', ctx()), { instanceOf: CommandError })?.reason, 'CHARSET');
  t.is(t.throws(() => encode('X', ctx({ deviceId: 'abc' })), { instanceOf: CommandError })?.reason, 'DEVICE_ID');
  t.is(
    t.throws(() => encode('X', ctx({ deviceId: '12345678901234567' })), { instanceOf: CommandError })?.reason,
    'DEVICE_ID',
  );
  t.is(
    t.throws(() => encode('X', ctx({ deviceId: '1'.repeat(21), session: { 'jt808.version': 1 } })), {
      instanceOf: CommandError,
    })?.reason,
    'DEVICE_ID',
  );
});

/** the terminal's 0x0001 general response: answered serial, answered id, result */
function terminalResponse(id: string, serial: number, messageId: number, result: number): Buffer {
  const body = Buffer.from([serial >> 8, serial & 0xff, messageId >> 8, messageId & 0xff, result]);
  return unescaped(formatMessage({ delimiter: 0x7e, id: Buffer.from(id, 'hex') }, 0x0001, body, false, 0x0042));
}

test('jt808.decoder: the 0x0001 general response answers the command whose serial and id it names', (t) => {
  const sent = encode('STATUS#', ctx({ deviceId: '13912345678', serial: 0x0102 }));
  const r = jt808Protocol.decode!(terminalResponse('013912345678', 0x0102, 0x8300, 0), decodeCtx());
  t.is(r.identity, '013912345678');
  t.deepEqual(r.commandResults, [{ text: '', replySerial: 0x0102, replyMessageId: 0x8300, status: 'ok' }]);
  t.like(r.commandResults?.[0], sent.match);
  t.deepEqual(r.messages, []);
  t.deepEqual(r.replies, [], 'a general response is not answered');
});

test('jt808.decoder: 0x0001 results 1-3 read failed, badMessage, unsupported', (t) => {
  const status = (result: number) =>
    jt808Protocol.decode!(terminalResponse('013912345678', 1, 0x8105, result), decodeCtx()).commandResults?.[0].status;
  t.deepEqual([status(1), status(2), status(3), status(9)], ['failed', 'badMessage', 'unsupported', undefined]);
});

test('jt808.decoder: text replies (0x6006, 0x1300, Jimi text) are command results; a location is not', (t) => {
  const id = Buffer.from('013912345678', 'hex');
  const gbk = jt808Protocol.decode!(
    unescaped(formatMessage({ delimiter: 0x7e, id }, 0x6006, Buffer.from('\x01Relay OK', 'latin1'))),
    decodeCtx(),
  );
  t.deepEqual(gbk.commandResults, [{ text: 'Relay OK' }]);
  const utf16 = Buffer.concat([Buffer.from([0x00, 0x09]), Buffer.from('OK', 'utf16le').swap16()]);
  const reply = jt808Protocol.decode!(unescaped(formatMessage({ delimiter: 0x7e, id }, 0x1300, utf16)), decodeCtx());
  t.deepEqual(reply.commandResults, [{ text: 'OK', replySerial: 9 }]);
  t.deepEqual(
    jt808Protocol.decode!(Buffer.from('(794104004140,1,001,STATUS,OK)', 'latin1'), decodeCtx()).commandResults,
    [{ text: '(794104004140,1,001,STATUS,OK)' }],
  );
  const location = loadVectors('jt808').find(
    (v) => typeof v.frame === 'string' && v.frame.toLowerCase().startsWith('7e0200') && v.expect.assert === 'position',
  )!;
  t.is(jt808Protocol.decode!(frameBytes(location), { ...decodeCtx(), checksum: 'accept' }).commandResults, undefined);
});
