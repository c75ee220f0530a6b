import type { FrameSplitter } from '../types.js';
import { EMPTY } from '../shared/empty.js';
import {
  CRC_BYTES,
  HEAD_BYTES,
  HEADER_COMPRESSED,
  HEADER_DATA,
  HEADER_PHOTO,
  LENGTH_MASK,
  MAX_FRAME_BYTES,
} from './galileo.constants.js';
import { isIridium } from './galileo.decoder.js';

const HEADERS = new Set([HEADER_DATA, HEADER_PHOTO, HEADER_COMPRESSED]);
/** Traccar's GalileoFrameDecoder waits for 6 bytes: enough to tell an Iridium message apart */
const MIN_PEEK = 6;

/**
 * Cuts a Galileo stream (GalileoFrameDecoder): `header | u16 LE length (low 15 bits) | data | CRC`,
 * or an Iridium SBD message, `01 | u16 BE length | that many bytes`. A byte that is no packet
 * header, or a length beyond the limit, means the stream is not at a packet start: one byte is
 * skipped and the search goes on.
 */
export function createGalileoSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let buf: Buffer = EMPTY;
  return {
    get buffered() {
      return buf.length;
    },
    push(chunk: Buffer): Buffer[] {
      buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
      const frames: Buffer[] = [];
      let start = 0;
      while (buf.length - start >= MIN_PEEK) {
        const total = isIridium(buf, start)
          ? 3 + buf.readUInt16BE(start + 1)
          : HEAD_BYTES + (buf.readUInt16LE(start + 1) & LENGTH_MASK) + CRC_BYTES;
        if (!HEADERS.has(buf[start]) || total > maxFrameBytes) {
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
