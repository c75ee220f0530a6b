import type { FrameSplitter } from '../types.js';
import { crc16X25 } from '../shared/crc.js';
import { EMPTY } from '../shared/empty.js';

/**
 * Largest frame kept: 0x7979 carries a u16 length, but no GT06 packet in use comes near it
 * (photo chunks are at most 1024 bytes of data); a longer run without a frame means framing is lost.
 */
export const GT06_MAX_FRAME_BYTES = 4096;

const CR = 0x0d;
const LF = 0x0a;

/**
 * Cuts the stream at `78 78 | u8 len | ... | 0D 0A` (len + 5 bytes) and `79 79 | u16 len | ... | 0D 0A`
 * (len + 6 bytes), after Traccar `Gt06FrameDecoder`: a frame whose stop bytes sit 2 bytes past the
 * declared end is taken whole, and a 0x7878 frame whose length byte is wrong (len 0 Wi-Fi packets,
 * short login frames) is cut at its first `0D 0A`. 0x7979 frames are trusted to their length, so a
 * `0D 0A` inside their data never cuts them short. Bytes before a start marker are skipped; a head
 * that cannot complete within `maxFrameBytes` loses its marker and the stream is searched again.
 */
export class Gt06FrameSplitter implements FrameSplitter {
  private buf: Buffer = EMPTY;
  /** read position in `buf` during one push */
  private pos = 0;
  /** cache of the last CR LF search: first CR at or after `crlfFrom` (-1: none up to the end) */
  private crlfFrom = 0;
  private crlfAt = -2;

  constructor(private readonly maxFrameBytes = GT06_MAX_FRAME_BYTES) {}

  get buffered(): number {
    return this.buf.length;
  }

  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : Buffer.from(chunk);
    this.pos = 0;
    this.crlfAt = -2;
    const frames: Buffer[] = [];
    for (;;) {
      this.resync();
      const cut = this.frameLength();
      if (cut < 0) continue; // moved past a false start
      if (cut > 0) {
        frames.push(Buffer.from(this.buf.subarray(this.pos, this.pos + cut)));
        this.pos += cut;
      } else if (this.buf.length - this.pos > this.maxFrameBytes) {
        this.pos += 2; // the head cannot complete: drop its start marker and search again
      } else {
        break;
      }
    }
    this.buf = this.buf.subarray(this.pos);
    this.pos = 0;
    return frames;
  }

  private isStart(i: number): boolean {
    const b = this.buf;
    return (b[i] === 0x78 && b[i + 1] === 0x78) || (b[i] === 0x79 && b[i + 1] === 0x79);
  }

  /** moves to the first start marker (keeping a last 0x78/0x79 byte that may begin one) */
  private resync(): void {
    const b = this.buf;
    let i = this.pos;
    while (i + 1 < b.length && !this.isStart(i)) i++;
    if (i + 1 >= b.length && i < b.length && b[i] !== 0x78 && b[i] !== 0x79) i = b.length;
    this.pos = Math.min(i, b.length);
  }

  /** bytes of the frame at `pos`, 0 when it is not complete yet, -1 when `pos` moved past a false start */
  private frameLength(): number {
    const b = this.buf;
    const p = this.pos;
    const available = b.length - p;
    if (available < 5) return 0;
    const extended = b[p] === 0x79;
    const declared = extended ? 6 + b.readUInt16BE(p + 2) : 5 + b[p + 2];
    if (declared > this.maxFrameBytes) return this.cutAtCrLf(extended ? 4 : 3);
    if (available >= declared + 2 && b[p + declared] === CR && b[p + declared + 1] === LF)
      return this.unlessNested(declared + 2);
    if (available >= declared) {
      if (b[p + declared - 2] === CR && b[p + declared - 1] === LF) return this.unlessNested(declared);
      return this.cutAtCrLf(extended ? 4 : 3);
    }
    // incomplete by its length: a 0x7878 frame with a wrong length byte still ends at 0D 0A
    return extended ? 0 : this.cutAtCrLf(3);
  }

  /**
   * Length up to and including the first `0D 0A` after the header, 0 when none (or too long).
   * When a well-formed frame starts before those stop bytes, the head was a false start: `pos`
   * moves to that frame and -1 is returned.
   */
  private cutAtCrLf(headerLength: number): number {
    const end = this.findCrLf(this.pos + headerLength);
    if (end < 0 || end + 2 - this.pos > this.maxFrameBytes) return 0;
    for (let q = this.pos + 2; q < end; q++) {
      if (this.isWellFormedAt(q)) {
        this.pos = q;
        return -1;
      }
    }
    return end + 2 - this.pos;
  }

  /**
   * `length`, unless the head fails its CRC and a well-formed frame with a good CRC starts inside
   * it and ends with it (the head was garbage that looked like a start)
   */
  private unlessNested(length: number): number {
    const end = this.pos + length;
    if (this.crcOk(this.pos, length)) return length;
    for (let q = this.pos + 2; q + 5 <= end; q++) {
      if (this.isWellFormedAt(q) && q + this.declaredAt(q) === end) {
        this.pos = q;
        return -1;
      }
    }
    return length;
  }

  private declaredAt(i: number): number {
    return this.buf[i] === 0x79 ? 6 + this.buf.readUInt16BE(i + 2) : 5 + this.buf[i + 2];
  }

  /** a start marker at `i` whose declared length ends, inside the buffer, in `0D 0A`, with a good CRC */
  private isWellFormedAt(i: number): boolean {
    const b = this.buf;
    if (i + 5 > b.length || !this.isStart(i)) return false;
    const declared = this.declaredAt(i);
    return (
      i + declared <= b.length && b[i + declared - 2] === CR && b[i + declared - 1] === LF && this.crcOk(i, declared)
    );
  }

  /** CRC-16/X-25 of the frame of `length` bytes at `i` (over length..serial) matches */
  private crcOk(i: number, length: number): boolean {
    if (length < 10) return false;
    return crc16X25(this.buf, i + 2, i + length - 4) === this.buf.readUInt16BE(i + length - 4);
  }

  private findCrLf(from: number): number {
    if (this.crlfAt !== -2 && from >= this.crlfFrom && (this.crlfAt === -1 || this.crlfAt >= from)) return this.crlfAt;
    const b = this.buf;
    let found = -1;
    for (let i = from; i + 1 < b.length; i++) {
      if (b[i] === CR && b[i + 1] === LF) {
        found = i;
        break;
      }
    }
    this.crlfFrom = from;
    this.crlfAt = found;
    return found;
  }
}

export function createGt06Splitter(maxFrameBytes = GT06_MAX_FRAME_BYTES): FrameSplitter {
  return new Gt06FrameSplitter(maxFrameBytes);
}
