import { EMPTY } from '../shared/empty.js';
import type { FrameSplitter } from '../types.js';
import { DEVICE_MARK, MAX_FRAME_BYTES, MIN_FRAME_BYTES } from './meiligao.constants.js';

/**
 * Cuts a Meiligao stream as Traccar's MeiligaoFrameDecoder does: bytes before a `$` are dropped,
 * then the frame is as long as its u16 length field (offset 2). A `$` not followed by another, or
 * with a length shorter than the smallest frame or over the limit, cannot be a frame start: that
 * `$` is dropped and the search goes on (Traccar takes any `$`, and stalls on a length of 0).
 */
export function createMeiligaoSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let buf: Buffer = EMPTY;
  return {
    get buffered() {
      return buf.length;
    },
    push(chunk: Buffer): Buffer[] {
      buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
      const frames: Buffer[] = [];
      let start = 0;
      for (;;) {
        while (start < buf.length && buf[start] !== DEVICE_MARK) start++;
        if (buf.length - start < 4) break;
        const length = buf.readUInt16BE(start + 2);
        if (buf[start + 1] !== DEVICE_MARK || length < MIN_FRAME_BYTES || length > maxFrameBytes) {
          start++;
          continue;
        }
        if (buf.length - start < length) break;
        frames.push(Buffer.from(buf.subarray(start, start + length)));
        start += length;
      }
      buf = start >= buf.length ? EMPTY : buf.subarray(start);
      return frames;
    },
  };
}
