import { ProtocolError } from '../types.js';

/** ByteReader.transient's shared buffers, by width */
const TRANSIENT: Readonly<Record<number, Buffer>> = { 1: Buffer.alloc(1), 2: Buffer.alloc(2), 4: Buffer.alloc(4) };

/**
 * A bounds-checked cursor over a Buffer: big-endian integers, and the little-endian ones (`u16le`
 * …) that Galileosky tags, Meitrack binary batches, Castel and Navtelecom bodies are written in. Reading past
 * the end throws a ProtocolError (never a RangeError), so a truncated frame fails the way the
 * contract expects.
 */
export class ByteReader {
  private pos: number;
  private readonly end: number;

  constructor(
    private readonly protocol: string,
    readonly buf: Buffer,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = Math.min(end, buf.length);
  }

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  /** throws unless `n` more bytes are there */
  need(n: number, what = 'field'): void {
    if (n < 0 || this.pos + n > this.end) {
      throw new ProtocolError(
        this.protocol,
        `truncated ${what} at offset ${this.pos} (need ${n}, have ${this.remaining})`,
        this.buf,
      );
    }
  }

  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  i8(): number {
    this.need(1);
    return this.buf.readInt8(this.pos++);
  }

  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  i16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  i32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  u16le(): number {
    this.need(2);
    const v = this.buf.readUInt16LE(this.pos);
    this.pos += 2;
    return v;
  }

  i16le(): number {
    this.need(2);
    const v = this.buf.readInt16LE(this.pos);
    this.pos += 2;
    return v;
  }

  u32le(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  i32le(): number {
    this.need(4);
    const v = this.buf.readInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  f32le(): number {
    this.need(4);
    const v = this.buf.readFloatLE(this.pos);
    this.pos += 4;
    return v;
  }

  /** a signed little-endian 64-bit value as a number (exact up to 2^53) */
  i64le(): number {
    this.need(8);
    const v = Number(this.buf.readBigInt64LE(this.pos));
    this.pos += 8;
    return v;
  }

  /** the next byte, not consumed (undefined at the end) */
  peek(): number | undefined {
    return this.pos < this.end ? this.buf[this.pos] : undefined;
  }

  u64(): bigint {
    this.need(8);
    const v = this.buf.readBigUInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  /** u64 as a number: exact up to 2^53, rounded to the nearest double beyond (as Number(u64()) is), without a BigInt */
  u64Number(): number {
    this.need(8);
    const v = this.buf.readUInt32BE(this.pos) * 0x1_0000_0000 + this.buf.readUInt32BE(this.pos + 4);
    this.pos += 8;
    return v;
  }

  f32(): number {
    this.need(4);
    const v = this.buf.readFloatBE(this.pos);
    this.pos += 4;
    return v;
  }

  /** a view (not a copy) of the next `n` bytes */
  bytes(n: number, what = 'bytes'): Buffer {
    this.need(n, what);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  /**
   * The next `n` bytes for a value read and let go at once (an IO element's value handed to its
   * handler): for 1, 2 and 4 bytes a buffer shared by every reader and overwritten by the next
   * call, so nothing may keep it; other widths get a view of their own, as `bytes` gives. A
   * tracker record carries 5–30 such values, and a view per value was most of what decoding one
   * allocated.
   */
  transient(n: number, what = 'bytes'): Buffer {
    const into = TRANSIENT[n];
    if (into === undefined) return this.bytes(n, what);
    this.need(n, what);
    for (let i = 0; i < n; i++) into[i] = this.buf[this.pos + i];
    this.pos += n;
    return into;
  }

  /** a reader over the next `n` bytes, advancing this one past them */
  sub(n: number, what = 'block'): ByteReader {
    this.need(n, what);
    const r = new ByteReader(this.protocol, this.buf, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }
}

/** Unsigned big-endian integer of any width up to 8 bytes; beyond 2^53 it is returned as a decimal string. */
export function uintBE(value: Buffer): number | string {
  if (value.length <= 6) return value.length === 0 ? 0 : value.readUIntBE(0, value.length);
  let v = 0n;
  for (const b of value) v = (v << 8n) | BigInt(b);
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

/** Signed (two's complement) big-endian integer of any width up to 8 bytes (wider ones lose precision). */
export function intBE(value: Buffer): number {
  if (value.length === 0) return 0;
  if (value.length <= 6) return value.readIntBE(0, value.length);
  let v = 0n;
  for (const b of value) v = (v << 8n) | BigInt(b);
  return Number(BigInt.asIntN(value.length * 8, v));
}
