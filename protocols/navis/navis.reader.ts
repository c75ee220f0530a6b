/**
 * Navtelecom writes every number little-endian: a ByteReader (bounds-checked, ProtocolError past
 * the end) with the little-endian reads NTCB and FLEX need.
 */
import { ByteReader } from '../shared/byte-reader.js';
import { PROTOCOL } from './navis.constants.js';

export class LeReader extends ByteReader {
  constructor(buf: Buffer, start = 0, end = buf.length) {
    super(PROTOCOL, buf, start, end);
  }

  u16le(): number {
    return this.bytes(2).readUInt16LE(0);
  }

  i16le(): number {
    return this.bytes(2).readInt16LE(0);
  }

  u32le(): number {
    return this.bytes(4).readUInt32LE(0);
  }

  i32le(): number {
    return this.bytes(4).readInt32LE(0);
  }

  f32le(): number {
    return this.bytes(4).readFloatLE(0);
  }

  /** a little-endian reader over the next `n` bytes, advancing this one past them */
  subLe(n: number, what = 'block'): LeReader {
    const start = this.offset;
    this.need(n, what);
    this.skip(n);
    return new LeReader(this.buf, start, start + n);
  }

  /** a signed 64-bit value as a number (exact up to 2^53) */
  i64le(): number {
    return Number(this.bytes(8).readBigInt64LE(0));
  }
}
