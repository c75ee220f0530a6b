import { EMPTY } from '../shared/empty.js';
import type { FrameSplitter } from '../types.js';
import { MARK, MAX_FRAME_BYTES, PACKET_HEADER_BYTES } from './eelink.constants.js';

/**
 * Cuts an Eelink TCP stream by the length field (Traccar: LengthFieldBasedFrameDecoder at offset
 * 3, 2 bytes): a packet is 5 + length bytes. Bytes that are not a `67 67` packet start, and a
 * length under 2 (a packet holds its index) or over the limit, are skipped one byte at a time.
 */
export function createEelinkSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let buf: Buffer = EMPTY;
  return {
    get buffered() {
      return buf.length;
    },
    push(chunk: Buffer): Buffer[] {
      buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
      const frames: Buffer[] = [];
      let start = 0;
      while (buf.length - start >= PACKET_HEADER_BYTES) {
        const total = PACKET_HEADER_BYTES + buf.readUInt16BE(start + 3);
        if (
          buf[start] !== MARK ||
          buf[start + 1] !== MARK ||
          total < PACKET_HEADER_BYTES + 2 ||
          total > maxFrameBytes
        ) {
          start++;
          continue;
        }
        if (buf.length - start < total) break;
        frames.push(Buffer.from(buf.subarray(start, start + total)));
        start += total;
      }
      while (start < buf.length && buf[start] !== MARK) start++;
      buf = start >= buf.length ? EMPTY : buf.subarray(start);
      return frames;
    },
  };
}
