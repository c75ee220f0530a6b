/**
 * Cuts a Navtelecom stream: a 0x7F keep-alive byte; an NTCB frame ('@' and 3 printable bytes,
 * then the header's body length); a FLEX packet ('~' and its type), whose length follows from
 * the record size the *>FLEX negotiation declared. The splitter reads that negotiation itself
 * from the NTCB frames it cuts (it sees every one before the decoder does), so the gateway needs
 * to tell it nothing; `flexDataSize` (Traccar's NavisFrameDecoder.setFlexDataSize) gives the size
 * up front for a stream whose negotiation it never sees. Any other byte is garbage and skipped.
 */
import { EMPTY } from '../shared/empty.js';
import type { FrameSplitter } from '../types.js';
import {
  FLEX_CRC_BYTES,
  FLEX_HEADER_BYTES,
  FLEX_START,
  KEEP_ALIVE,
  MAX_FRAME_BYTES,
  NTCB_FLEX,
  NTCB_FLEX_TAIL_BYTES,
  NTCB_HEADER_BYTES,
  NTCB_LENGTH_OFFSET,
  NTCB_START,
} from './navis.constants.js';
import { readFlexNegotiation } from './navis.layout.js';

export interface NavisSplitterOptions {
  maxFrameBytes?: number;
  /** the FLEX record size until a negotiation declares one (0 or absent: none) */
  flexDataSize?: number;
}

/** what a frame at the start of `buf` needs: its length, 0 to wait for more bytes, -1 when it is no frame */
type Measure = (buf: Buffer, at: number, dataSize: number) => number;

const printable = (b: number): boolean => b >= 0x20 && b <= 0x7e;

const ntcbLength: Measure = (buf, at) => {
  if (buf.length - at < NTCB_HEADER_BYTES) {
    for (let i = at + 1; i < Math.min(buf.length, at + 4); i++) if (!printable(buf[i])) return -1;
    return 0;
  }
  for (let i = at + 1; i < at + 4; i++) if (!printable(buf[i])) return -1;
  return NTCB_HEADER_BYTES + buf.readUInt16LE(at + NTCB_LENGTH_OFFSET);
};

/** ~E: a count, then records of `u16 length` (big-endian, as Traccar reads it) and that many bytes */
function extraArrayLength(buf: Buffer, at: number): number {
  let offset = at + FLEX_HEADER_BYTES;
  if (offset >= buf.length) return 0;
  const count = buf[offset++];
  for (let i = 0; i < count; i++) {
    if (offset + 2 > buf.length) return 0;
    offset += 2 + buf.readUInt16BE(offset);
  }
  return offset - at + FLEX_CRC_BYTES;
}

/** lengths by FLEX type letter, without the header, count or index where the type has one */
const FLEX_LENGTHS: Record<number, Measure> = {
  0x41: (buf, at, size) => {
    // ~A: count, count records
    if (size === 0) return -1;
    if (buf.length - at < 3) return 0;
    return FLEX_HEADER_BYTES + 1 + buf[at + 2] * size + FLEX_CRC_BYTES;
  },
  0x54: (_buf, _at, size) => (size === 0 ? -1 : FLEX_HEADER_BYTES + 4 + size + FLEX_CRC_BYTES), // ~T
  0x43: (_buf, _at, size) => (size === 0 ? -1 : FLEX_HEADER_BYTES + size + FLEX_CRC_BYTES), // ~C
  0x45: (buf, at, size) => (size === 0 ? -1 : extraArrayLength(buf, at)), // ~E
  0x58: (buf, at, size) => {
    // ~X: index, one record
    if (size === 0) return -1;
    if (buf.length - at < FLEX_HEADER_BYTES + 6) return 0;
    return FLEX_HEADER_BYTES + 4 + 2 + buf.readUInt16BE(at + FLEX_HEADER_BYTES + 4) + FLEX_CRC_BYTES;
  },
};

const flexLength: Measure = (buf, at, size) => {
  if (buf.length - at < 2) return 0;
  const measure = FLEX_LENGTHS[buf[at + 1]];
  return measure ? measure(buf, at, size) : -1;
};

/** The record size a cut NTCB frame declares when it is a *>FLEX negotiation. */
function negotiatedSize(frame: Buffer): number | undefined {
  const body = frame.subarray(NTCB_HEADER_BYTES);
  if (body.subarray(0, 3).toString('latin1') !== NTCB_FLEX) return undefined;
  return readFlexNegotiation(body.subarray(3 + NTCB_FLEX_TAIL_BYTES))?.dataSize;
}

export function createNavisSplitter(o: NavisSplitterOptions = {}): FrameSplitter {
  const max = o.maxFrameBytes ?? MAX_FRAME_BYTES;
  let dataSize = o.flexDataSize ?? 0;
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
        const first = buf[start];
        const length =
          first === KEEP_ALIVE
            ? 1
            : first === NTCB_START
              ? ntcbLength(buf, start, dataSize)
              : first === FLEX_START
                ? flexLength(buf, start, dataSize)
                : -1;
        // no frame here, or one longer than any (a ~E still being measured counts as long as it is)
        if (length < 0 || length > max || (length === 0 && buf.length - start >= max)) {
          start++;
          continue;
        }
        if (length === 0 || buf.length - start < length) break;
        const frame = Buffer.from(buf.subarray(start, start + length));
        if (first === NTCB_START) dataSize = negotiatedSize(frame) ?? dataSize;
        frames.push(frame);
        start += length;
      }
      buf = start >= buf.length ? EMPTY : buf.subarray(start);
      return frames;
    },
  };
}
