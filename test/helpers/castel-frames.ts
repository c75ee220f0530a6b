/** Castel frames for tests, built field by field with a correct CRC (test/protocols/castel, test/gateway). */
import { crc16X25 } from '../../protocols/shared/crc.js';

/** an `@@` frame of `version` (a `$$` MPIP frame when undefined) around a hex body, with its CRC and CR LF */
export function castelFrame(version: number | undefined, id: string, type: number, body: string): Buffer {
  const head = Buffer.alloc(version === undefined ? 26 : 27);
  head.write(version === undefined ? '$$' : '@@', 0, 'latin1');
  let at = 4;
  if (version !== undefined) head[at++] = version;
  head.write(id, at, 'latin1');
  head.writeUInt16BE(type, at + 20);
  const f = Buffer.concat([head, Buffer.from(body, 'hex'), Buffer.alloc(4)]);
  f.writeUInt16LE(f.length, 2);
  f.writeUInt16LE(crc16X25(f, 0, f.length - 4), f.length - 4);
  f.write('\r\n', f.length - 2, 'latin1');
  return f;
}

export const u16le = (v: number): string => Buffer.from([v & 0xff, (v >> 8) & 0xff]).toString('hex');

export const u32le = (v: number): string => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b.toString('hex');
};

/** the 34-byte SC statistics block: odometer (m), trip (m), total fuel, state word */
export const castelStats = (odometer: number, trip: number, fuel: number, state: number): string =>
  u32le(0) + u32le(0) + u32le(odometer) + u32le(trip) + u32le(fuel) + u16le(0) + u32le(state) + '00'.repeat(8);

/**
 * A 19-byte GPS block at `date` (UTC, whole seconds): latitude and longitude in degrees (the sign
 * goes into the flags), speed in cm/s, course in 0.1°; flags default to valid with 9 satellites.
 */
export function castelFix(date: Date, lat: number, lon: number, cms = 0, courseTenths = 0, fixFlags = 0x94): string {
  const flags = fixFlags | (lat >= 0 ? 0x02 : 0) | (lon >= 0 ? 0x01 : 0);
  return (
    Buffer.from([
      date.getUTCDate(),
      date.getUTCMonth() + 1,
      date.getUTCFullYear() - 2000,
      date.getUTCHours(),
      date.getUTCMinutes(),
      date.getUTCSeconds(),
    ]).toString('hex') +
    u32le(Math.round(Math.abs(lat) * 3_600_000)) +
    u32le(Math.round(Math.abs(lon) * 3_600_000)) +
    u16le(cms) +
    u16le(courseTenths) +
    flags.toString(16).padStart(2, '0')
  );
}
