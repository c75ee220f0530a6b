import type { FrameSplitter } from '../types.js';
import { EMPTY } from '../shared/empty.js';
import {
  ALT_LENGTH,
  BINARY_LONG,
  BINARY_SHORT,
  MARKER_ALT,
  MARKER_BINARY,
  MARKER_TEXT,
  MAX_FRAME_BYTES,
  TEXT_END,
} from './h02.constants.js';

export interface H02SplitterOptions {
  maxFrameBytes?: number;
  /**
   * Fixed length of binary `$` frames (Traccar's `h02.messageLength`, e.g. 32, 42 or 45).
   * Unset: auto-detected between 32 and 45 from the first frame that shows its end.
   */
  messageLength?: number;
}

const CR = 0x0d;
const LF = 0x0a;

const isMarker = (b: number | undefined): boolean => b === MARKER_TEXT || b === MARKER_BINARY || b === MARKER_ALT;

/**
 * Cuts an H02 byte stream (H02FrameDecoder): bytes are skipped until `*`, `$` or `X`;
 * `*` runs to `#` (CR/LF after it skipped); `$` is 32 or 45 bytes; `X` is 32 bytes.
 */
export class H02Splitter implements FrameSplitter {
  private buf: Buffer = EMPTY;
  /** where the search for `#` resumes in a text frame still waiting for its end */
  private textScanFrom = 0;
  /** `$` frame length once known (configured, or detected on this connection) */
  private binaryLength: number | undefined;
  private readonly maxFrameBytes: number;

  constructor(options: H02SplitterOptions = {}) {
    this.binaryLength =
      options.messageLength && options.messageLength >= BINARY_SHORT ? options.messageLength : undefined;
    this.maxFrameBytes = Math.max(options.maxFrameBytes ?? MAX_FRAME_BYTES, (this.binaryLength ?? BINARY_LONG) + 1);
  }

  get buffered(): number {
    return this.buf.length;
  }

  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : Buffer.from(chunk);
    const frames: Buffer[] = [];
    let start = 0;
    for (;;) {
      start = this.skipToMarker(start);
      if (start >= this.buf.length) break;
      const length = this.frameLength(start);
      if (length === 'drop') {
        start += 1;
        this.textScanFrom = 0;
        continue;
      }
      if (length === undefined) break;
      frames.push(Buffer.from(this.buf.subarray(start, start + length)));
      start += length;
      this.textScanFrom = 0;
      if (frames[frames.length - 1][0] === MARKER_TEXT) {
        while (start < this.buf.length && (this.buf[start] === CR || this.buf[start] === LF)) start++;
      }
    }
    this.buf = start >= this.buf.length ? EMPTY : this.buf.subarray(start);
    return frames;
  }

  private skipToMarker(from: number): number {
    let i = from;
    while (i < this.buf.length && !isMarker(this.buf[i])) i++;
    return i;
  }

  /** the length of the frame at `start`, undefined to wait for more bytes, 'drop' when oversized */
  private frameLength(start: number): number | 'drop' | undefined {
    const available = this.buf.length - start;
    switch (this.buf[start]) {
      case MARKER_TEXT: {
        const end = this.buf.indexOf(TEXT_END, start + Math.max(1, this.textScanFrom));
        if (end >= 0) return end + 1 - start > this.maxFrameBytes ? 'drop' : end + 1 - start;
        if (available > this.maxFrameBytes) return 'drop';
        this.textScanFrom = available;
        return undefined;
      }
      case MARKER_BINARY: {
        const length = this.binaryLength ?? this.detectBinaryLength(start, available);
        return length !== undefined && available >= length ? length : undefined;
      }
      default:
        return available >= ALT_LENGTH ? ALT_LENGTH : undefined;
    }
  }

  /**
   * 32 or 45 bytes, from where the next frame starts. Decided once per connection, on the first
   * frame whose end is visible (Traccar decides on the first frame: 45 when exactly 45 bytes came).
   * Until then exactly 32 bytes are taken as a short frame, so that a lone frame is not held back;
   * a long frame cut there still decodes (its first 29 bytes are the short layout).
   */
  private detectBinaryLength(start: number, available: number): number | undefined {
    if (available < BINARY_SHORT) return undefined;
    if (available === BINARY_SHORT) return BINARY_SHORT;
    if (isMarker(this.buf[start + BINARY_SHORT])) return (this.binaryLength = BINARY_SHORT);
    if (available < BINARY_LONG) return undefined;
    if (available === BINARY_LONG || isMarker(this.buf[start + BINARY_LONG])) return (this.binaryLength = BINARY_LONG);
    return BINARY_SHORT;
  }
}

export function createH02Splitter(options: H02SplitterOptions = {}): FrameSplitter {
  return new H02Splitter(options);
}
