import { crc16X25 } from '../shared/crc.js';
import type { DecodedMessage } from '../types.js';
import { ID_BYTES, MPIP_REPLY_VERSION } from './castel.constants.js';
import type { ByteReader } from '../shared/byte-reader.js';

/** What the frame's header says: its version (undefined for a `$$` MPIP frame), raw device id and type. */
export interface Envelope {
  version: number | undefined;
  /** the 20 id bytes as the frame holds them (NUL-padded), which replies repeat */
  id: Buffer;
  type: number;
}

/** what one message handler decoded and what the server answers */
export interface Outcome {
  messages: DecodedMessage[];
  replies: Buffer[];
}

/** decodes one message type's body (the reader ends before the CRC); `now` dates the login answer */
export type MessageHandler = (r: ByteReader, env: Envelope, now: Date) => Outcome;

/** closes a frame: CRC-16/X-25 (LE) over everything before it, then CR LF */
function seal(frame: Buffer, crcAt: number): Buffer {
  frame.writeUInt16LE(crc16X25(frame, 0, crcAt), crcAt);
  frame[crcAt + 2] = 0x0d;
  frame[crcAt + 3] = 0x0a;
  return frame;
}

/**
 * A server frame as Traccar writes its replies and commands: `@@ | length u16 LE | version | id (20)
 * | type u16 BE | content | CRC | CR LF`. An MPIP frame has no version; its replies carry 0xFF there.
 */
export function frameOf(version: number, id: Buffer, type: number, content: Buffer = Buffer.alloc(0)): Buffer {
  const length = 2 + 2 + 1 + ID_BYTES + 2 + content.length + 4;
  const frame = Buffer.alloc(length);
  frame.write('@@', 0, 'latin1');
  frame.writeUInt16LE(length, 2);
  frame[4] = version;
  id.copy(frame, 5, 0, ID_BYTES);
  frame.writeUInt16BE(type, 5 + ID_BYTES);
  content.copy(frame, 7 + ID_BYTES);
  return seal(frame, length - 4);
}

/**
 * The answer to an MPIP 0x2001 registration: an `@@` frame without a version byte, type 0x1001,
 * then a u32 0 and eight 0xFF bytes.
 */
export function mpipRegisterReply(id: Buffer, type: number): Buffer {
  const length = 2 + 2 + ID_BYTES + 2 + 4 + 8 + 4;
  const frame = Buffer.alloc(length);
  frame.write('@@', 0, 'latin1');
  frame.writeUInt16LE(length, 2);
  id.copy(frame, 4, 0, ID_BYTES);
  frame.writeUInt16BE(type, 4 + ID_BYTES);
  frame.fill(0xff, 10 + ID_BYTES, 18 + ID_BYTES);
  return seal(frame, length - 4);
}

/** The answer to a frame, in its envelope: its version (0xFF for an MPIP frame, as Traccar writes it) and id. */
export function replyTo(env: Envelope, type: number, content?: Buffer): Buffer {
  return frameOf(env.version ?? MPIP_REPLY_VERSION, env.id, type, content);
}
