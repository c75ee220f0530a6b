import type { FrameSplitter } from '../types.js';
import { CR, LF, MAX_FRAME_BYTES, ZIP_MARKER } from './suntech.constants.js';
import { EMPTY } from '../shared/empty.js';

/** Bytes that may start a report: a binary marker or a printable character (`S`, `A`, `C`, `-` …). */
const canStart = (b: number): boolean => b === ZIP_MARKER || b >= 0x80 || (b > 0x20 && b < 0x7f);

/**
 * Cuts a Suntech stream (SuntechFrameDecoder): a frame whose second byte is 0 is a binary
 * universal report of 1 + 2 + u16 bytes; one that starts with 0x02 is a binary zip report of
 * 1 + 2 + u16 + 1 bytes; anything else is text up to a CR that is not followed by LF (UEX serial
 * data carries CR LF inside a report), the CR dropped. A CR that ends what has arrived ends the
 * report, as in Traccar: a report is not held back waiting for the next one. Blank bytes before a report are skipped;
 * a text report longer than `maxFrameBytes` is dropped up to its CR.
 */
export function createSuntechSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  let buf: Buffer = EMPTY;
  /** bytes at the front of `buf` already searched for the CR that ends a text report */
  let scanned = 0;
  let discarding = false;
  return {
    get buffered() {
      return buf.length;
    },
    push(chunk: Buffer): Buffer[] {
      buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
      const frames: Buffer[] = [];
      let start = 0;
      for (;;) {
        if (!discarding) while (start < buf.length && !canStart(buf[start])) start++;
        if (buf.length - start < 2) break;
        if (!discarding && (buf[start] === ZIP_MARKER || buf[start + 1] === 0)) {
          if (buf.length - start < 3) break;
          const length = 3 + buf.readUInt16BE(start + 1) + (buf[start] === ZIP_MARKER ? 1 : 0);
          if (length > maxFrameBytes) {
            start++; // no report after all: resynchronise on the next byte
            continue;
          }
          if (buf.length - start < length) break;
          frames.push(Buffer.from(buf.subarray(start, start + length)));
          start += length;
          continue;
        }
        let end = -1;
        let i = start + scanned;
        for (; i < buf.length; i++) {
          if (buf[i] !== CR) continue;
          if (i + 1 >= buf.length || buf[i + 1] !== LF) {
            end = i;
            break;
          }
        }
        if (end < 0) {
          scanned = i - start;
          break;
        }
        if (!discarding && end - start <= maxFrameBytes) frames.push(Buffer.from(buf.subarray(start, end)));
        discarding = false;
        start = end + 1;
        scanned = 0;
      }
      buf = start >= buf.length ? EMPTY : buf.subarray(start);
      if (buf.length > maxFrameBytes) {
        // a text report without its CR: what is held is dropped, and the rest of it up to the CR
        buf = EMPTY;
        scanned = 0;
        discarding = true;
      }
      return frames;
    },
  };
}
