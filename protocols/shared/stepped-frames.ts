import type { FrameSplitter } from '../types.js';
import { EMPTY, restOf } from './empty.js';

/** What a length-prefixed protocol's reader says of the bytes at `pos`: a frame of n bytes, n bytes to drop, or wait for more. */
export type Step = { frame: number } | { skip: number } | { wait: true };

/**
 * A splitter for binary protocols whose frames say their own length: `nextStep` looks at the
 * bytes from `pos` and says what they are. Frames are copied out of the read buffer (a chunk is
 * not kept alive by one frame of it); what is left waits for the next chunk, and a remainder
 * longer than `maxFrameBytes` (which `nextStep` should never wait for) is dropped.
 */
export function steppedSplitter(
  nextStep: (buf: Buffer, pos: number, maxFrameBytes: number) => Step,
  maxFrameBytes: number,
): FrameSplitter {
  let pending: Buffer = EMPTY;
  return {
    get buffered() {
      return pending.length;
    },
    push(chunk: Buffer): Buffer[] {
      const buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      const frames: Buffer[] = [];
      let pos = 0;
      while (pos < buf.length) {
        const step = nextStep(buf, pos, maxFrameBytes);
        if ('wait' in step) break;
        if ('frame' in step) frames.push(Buffer.from(buf.subarray(pos, pos + step.frame)));
        pos += 'frame' in step ? step.frame : step.skip;
      }
      pending = restOf(buf, pos);
      if (pending.length > maxFrameBytes) pending = EMPTY;
      return frames;
    },
  };
}
