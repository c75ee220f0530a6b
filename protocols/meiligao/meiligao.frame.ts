import { EMPTY } from '../shared/empty.js';
import type { FrameSplitter } from '../types.js';
import { DEVICE_MARK, MAX_FRAME_BYTES, MIN_FRAME_BYTES, SERVER_MARK } from './meiligao.constants.js';

/**
 * Cuts a Meiligao stream as Traccar's MeiligaoFrameDecoder does: bytes before a frame start are
 * dropped, then the frame is as long as its u16 length field (offset 2). A frame starts `$$`, or
 * `@@` as some devices also write (Traccar takes any `$` and drops `@@` frames). A start with a
 * length shorter than the smallest frame or over the limit is not one: its first byte is dropped
 * and the search goes on (Traccar stalls on a length of 0).
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
        while (start < buf.length && buf[start] !== DEVICE_MARK && buf[start] !== SERVER_MARK) start++;
        if (buf.length - start < 4) break;
        const length = buf.readUInt16BE(start + 2);
        if (buf[start + 1] !== buf[start] || length < MIN_FRAME_BYTES || length > maxFrameBytes) {
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
