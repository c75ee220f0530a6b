import type { FrameSplitter } from '../types.js';
import { EMPTY, restOf } from '../shared/empty.js';
import { MAX_FRAME_BYTES } from './t55.constants.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * Cuts lines at LF, a CR before it dropped (T55Protocol: Netty's LineBasedFrameDecoder). Blank
 * lines are dropped. A line longer than `maxFrameBytes` is discarded up to its LF.
 */
export function createT55Splitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let pending: Buffer = EMPTY;
  let discarding = false;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk: Buffer): Buffer[] {
      const buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const frames: Buffer[] = [];
      let start = 0;
      for (let i = buf.indexOf(LF); i >= 0; i = buf.indexOf(LF, start)) {
        const end = i > start && buf[i - 1] === CR ? i - 1 : i;
        if (!discarding && end - start <= maxFrameBytes && buf.subarray(start, end).toString('latin1').trim())
          frames.push(Buffer.from(buf.subarray(start, end)));
        discarding = false;
        start = i + 1;
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
