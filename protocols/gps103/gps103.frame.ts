import type { FrameSplitter } from '../types.js';
import { GPS103_MAX_FRAME_BYTES } from './gps103.constants.js';
import { EMPTY, restOf } from '../shared/empty.js';

// Delimiters "\r\n", "\n", ";", "*" (Gps103Protocol); "\r\n" ends at its "\n", so three bytes suffice.
const LF = 0x0a;
const SEMICOLON = 0x3b;
const STAR = 0x2a;
const isDelimiter = (c: number): boolean => c === LF || c === SEMICOLON || c === STAR;

/** Bytes that cannot begin a sentence (controls, spaces, non-ASCII) are dropped from its front. */
const isSentenceStart = (c: number): boolean => c > 0x20 && c < 0x7f;

/**
 * Cuts at the first `\n`, `;` or `*`, keeping the delimiter (Traccar builds the decoder with
 * stripDelimiter=false; the `*` tells the alternative report apart). Sentences that are only
 * delimiters or whitespace are dropped. A sentence longer than maxFrameBytes is discarded up to
 * its delimiter, as Netty's DelimiterBasedFrameDecoder does.
 */
export function createGps103Splitter(maxFrameBytes = GPS103_MAX_FRAME_BYTES): FrameSplitter {
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
      for (let i = 0; i < buf.length; i++) {
        if (!isDelimiter(buf[i])) continue;
        const end = i + 1;
        if (!discarding && end - start <= maxFrameBytes) {
          let from = start;
          while (from < i && !isSentenceStart(buf[from])) from++;
          if (from < i) frames.push(Buffer.from(buf.subarray(from, end)));
        }
        discarding = false;
        start = end;
      }
      pending = discarding ? EMPTY : restOf(buf, start);
      if (pending.length > maxFrameBytes) {
        pending = EMPTY;
        discarding = true;
      }
      return frames;
    },
  };
}
