import type { FrameSplitter } from '../types.js';
import { EMPTY, restOf } from '../shared/empty.js';
import {
  LENGTH_OFFSET,
  MAX_FRAME_BYTES,
  MAX_LENGTH_DIGITS,
  MIN_HEADER_BYTES,
  TRAILER_BYTES,
} from './startek.constants.js';

const AMP = 0x26;
const DOLLAR = 0x24;
/** `&&` starts a device frame, `$$` a server command: both are cut alike (StartekFrameDecoder reads only the length) */
const isMark = (b: number): boolean => b === AMP || b === DOLLAR;
const COMMA = 0x2c;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;

/** What the header at `start` says: the frame's size, `undefined` while it is incomplete, -1 when it is no header. */
function frameSize(buf: Buffer, start: number): number | undefined {
  if (buf.length - start < MIN_HEADER_BYTES) return undefined;
  if (!isMark(buf[start]) || buf[start + 1] !== buf[start]) return -1;
  let i = start + LENGTH_OFFSET;
  let length = 0;
  for (; i < buf.length && isDigit(buf[i]); i++) {
    if (i - start - LENGTH_OFFSET >= MAX_LENGTH_DIGITS) return -1;
    length = length * 10 + (buf[i] - 0x30);
  }
  if (i === buf.length) return undefined;
  if (buf[i] !== COMMA || i === start + LENGTH_OFFSET) return -1;
  return i - start + TRAILER_BYTES + length;
}

/**
 * Cuts an iStartek stream (StartekFrameDecoder): `&&`, an index character, a decimal length and a
 * comma; the frame is the comma's offset + 4 + that length (the checksum and CR LF follow what the
 * length counts). The server's `$$` commands have the same header and are cut alike. Bytes before
 * `&&`, and a `&&` whose length cannot be read or is over the limit, are skipped.
 */
export function createStartekSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let pending: Buffer = EMPTY;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk: Buffer): Buffer[] {
      const buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const frames: Buffer[] = [];
      let start = 0;
      for (;;) {
        while (start < buf.length - 1 && !(isMark(buf[start]) && buf[start + 1] === buf[start])) start++;
        if (start >= buf.length - 1) {
          // keep a trailing `&` or `$` that may begin the next header
          start = buf.length > 0 && isMark(buf[buf.length - 1]) ? buf.length - 1 : buf.length;
          break;
        }
        const size = frameSize(buf, start);
        if (size === undefined) break;
        if (size < 0 || size > maxFrameBytes) {
          start++;
          continue;
        }
        if (buf.length - start < size) break;
        frames.push(Buffer.from(buf.subarray(start, start + size)));
        start += size;
      }
      pending = restOf(buf, start);
      return frames;
    },
  };
}
