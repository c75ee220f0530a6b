import { checkUint, commandBytes } from '../shared/command-text.js';
import { crc16X25 } from '../shared/crc.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { MSG_COMMAND_0, PROTOCOL } from './gt06.constants.js';

/** 2-byte language after the text, GT06 protocol manual 0x80: 0x0001 Chinese, 0x0002 English */
export const LANGUAGE_ENGLISH = 0x0002;

/** the command length byte counts the 4-byte server flag and the text */
const MAX_TEXT_BYTES = 0xff - 4;

export interface Gt06CommandOptions {
  /**
   * Writes the optional language word after the text (`LANGUAGE_ENGLISH`). Off by default, as in
   * Traccar (`gt06.language`) and its captured engine-stop frame: devices take the frame without it.
   */
  language?: number;
}

/**
 * A Text command (`Relay,1#`, `WHERE#`) as GT06 protocol 0x80 (docs/protocols.md §5): `78 78 | len |
 * 80 | 4 + text length | server flag u32 | ASCII | [language u16] | serial u16 | CRC-ITU | 0D 0A`,
 * the CRC (X.25) over the length through the serial. A frame whose length no longer fits one byte
 * goes as `79 79` with a u16 length. The device answers 0x15 (or 0x21 in a 0x7979 frame) with the
 * server flag echoed: the server flag is the match, `ctx.serverFlag`, else the serial.
 */
export function encodeGt06Command(text: string, ctx: CommandContext, o: Gt06CommandOptions = {}): EncodedCommand {
  const content = commandBytes(PROTOCOL, text, { delimiters: [], maxBytes: MAX_TEXT_BYTES });
  const serial = checkUint('gt06 serial', ctx.serial, 0xffff);
  const serverFlag = checkUint('gt06 server flag', ctx.serverFlag ?? serial, 0xffffffff);
  const language = o.language === undefined ? undefined : checkUint('gt06 language', o.language, 0xffff);
  // protocol number, command length, server flag, text, [language], serial, CRC
  const length = 1 + 1 + 4 + content.length + (language === undefined ? 0 : 2) + 2 + 2;
  const extended = length > 0xff;
  const head = extended ? 4 : 3;
  const frame = Buffer.alloc(head + length + 2);
  frame.writeUInt16BE(extended ? 0x7979 : 0x7878, 0);
  if (extended) frame.writeUInt16BE(length, 2);
  else frame[2] = length;
  let at = head;
  frame[at++] = MSG_COMMAND_0;
  frame[at++] = 4 + content.length;
  frame.writeUInt32BE(serverFlag, at);
  at += 4;
  content.copy(frame, at);
  at += content.length;
  if (language !== undefined) {
    frame.writeUInt16BE(language, at);
    at += 2;
  }
  frame.writeUInt16BE(serial, at);
  at += 2;
  frame.writeUInt16BE(crc16X25(frame, 2, at), at);
  at += 2;
  frame[at++] = 0x0d;
  frame[at] = 0x0a;
  return { bytes: frame, match: { serverFlag } };
}
