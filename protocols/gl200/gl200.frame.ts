import type { FrameSplitter } from '../types.js';
import { EMPTY } from '../shared/empty.js';
import {
  BINARY_LENGTH_AT,
  GL200_MAX_FRAME_BYTES,
  MIN_BINARY_BYTES,
  PREFIXED_LENGTH_OFFSET,
  TEXT_END,
  TEXT_END_ALT,
} from './gl200.constants.js';

const PLUS = 0x2b;
const COLON = 0x3a;
const SPACE = 0x20;

/**
 * Where a binary frame at `at` keeps its length: a frame whose second byte is 0 has a u16 at
 * offset 2; a known binary header (`+RSP`, `+EVT`, ..., or `+ACK` not followed by `:`) has it at
 * its own offset (Gl200FrameDecoder.isBinary). Undefined: not binary. Null: not enough bytes yet
 * to tell.
 */
export function binaryLengthField(buf: Buffer, at = 0): { offset: number; size: 1 | 2 } | undefined | null {
  if (buf.length - at < 2) return null;
  if (buf[at + 1] === 0x00) return { offset: PREFIXED_LENGTH_OFFSET, size: 2 };
  if (buf[at] !== PLUS) return undefined;
  if (buf.length - at < 4) return null;
  const header = buf.toString('latin1', at, at + 4);
  const field = BINARY_LENGTH_AT[header];
  if (!field) return undefined;
  if (header !== '+ACK') return field;
  if (buf.length - at < 5) return null;
  return buf[at + 4] === COLON ? undefined : field;
}

/** true when the whole frame is a binary one */
export function isBinaryFrame(frame: Buffer): boolean {
  return frame.length >= MIN_BINARY_BYTES && !!binaryLengthField(frame);
}

/**
 * Cuts a Queclink byte stream (Gl200FrameDecoder): a text frame runs up to its `$` (or, where a
 * device uses it, NUL), which is dropped; a binary frame is as long as its length field says.
 * Control bytes and spaces between frames (line endings) are skipped; other bytes before a text
 * frame's `+` stay in the frame, and the decoder skips them. A text frame without its `$`
 * within maxFrameBytes is discarded up to its `$`; a binary length under 11 bytes or above
 * maxFrameBytes is not a frame, and the search for one moves on to the next `+`.
 */
export function createGl200Splitter(maxFrameBytes = GL200_MAX_FRAME_BYTES): FrameSplitter {
  let pending: Buffer = EMPTY;
  let discarding = false;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk: Buffer): Buffer[] {
      let buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const frames: Buffer[] = [];
      let pos = 0;
      for (;;) {
        if (discarding) {
          const end = textEnd(buf, pos);
          if (end < 0) {
            pos = buf.length;
            break;
          }
          discarding = false;
          pos = end + 1;
          continue;
        }
        if (pos >= buf.length) break;
        const field = binaryLengthField(buf, pos);
        if (field === null) break;
        if (field) {
          if (buf.length - pos < Math.max(field.offset + field.size, MIN_BINARY_BYTES)) break;
          const length = field.size === 1 ? buf[pos + field.offset] : buf.readUInt16BE(pos + field.offset);
          if (length < MIN_BINARY_BYTES || length > maxFrameBytes) {
            const next = buf.indexOf(PLUS, pos + 1); // not a frame: look for the next one
            pos = next < 0 ? buf.length : next;
            continue;
          }
          if (buf.length - pos < length) break;
          frames.push(Buffer.from(buf.subarray(pos, pos + length)));
          pos += length;
          continue;
        }
        if (buf[pos] <= SPACE) {
          pos++; // line endings and control bytes between frames
          continue;
        }
        const end = textEnd(buf, pos);
        if (end < 0) {
          if (buf.length - pos > maxFrameBytes) {
            discarding = true;
            pos = buf.length;
          }
          break;
        }
        if (end - pos <= maxFrameBytes) frames.push(Buffer.from(buf.subarray(pos, end)));
        pos = end + 1;
      }
      buf = buf.subarray(pos);
      pending = Buffer.from(buf);
      return frames;
    },
  };
}

/** index of the `$` (else the NUL) ending the text frame that starts at `from`, or -1 */
function textEnd(buf: Buffer, from: number): number {
  const dollar = buf.indexOf(TEXT_END, from);
  const nul = buf.indexOf(TEXT_END_ALT, from);
  if (dollar < 0) return nul;
  if (nul < 0) return dollar;
  return Math.min(dollar, nul);
}
