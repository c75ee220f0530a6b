import type { FrameSplitter } from '../types.js';
import { CRC_BYTES, LENGTH_BYTES, MAX_FRAME_BYTES } from './ruptela.constants.js';
import { EMPTY } from '../shared/empty.js';

/**
 * Cuts a Ruptela stream (Traccar: LengthFieldBasedFrameDecoder(1024, 0, 2, 2, 0)): `u16 length`,
 * that many bytes, then the 2-byte CRC. A length that cannot be a packet (under 9 bytes of IMEI
 * and command, or over the limit) means the stream is not at a packet start: one byte is skipped
 * and the search goes on.
 */
export function createRuptelaSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let buf: Buffer = EMPTY;
  return {
    get buffered() {
      return buf.length;
    },
    push(chunk: Buffer): Buffer[] {
      buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
      const frames: Buffer[] = [];
      let start = 0;
      while (buf.length - start >= LENGTH_BYTES) {
        const total = LENGTH_BYTES + buf.readUInt16BE(start) + CRC_BYTES;
        if (total < LENGTH_BYTES + 9 + CRC_BYTES || total > maxFrameBytes) {
          start++;
          continue;
        }
        if (buf.length - start < total) break;
        frames.push(Buffer.from(buf.subarray(start, start + total)));
        start += total;
      }
      buf = start >= buf.length ? EMPTY : buf.subarray(start);
      return frames;
    },
  };
}
