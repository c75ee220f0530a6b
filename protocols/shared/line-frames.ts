import type { FrameSplitter } from '../types.js';
import { EMPTY, restOf } from './empty.js';

const LF = 0x0a;
const CR = 0x0d;

/** Bytes that cannot begin a text line (controls, spaces, non-ASCII) are dropped from its front. */
const isLineStart = (c: number): boolean => c > 0x20 && c < 0x7f;

/**
 * Cuts a text stream at LF, dropping the LF and a CR before it, as Netty's LineBasedFrameDecoder
 * does for the text protocols that use it (Wialon IPS, Laipac). Blank lines are dropped, and so
 * are blank or binary bytes in front of a line. A line longer than `maxFrameBytes` is discarded up
 * to its LF: the next line is read normally.
 */
export function createLineSplitter(maxFrameBytes: number): FrameSplitter {
  let pending: Buffer = EMPTY;
  let discarding = false;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk: Buffer): Buffer[] {
      const buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const frames: Buffer[] = [];
      let start = 0;
      for (let i = buf.indexOf(LF); i >= 0; i = buf.indexOf(LF, start)) {
        const end = i > start && buf[i - 1] === CR ? i - 1 : i;
        if (!discarding && end - start <= maxFrameBytes) {
          let from = start;
          while (from < end && !isLineStart(buf[from])) from++;
          if (from < end) frames.push(Buffer.from(buf.subarray(from, end)));
        }
        discarding = false;
        start = i + 1;
      }
      pending = discarding ? EMPTY : restOf(buf, start);
      if (pending.length > maxFrameBytes + 1) {
        pending = EMPTY;
        discarding = true;
      }
      return frames;
    },
  };
}
