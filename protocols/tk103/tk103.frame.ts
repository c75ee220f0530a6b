import type { FrameSplitter } from '../types.js';
import { TK103_MAX_FRAME_BYTES } from './tk103.constants.js';
import { EMPTY, restOf } from '../shared/empty.js';

const OPEN = 0x28; // (
const CLOSE = 0x29; // )
const DOLLAR = 0x24; // $ opens and closes free text, where ( and ) are plain characters

/** index of the `)` ending the frame that starts at `start`, or -1 while it is incomplete */
function frameEnd(buf: Buffer, start: number): number {
  let freeText = false;
  for (let i = start + 1; i < buf.length; i++) {
    if (buf[i] === DOLLAR) freeText = !freeText;
    else if (buf[i] === CLOSE && !freeText) return i;
  }
  return -1;
}

/**
 * Cuts `(` ... `)` frames, a `)` inside `$`...`$` free text not ending one (Tk103FrameDecoder).
 * Bytes before a `(` are skipped; an unfinished frame past maxFrameBytes is given up from the next
 * `(` on, as Traccar does past 1,024 bytes.
 */
export function createTk103Splitter(maxFrameBytes = TK103_MAX_FRAME_BYTES): FrameSplitter {
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
        const start = buf.indexOf(OPEN, pos);
        if (start < 0) {
          pos = buf.length;
          break;
        }
        const end = frameEnd(buf, start);
        if (end >= 0 && end + 1 - start <= maxFrameBytes) {
          frames.push(Buffer.from(buf.subarray(start, end + 1)));
          pos = end + 1;
          continue;
        }
        if (end < 0 && buf.length - start <= maxFrameBytes) {
          pos = start;
          break;
        }
        pos = start + 1; // too long: look for the next frame start
      }
      pending = restOf(buf, pos);
      return frames;
    },
  };
}
