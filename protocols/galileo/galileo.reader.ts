import { ProtocolError } from '../types.js';
import { PROTOCOL } from './galileo.constants.js';

/**
 * A bounds-checked cursor over part of a Galileo packet. Tag values are little-endian; the
 * Iridium envelope around them is big-endian (`u16BE`, `u32BE`). Reading past the end throws a
 * ProtocolError.
 */
export class GalileoReader {
  constructor(
    private readonly frame: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number): number {
    if (this.pos + n > this.end)
      throw new ProtocolError(
        PROTOCOL,
        `truncated value at offset ${this.pos} (need ${n}, have ${this.remaining})`,
        this.frame,
      );
    const at = this.pos;
    this.pos += n;
    return at;
  }

  u8 = (): number => this.frame[this.need(1)];
  i8 = (): number => this.frame.readInt8(this.need(1));
  u16 = (): number => this.frame.readUInt16LE(this.need(2));
  i16 = (): number => this.frame.readInt16LE(this.need(2));
  u32 = (): number => this.frame.readUInt32LE(this.need(4));
  i32 = (): number => this.frame.readInt32LE(this.need(4));
  u16BE = (): number => this.frame.readUInt16BE(this.need(2));
  u32BE = (): number => this.frame.readUInt32BE(this.need(4));
  skip = (n: number): void => {
    this.need(n);
  };
  bytes = (n: number): Buffer => this.frame.subarray(this.need(n), this.pos);
  /** a reader over the next `n` bytes, advancing this one past them */
  sub = (n: number): GalileoReader => new GalileoReader(this.frame, this.need(n), this.pos);
}
