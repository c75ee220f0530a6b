import { ProtocolError } from '../types.js';
import { PROTOCOL } from './minifinder2.constants.js';

/**
 * A cursor over a whole frame. Records are `length | key | value`, but a value is read the way the
 * reference reads it, up to the frame's end rather than the record's (a short record then reads
 * into the next one, and the cursor is set back to the record's end afterwards). Reading past the
 * frame throws a ProtocolError. Little-endian unless the name says `BE`.
 */
export class Cursor {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start: number,
  ) {
    this.pos = start;
  }

  get readable(): boolean {
    return this.pos < this.buf.length;
  }

  private need(n: number): number {
    if (n < 0 || this.pos + n > this.buf.length)
      throw new ProtocolError(PROTOCOL, `truncated record at offset ${this.pos} (need ${n})`, this.buf);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  /** moves to `offset`, which may not lie past the frame */
  seek(offset: number): void {
    if (offset > this.buf.length)
      throw new ProtocolError(PROTOCOL, `record ends at ${offset}, past the frame (${this.buf.length})`, this.buf);
    this.pos = offset;
  }

  u8 = (): number => this.buf[this.need(1)];
  i8 = (): number => this.buf.readInt8(this.need(1));
  u16 = (): number => this.buf.readUInt16LE(this.need(2));
  i16 = (): number => this.buf.readInt16LE(this.need(2));
  u32 = (): number => this.buf.readUInt32LE(this.need(4));
  i32 = (): number => this.buf.readInt32LE(this.need(4));
  u16BE = (): number => this.buf.readUInt16BE(this.need(2));
  i16BE = (): number => this.buf.readInt16BE(this.need(2));
  u24BE = (): number => this.buf.readUIntBE(this.need(3), 3);
  u32BE = (): number => this.buf.readUInt32BE(this.need(4));

  bytes(n: number): Buffer {
    const at = this.need(n);
    return this.buf.subarray(at, at + n);
  }

  /** US-ASCII text: a byte above 0x7F is U+FFFD, as Java decodes it */
  ascii = (n: number): string =>
    this.bytes(n)
      .toString('latin1')
      .replace(/[\u0080-\u00ff]/g, '\ufffd');
  utf8 = (n: number): string => this.bytes(n).toString('utf8');
  hex = (n: number): string => this.bytes(n).toString('hex');
}
