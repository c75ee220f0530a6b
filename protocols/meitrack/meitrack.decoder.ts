import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL } from './meitrack.constants.js';
import { meitrackChecksum } from './meitrack.frame.js';
import {
  decodeAac,
  decodeAnswer,
  decodeCccBatch,
  decodeCceBatch,
  decodePicture,
  decodeReport,
  type MeitrackFrame,
  type MessageHandler,
} from './meitrack.messages.js';

/** Handlers by command word (MeitrackProtocolDecoder.decode); any other word is a report or an answer. */
const HANDLERS: Readonly<Record<string, MessageHandler>> = {
  AAC: decodeAac,
  CCC: decodeCccBatch,
  CCE: decodeCceBatch,
  D00: decodePicture,
  D82: decodeAnswer,
};

/** `$$<flag><len>,<imei>,<type>` then `,` or `*` */
const HEADER = /^\$\$[\x21-\x7e]\d+,(\d{1,20}),([0-9A-Za-z]{3})(?=[,*])/;

/** The `*XX` at the end (before an optional `\r\n`): index of `*` and whether the sum matches. */
function checksumOf(frame: Buffer): { star: number; error?: string } {
  const end =
    frame.length >= 2 && frame[frame.length - 2] === 0x0d && frame[frame.length - 1] === 0x0a
      ? frame.length - 2
      : frame.length;
  const star = end - 3;
  if (star < 0 || frame[star] !== 0x2a) return { star: end, error: 'no *XX checksum at the end' };
  const given = frame.toString('latin1', star + 1, end).toUpperCase();
  const computed = meitrackChecksum(frame.subarray(0, star + 1));
  return given === computed ? { star } : { star, error: `checksum ${given} != computed ${computed}` };
}

/**
 * One frame as cut by the splitter (`$$...*XX\r\n`), or one UDP datagram. The checksum is the
 * byte sum (checked; a mismatch is accepted with a warning unless `checksum: 'strict'`).
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const head = HEADER.exec(frame.toString('latin1', 0, Math.min(frame.length, 64)));
  if (!head) throw new ProtocolError(PROTOCOL, 'not a $$<flag><length>,<imei>,<command> frame', frame);
  const { star, error } = checksumOf(frame);
  if (error && ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, error, frame);
  const f: MeitrackFrame = {
    frame,
    text: frame.toString('latin1'),
    flag: String.fromCharCode(frame[2]),
    imei: head[1],
    type: head[2],
    bodyStart: Math.min(head[0].length + 1, star),
    star,
  };
  const result = (HANDLERS[f.type] ?? decodeReport)(f, ctx);
  if (!error) return result;
  return { ...result, checksumError: error, warnings: [...(result.warnings ?? []), error] };
}
