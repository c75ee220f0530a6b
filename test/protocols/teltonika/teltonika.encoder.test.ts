import test from 'ava';
import { encodeCodec12 } from '../../../protocols/teltonika/teltonika.encoder.js';
import { teltonikaProtocol } from '../../../protocols/teltonika/teltonika.protocol.js';
import { crc16Arc } from '../../../protocols/shared/crc.js';
import { CommandError, type CommandContext, type DecodeContext } from '../../../protocols/types.js';
import { runEncoderVectors } from '../../helpers/vector-runner.js';

const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
const CTX: CommandContext = { deviceId: '123456789012345', now: NOW, serial: 0 };
const encode = teltonikaProtocol.encodeCommand!;
const decodeCtx = (): DecodeContext => ({ now: NOW, transport: 'tcp', checksum: 'strict', session: {} });

runEncoderVectors(teltonikaProtocol, {
  40: { encode: () => encode('setdigout 11', CTX).bytes },
  // Traccar sends a custom command of hex digits as binary content; trackgate's Text stays text
  // (teltonika.encoder.ts), so this vector checks the Codec 12 framing of the same binary content
  41: { encode: () => encodeCodec12(Buffer.from('03030000000185E8', 'hex')) },
});

/** the device's answer: the command's layout with type 0x06 and a fresh CRC (Teltonika wiki, Codec 12) */
function response(text: string): Buffer {
  const frame = encodeCodec12(Buffer.from(text, 'latin1'));
  frame[10] = 0x06;
  frame.writeUInt32BE(crc16Arc(frame, 8, frame.length - 4), frame.length - 4);
  return frame;
}

test('teltonika.encoder: a text command is Codec 12 type 0x05 with its ASCII, lengths and CRC-16/IBM', (t) => {
  const { bytes, match } = encode('getinfo', CTX);
  t.is(bytes.readUInt32BE(0), 0, 'preamble');
  t.is(bytes.readUInt32BE(4), bytes.length - 12, 'data length from codec id to quantity 2');
  t.deepEqual([...bytes.subarray(8, 11)], [0x0c, 0x01, 0x05]);
  t.is(bytes.readUInt32BE(11), 7);
  t.is(bytes.toString('latin1', 15, 22), 'getinfo');
  t.is(bytes[22], 0x01, 'quantity 2');
  t.is(bytes.readUInt32BE(23), crc16Arc(bytes, 8, 23));
  t.deepEqual(match, {}, 'a Codec 12 answer echoes nothing of its command');
});

test('teltonika.encoder: the device answer to a command comes back as a command result', (t) => {
  const r = teltonikaProtocol.decode!(response('DOUT1:1 DOUT2:0 Timeout:0 '), decodeCtx());
  t.deepEqual(r.commandResults, [{ text: 'DOUT1:1 DOUT2:0 Timeout:0' }]);
  t.deepEqual(r.replies, [], 'Codec 12 is not acknowledged');
});

test('teltonika.decoder: frames other than a Codec 12 response carry no command result', (t) => {
  const command = teltonikaProtocol.decode!(encode('getver', CTX).bytes, decodeCtx());
  t.is(command.commandResults, undefined, 'a type 0x05 command is no answer');
  const login = teltonikaProtocol.decode!(Buffer.from('000f333536333037303432343431303133', 'hex'), decodeCtx());
  t.is(login.commandResults, undefined);
});

test('teltonika.encoder: 160 characters are taken, 161 are refused as too long', (t) => {
  t.is(encode('x'.repeat(160), CTX).bytes.readUInt32BE(11), 160);
  const e = t.throws(() => encode('x'.repeat(161), CTX), { instanceOf: CommandError });
  t.is(e?.reason, 'TOO_LONG');
  t.regex(e?.message ?? '', /161 bytes.*at most 160/);
});

test('teltonika.encoder: an empty text, a control character or non-ASCII is refused with its reason', (t) => {
  t.is(t.throws(() => encode('', CTX), { instanceOf: CommandError })?.reason, 'EMPTY');
  const newline = t.throws(() => encode('getinfo\r\n', CTX), { instanceOf: CommandError });
  t.is(newline?.reason, 'CHARSET');
  t.regex(newline?.message ?? '', /U\+000D at 7/);
  t.is(t.throws(() => encode('setparam 2001:é', CTX), { instanceOf: CommandError })?.reason, 'CHARSET');
});
