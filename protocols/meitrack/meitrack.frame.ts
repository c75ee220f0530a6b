import type { FrameSplitter } from '../types.js';
import { MEITRACK_MAX_FRAME_BYTES } from './meitrack.constants.js';
import { EMPTY, restOf } from '../shared/empty.js';

const DOLLAR = 0x24;
const AT = 0x40;
const COMMA = 0x2c;
/** the decimal length has at most this many digits (8 KiB frames) */
const MAX_LENGTH_DIGITS = 5;

const isMarker = (buf: Buffer, i: number): boolean =>
  i + 1 < buf.length && (buf[i] === DOLLAR || buf[i] === AT) && buf[i + 1] === buf[i];

/**
 * The 8-bit sum of every byte from `$$` (or `@@`) through `*`, as two uppercase hex digits
 * (Meitrack GPRS protocol 1.1; Traccar Checksum.sum).
 */
export function meitrackChecksum(bytes: Buffer | string): string {
  const b = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
  let sum = 0;
  for (const x of b) sum = (sum + x) & 0xff;
  return sum.toString(16).toUpperCase().padStart(2, '0');
}

/**
 * Cuts `$$<flag><L>,...` frames (and the server's `@@` ones) by their length: L, decimal, counts
 * the bytes from the first `,` through the final `\r\n` (MeitrackFrameDecoder). Bytes before a
 * frame start, and a header whose length is not decimal or exceeds maxFrameBytes, are skipped up
 * to the next `$$`.
 */
export function createMeitrackSplitter(maxFrameBytes = MEITRACK_MAX_FRAME_BYTES): FrameSplitter {
  let pending: Buffer = EMPTY;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk: Buffer): Buffer[] {
      const buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const frames: Buffer[] = [];
      let pos = 0;
      for (;;) {
        // a lone `$` or `@` at the end is kept: it may start the next frame
        while (
          pos < buf.length &&
          !isMarker(buf, pos) &&
          !(pos === buf.length - 1 && (buf[pos] === DOLLAR || buf[pos] === AT))
        )
          pos++;
        if (pos >= buf.length - 1) break;
        const digitsFrom = pos + 3;
        let comma = digitsFrom;
        while (
          comma < buf.length &&
          comma - digitsFrom <= MAX_LENGTH_DIGITS &&
          buf[comma] >= 0x30 &&
          buf[comma] <= 0x39
        )
          comma++;
        if (comma >= buf.length) {
          if (comma - digitsFrom <= MAX_LENGTH_DIGITS) break; // the header is not complete yet
          pos++;
          continue;
        }
        if (buf[comma] !== COMMA || comma === digitsFrom || comma - digitsFrom > MAX_LENGTH_DIGITS) {
          pos++;
          continue;
        }
        const total = comma - pos + Number(buf.toString('latin1', digitsFrom, comma));
        if (total > maxFrameBytes || total <= comma - pos) {
          pos++;
          continue;
        }
        if (buf.length - pos < total) break;
        frames.push(Buffer.from(buf.subarray(pos, pos + total)));
        pos += total;
      }
      pending = restOf(buf, pos);
      return frames;
    },
  };
}
