import type { FrameSplitter } from '../types.js';
import { EMPTY, restOf } from './empty.js';

/** Bytes that cannot begin a text frame (controls, spaces, non-ASCII) are dropped from its front. */
const isTextStart = (c: number): boolean => c > 0x20 && c < 0x7f;

/**
 * Cuts a text stream at every occurrence of `delimiter`, dropping the delimiter, as Netty's
 * DelimiterBasedFrameDecoder does for the text protocols built on it (TRV `#`, TLT-2H `##\r\n`).
 * Blank or binary bytes in front of a frame are dropped, and so are frames left empty. A frame
 * longer than `maxFrameBytes` is discarded up to its delimiter: the next frame is read normally.
 */
export function createDelimitedSplitter(delimiter: Buffer, maxFrameBytes: number): FrameSplitter {
  let pending: Buffer = EMPTY;
  let discarding = false;
  const tail = delimiter.length - 1;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk: Buffer): Buffer[] {
      const buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const frames: Buffer[] = [];
      let start = 0;
      for (let i = buf.indexOf(delimiter); i >= 0; i = buf.indexOf(delimiter, start)) {
        if (!discarding && i - start <= maxFrameBytes) {
          let from = start;
          while (from < i && !isTextStart(buf[from])) from++;
          if (from < i) frames.push(Buffer.from(buf.subarray(from, i)));
        }
        discarding = false;
        start = i + delimiter.length;
      }
      pending = restOf(buf, discarding ? Math.max(start, buf.length - tail) : start);
      if (!discarding && pending.length > maxFrameBytes) {
        // as Netty: too long without a delimiter; keep what may be the start of the delimiter
        pending = restOf(pending, pending.length - tail);
        discarding = true;
      }
      return frames;
    },
  };
}
