import { commandBytes } from '../shared/command-text.js';
import { crc16Arc } from '../shared/crc.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { CODEC_12, MAX_COMMAND_BYTES, PROTOCOL, SERIAL_TYPE_COMMAND } from './teltonika.constants.js';

/**
 * A Codec 12 command frame around `content` (Teltonika "Codec" wiki, Codec 12; docs/protocols.md §5):
 * `00000000 | u32 data length | 0C | 01 | 05 | u32 content length | content | 01 | u32 CRC-16/IBM`,
 * the length and the CRC both over codec id .. second quantity. TCP framing.
 */
export function encodeCodec12(content: Buffer): Buffer {
  const dataLength = 1 + 1 + 1 + 4 + content.length + 1;
  const frame = Buffer.alloc(8 + dataLength + 4);
  frame.writeUInt32BE(0, 0); // preamble
  frame.writeUInt32BE(dataLength, 4);
  let at = 8;
  frame[at++] = CODEC_12;
  frame[at++] = 1; // command quantity 1
  frame[at++] = SERIAL_TYPE_COMMAND;
  frame.writeUInt32BE(content.length, at);
  at += 4;
  content.copy(frame, at);
  at += content.length;
  frame[at++] = 1; // command quantity 2
  frame.writeUInt32BE(crc16Arc(frame, 8, at), at);
  return frame;
}

/**
 * A Text command (an SMS/GPRS command such as `getinfo` or `setdigout 1`) as Codec 12. The text is
 * sent as ASCII, never read as hex: Traccar sends an all-hex-digit text as binary, but `00` or
 * `1234` may as well be text; binary content goes as the API's `Hex` format. The answer (Codec 12
 * type 0x06) echoes nothing of the command: the next answer on the connection is its answer.
 */
export function encodeTeltonikaCommand(text: string, _ctx: CommandContext): EncodedCommand {
  const content = commandBytes(PROTOCOL, text, { delimiters: [], maxBytes: MAX_COMMAND_BYTES });
  return { bytes: encodeCodec12(content), match: {} };
}
