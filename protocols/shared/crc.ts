/** Checksums used by tracker protocols. Each name follows the CRC catalogue (reveng). */

/** CRC-16/ARC (a.k.a. CRC-16/IBM): poly 0x8005 reflected, init 0. Teltonika. */
export function crc16Arc(buf: Buffer, start = 0, end = buf.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc ^= buf[i];
    for (let b = 0; b < 8; b++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc & 0xffff;
}

/** CRC-16/X-25 (CRC-ITU): poly 0x1021 reflected, init 0xFFFF, xorout 0xFFFF. GT06. */
export function crc16X25(buf: Buffer, start = 0, end = buf.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) {
    crc ^= buf[i];
    for (let b = 0; b < 8; b++) crc = crc & 1 ? (crc >>> 1) ^ 0x8408 : crc >>> 1;
  }
  return ~crc & 0xffff;
}

/** CRC-16/KERMIT: poly 0x1021 reflected, init 0. Ruptela. */
export function crc16Kermit(buf: Buffer, start = 0, end = buf.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc ^= buf[i];
    for (let b = 0; b < 8; b++) crc = crc & 1 ? (crc >>> 1) ^ 0x8408 : crc >>> 1;
  }
  return crc & 0xffff;
}

/** XOR of every byte. JT/T 808. */
export function xor8(buf: Buffer, start = 0, end = buf.length): number {
  let x = 0;
  for (let i = start; i < end; i++) x ^= buf[i];
  return x;
}

/** 8-bit sum of every byte. Meitrack. */
export function sum8(buf: Buffer, start = 0, end = buf.length): number {
  let s = 0;
  for (let i = start; i < end; i++) s = (s + buf[i]) & 0xff;
  return s;
}
