/**
 * Packed BCD (two decimal digits per byte, high nibble first), addressed by nibble so that fields
 * which start or end in the middle of a byte (H02 longitude, speed/course) read naturally.
 */

/** the nibble at index `n` (0 = high nibble of buf[0]) */
export function nibbleAt(buf: Buffer, n: number): number {
  const b = buf[n >> 1];
  return n & 1 ? b & 0x0f : b >> 4;
}

/**
 * The decimal value of `count` BCD nibbles starting at nibble `first`.
 * Returns NaN when a nibble is not 0-9 or the range runs past the buffer.
 */
export function bcdNibbles(buf: Buffer, first: number, count: number): number {
  if (first < 0 || count < 0 || (first + count + 1) >> 1 > buf.length) return NaN;
  let value = 0;
  for (let n = first; n < first + count; n++) {
    const d = nibbleAt(buf, n);
    if (d > 9) return NaN;
    value = value * 10 + d;
  }
  return value;
}

/** The decimal value of `bytes` whole BCD bytes starting at byte `offset` (NaN when not BCD). */
export function bcdBytes(buf: Buffer, offset: number, bytes: number): number {
  return bcdNibbles(buf, offset * 2, bytes * 2);
}
