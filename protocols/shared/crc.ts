/** Checksums used by tracker protocols. Each name follows the CRC catalogue (reveng). */

/**
 * Table of a reflected CRC-16 (`poly` given reflected): the CRC of each byte value, so a byte costs
 * one lookup instead of eight shift-and-xor steps.
 */
function reflectedTable(poly: number): Uint16Array {
  const table = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let crc = n;
    for (let b = 0; b < 8; b++) crc = crc & 1 ? (crc >>> 1) ^ poly : crc >>> 1;
    table[n] = crc;
  }
  return table;
}

/** Table of a CRC-16 shifted left (MSB first), `poly` as written. */
function msbFirstTable(poly: number): Uint16Array {
  const table = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let crc = n << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ poly) & 0xffff : (crc << 1) & 0xffff;
    table[n] = crc;
  }
  return table;
}

const ARC = reflectedTable(0xa001);
const CCITT = msbFirstTable(0x1021);
const CCITT_REFLECTED = reflectedTable(0x8408);

function reflectedCrc(table: Uint16Array, init: number, buf: Buffer, start: number, end: number): number {
  let crc = init;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ table[(crc ^ buf[i]) & 0xff];
  return crc;
}

/** CRC-16/ARC (a.k.a. CRC-16/IBM): poly 0x8005 reflected, init 0. Teltonika. */
export function crc16Arc(buf: Buffer, start = 0, end = buf.length): number {
  return reflectedCrc(ARC, 0, buf, start, end) & 0xffff;
}

/** CRC-16/MODBUS: poly 0x8005 reflected, init 0xFFFF. Galileosky, Totem's old format. */
export function crc16Modbus(buf: Buffer, start = 0, end = buf.length): number {
  return reflectedCrc(ARC, 0xffff, buf, start, end) & 0xffff;
}

/** CRC-16/X-25 (CRC-ITU): poly 0x1021 reflected, init 0xFFFF, xorout 0xFFFF. GT06. */
export function crc16X25(buf: Buffer, start = 0, end = buf.length): number {
  return ~reflectedCrc(CCITT_REFLECTED, 0xffff, buf, start, end) & 0xffff;
}

/** CRC-16/KERMIT: poly 0x1021 reflected, init 0. Ruptela. */
export function crc16Kermit(buf: Buffer, start = 0, end = buf.length): number {
  return reflectedCrc(CCITT_REFLECTED, 0, buf, start, end) & 0xffff;
}

/** CRC-16/CCITT-FALSE (CRC-16/IBM-3740): poly 0x1021 MSB first, init 0xFFFF, no xorout. Meiligao. */
export function crc16CcittFalse(buf: Buffer, start = 0, end = buf.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ CCITT[((crc >>> 8) ^ buf[i]) & 0xff];
  return crc;
}

/** CRC-16/XMODEM: poly 0x1021 not reflected, init 0. MiniFinder2. */
export function crc16Xmodem(buf: Buffer, start = 0, end = buf.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ CCITT[((crc >>> 8) ^ buf[i]) & 0xff];
  return crc;
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

/** CRC-8 table of a non-reflected polynomial: the CRC of each byte value. */
function normalTable8(poly: number): Uint8Array {
  const table = new Uint8Array(256);
  for (let n = 0; n < 256; n++) {
    let crc = n;
    for (let b = 0; b < 8; b++) crc = crc & 0x80 ? ((crc << 1) ^ poly) & 0xff : (crc << 1) & 0xff;
    table[n] = crc;
  }
  return table;
}

const EGTS8 = normalTable8(0x31);

/** CRC-8 as EGTS and Navtelecom FLEX use it: poly 0x31, init 0xFF, not reflected, no final xor. */
export function crc8Egts(buf: Buffer, start = 0, end = buf.length): number {
  let crc = 0xff;
  for (let i = start; i < end; i++) crc = EGTS8[crc ^ buf[i]];
  return crc;
}
