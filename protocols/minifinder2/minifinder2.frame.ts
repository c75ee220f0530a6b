import type { FrameSplitter } from '../types.js';
import { EMPTY, restOf } from '../shared/empty.js';
import { HEAD_BYTES, HEADER, MAX_FRAME_BYTES } from './minifinder2.constants.js';

/**
 * Cuts a MiniFinder2 stream by its length field: a frame is the 8-byte header and `length` content
 * bytes. A byte that is no 0xAB header, or a frame beyond the limit, means the stream is not at a
 * frame start: one byte is skipped and the search goes on.
 */
export function createMinifinder2Splitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let buf: Buffer = EMPTY;
  return {
    get buffered() {
      return buf.length;
    },
    push(chunk: Buffer): Buffer[] {
      buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
      const frames: Buffer[] = [];
      let start = 0;
      while (start < buf.length) {
        if (buf[start] !== HEADER) {
          start++;
          continue;
        }
        if (buf.length - start < 4) break;
        const total = HEAD_BYTES + buf.readUInt16LE(start + 2);
        if (total > maxFrameBytes) {
          start++;
          continue;
        }
        if (buf.length - start < total) break;
        frames.push(Buffer.from(buf.subarray(start, start + total)));
        start += total;
      }
      buf = restOf(buf, start);
      return frames;
    },
  };
}
