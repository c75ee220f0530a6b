import type { FrameSplitter } from '../types.js';
import { DELIMITER, DELIMITER_ALT, ESCAPE } from './jt808.constants.js';
import { EMPTY, restOf } from '../shared/empty.js';

/** an escaped frame is at most twice 1 + 2 + 2 + 1 + 10 + 2 + 4 + 1023 + 1 bytes plus delimiters */
export const MAX_FRAME_BYTES = 4096;
/** a Jimi `( … )` text result is short; a `(` with no `)` this far on was noise */
const MAX_TEXT_BYTES = 1024;

const TEXT_START = 0x28; // '('
const TEXT_END = 0x29; // ')'
// alternative delimiter escapes (Traccar `Jt808FrameDecoder`): E6 01 -> E6, E6 02 -> E7, 3E 01 -> 3E, 3E 02 -> 3D
const ALT_ESCAPE_E6 = 0xe6;
const ALT_ESCAPE_3E = 0x3e;

const isStart = (b: number): boolean => b === DELIMITER || b === DELIMITER_ALT || b === TEXT_START;

/**
 * Reverses 4.4 escaping between the delimiters at `start` and `end` (inclusive). An unknown escape
 * pair is dropped, as Traccar's frame decoder does.
 */
export function unescapeFrame(buf: Buffer, start = 0, end = buf.length - 1): Buffer {
  const out = Buffer.alloc(end - start + 1);
  const alternative = buf[start] === DELIMITER_ALT;
  let n = 0;
  out[n++] = buf[start];
  for (let i = start + 1; i < end; i++) {
    const b = buf[i];
    if (alternative ? b === ALT_ESCAPE_E6 || b === ALT_ESCAPE_3E : b === ESCAPE) {
      const ext = buf[++i];
      if (i >= end) break;
      if (!alternative) {
        if (ext === 0x01) out[n++] = ESCAPE;
        else if (ext === 0x02) out[n++] = DELIMITER;
      } else if (b === ALT_ESCAPE_E6) {
        if (ext === 0x01) out[n++] = ALT_ESCAPE_E6;
        else if (ext === 0x02) out[n++] = DELIMITER_ALT;
      } else if (ext === 0x01) out[n++] = ALT_ESCAPE_3E;
      else if (ext === 0x02) out[n++] = 0x3d;
    } else {
      out[n++] = b;
    }
  }
  out[n++] = buf[end];
  return out.subarray(0, n);
}

/** 4.4 escaping of a whole frame, delimiters included (Traccar `Jt808FrameEncoder`). */
export function escapeFrame(frame: Buffer): Buffer {
  const alternative = frame[0] === DELIMITER_ALT;
  const out: number[] = [frame[0]];
  for (let i = 1; i < frame.length - 1; i++) {
    const b = frame[i];
    if (alternative && (b === ALT_ESCAPE_E6 || b === 0x3d || b === ALT_ESCAPE_3E)) {
      out.push(b === ALT_ESCAPE_E6 ? ALT_ESCAPE_E6 : ALT_ESCAPE_3E, b === 0x3d ? 0x02 : 0x01);
    } else if (alternative && b === DELIMITER_ALT) {
      out.push(ALT_ESCAPE_E6, 0x02);
    } else if (!alternative && b === ESCAPE) {
      out.push(ESCAPE, 0x01);
    } else if (!alternative && b === DELIMITER) {
      out.push(ESCAPE, 0x02);
    } else {
      out.push(b);
    }
  }
  if (frame.length > 1) out.push(frame[frame.length - 1]);
  return Buffer.from(out);
}

/**
 * Cuts a JT/T 808 stream into frames, delimiters included and escaping reversed (what the decoder
 * reads): `7E … 7E`, the alternative `E7 … E7`, or a Jimi text result `( … )`. Bytes before a start
 * byte are skipped. Two adjacent delimiters mean the first one closed a frame we never saw the start
 * of: the second one opens the next frame.
 */
export class Jt808Splitter implements FrameSplitter {
  private buf: Buffer = EMPTY;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  get buffered(): number {
    return this.buf.length;
  }

  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : Buffer.from(chunk);
    const frames: Buffer[] = [];
    let start = 0;
    let close = -2; // next ')' at or after `start` (-1: none in the buffer, -2: not looked up yet)
    for (;;) {
      while (start < this.buf.length && !isStart(this.buf[start])) start++;
      if (start >= this.buf.length) break;
      const first = this.buf[start];
      const limit = first === TEXT_START ? Math.min(MAX_TEXT_BYTES, this.maxFrameBytes) : this.maxFrameBytes;
      let end: number;
      if (first === TEXT_START) {
        if (close === -2 || (close >= 0 && close <= start)) close = this.buf.indexOf(TEXT_END, start + 1);
        end = close;
      } else {
        end = this.buf.indexOf(first, start + 1);
      }
      if (end < 0) {
        if (this.buf.length - start <= limit) break; // wait for the rest
        start += 1; // no end within the limit: that start byte was noise
        continue;
      }
      if (end - start + 1 > limit) {
        start += 1;
      } else if (first === TEXT_START) {
        frames.push(Buffer.from(this.buf.subarray(start, end + 1)));
        start = end + 1;
      } else if (end === start + 1) {
        start = end;
      } else {
        frames.push(unescapeFrame(this.buf, start, end));
        start = end + 1;
      }
    }
    this.buf = restOf(this.buf, start);
    return frames;
  }
}

export function createJt808Splitter(maxFrameBytes = MAX_FRAME_BYTES): FrameSplitter {
  return new Jt808Splitter(maxFrameBytes);
}
