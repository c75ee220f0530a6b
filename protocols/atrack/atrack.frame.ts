import { EMPTY, restOf } from '../shared/empty.js';
import type { FrameSplitter } from '../types.js';
import { AT, COMMA, CR, DOLLAR, KEEPALIVE_BYTES, LF, MAX_FRAME_BYTES } from './atrack.constants.js';

/** a text report's header `@P,<crc>,<length>,` ends within this many bytes */
const HEADER_WINDOW = 24;

type Cut = { length: number } | 'wait' | 'skip';

const CRLF = Buffer.from([CR, LF]);

/** the size of a `$` line up to its CR LF, or wait */
function line(buf: Buffer, start: number): Cut {
  const end = buf.indexOf(CRLF, start + 1);
  return end < 0 ? 'wait' : { length: end + 2 - start };
}

/**
 * A text report: its length field (the 3rd) counts the bytes after it, the comma included; a
 * LF right after them belongs to the frame.
 */
function textReport(buf: Buffer, start: number): Cut {
  const header = buf.subarray(start, start + HEADER_WINDOW);
  const lengthStart = header.indexOf(COMMA, 3) + 1;
  const lengthEnd = lengthStart > 0 ? header.indexOf(COMMA, lengthStart) : -1;
  if (lengthEnd < 0) return header.length < HEADER_WINDOW ? 'wait' : 'skip';
  const digits = header.toString('latin1', lengthStart, lengthEnd);
  if (!/^\d{1,6}$/.test(digits)) return 'skip';
  let length = lengthEnd + Number(digits);
  if (buf.length - start > length && buf[start + length] === LF) length += 1;
  return buf.length - start >= length ? { length } : { length: -length };
}

/** what starts at `start`: FE 02 keep-alive, `@` binary report, `$` answer line, text report */
function cut(buf: Buffer, start: number): Cut {
  if (buf.length - start < 3) return 'wait';
  const first = buf[start];
  if (first === 0xfe && buf[start + 1] === 0x02)
    return buf.length - start >= KEEPALIVE_BYTES ? { length: KEEPALIVE_BYTES } : 'wait';
  if (first === AT && buf[start + 2] !== COMMA) {
    if (buf.length - start < 6) return 'wait';
    const length = buf.readUInt16BE(start + 4) + 6;
    return buf.length - start >= length ? { length } : { length: -length };
  }
  if (first === DOLLAR) return line(buf, start);
  if (buf[start + 2] === COMMA) return textReport(buf, start);
  return 'skip';
}

/**
 * Cuts an ATrack stream (AtrackFrameDecoder): the 12-byte FE 02 keep-alive; a binary report of
 * its u16 length (bytes 4-5) + 6; a text report (comma third) of its length field + the bytes up
 * to it; a `$` answer up to CR LF. The reference frames `$` lines with commas (`$INFO=…`) by a
 * length field they do not have; here every `$` line ends at its CR LF. A byte that starts none of
 * these is skipped, and so is the first byte of a frame longer than `maxFrameBytes`, so the stream
 * resynchronises on the next frame; a `$` line still without its CR LF after `maxFrameBytes` is dropped.
 */
export function createAtrackSplitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
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
        const c = cut(buf, start);
        if (c === 'wait') break;
        if (c === 'skip' || Math.abs(c.length) > maxFrameBytes) start++;
        else if (c.length < 0) break;
        else {
          frames.push(Buffer.from(buf.subarray(start, start + c.length)));
          start += c.length;
        }
      }
      // a `$` line without its CR LF, longer than any frame: what is held is dropped
      if (buf.length - start > maxFrameBytes) start = buf.length;
      buf = restOf(buf, start);
      return frames;
    },
  };
}
