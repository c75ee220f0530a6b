/** Builds real tracker frames for gateway tests and benchmarks (checked against our decoders). */
import { crc16Arc, crc16X25 } from '../../protocols/shared/crc.js';

export interface Fix {
  time: Date;
  lat: number;
  lon: number;
  speedKmh?: number;
  course?: number;
}

/** Teltonika TCP login: `00 0F` + IMEI digits. */
export const teltonikaLogin = (imei: string): Buffer => Buffer.concat([Buffer.from([0, imei.length]), Buffer.from(imei, 'ascii')]);

/** Teltonika Codec 8 AVL frame with one record per fix (no IO elements but ignition). */
export function teltonikaAvl(fixes: Fix[]): Buffer {
  const records = fixes.map((f) => {
    const r = Buffer.alloc(8 + 1 + 4 + 4 + 2 + 2 + 1 + 2 + 8);
    let o = r.writeBigUInt64BE(BigInt(f.time.getTime()), 0);
    o = r.writeUInt8(0, o);
    o = r.writeInt32BE(Math.round(f.lon * 1e7), o);
    o = r.writeInt32BE(Math.round(f.lat * 1e7), o);
    o = r.writeInt16BE(100, o);
    o = r.writeUInt16BE(f.course ?? 0, o);
    o = r.writeUInt8(9, o);
    o = r.writeUInt16BE(Math.round(f.speedKmh ?? 0), o);
    // IO: event id 0, total 1, one 1-byte element (239 ignition = 1), no 2/4/8-byte elements
    Buffer.from([0, 1, 1, 239, 1, 0, 0, 0]).copy(r, o);
    return r;
  });
  const data = Buffer.concat([Buffer.from([0x08, fixes.length]), ...records, Buffer.from([fixes.length])]);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 4);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc16Arc(data), 0);
  return Buffer.concat([head, data, crc]);
}

function gt06Frame(protocol: number, content: Buffer, serial: number): Buffer {
  const len = 1 + content.length + 2 + 2;
  const body = Buffer.concat([Buffer.from([len, protocol]), content, Buffer.from([serial >> 8, serial & 0xff])]);
  const crc = crc16X25(body);
  return Buffer.concat([Buffer.from([0x78, 0x78]), body, Buffer.from([crc >> 8, crc & 0xff, 0x0d, 0x0a])]);
}

/** GT06 login 0x01: IMEI as 8 BCD bytes with a leading 0 nibble. */
export const gt06Login = (imei: string, serial = 1): Buffer => gt06Frame(0x01, Buffer.from(imei.padStart(16, '0'), 'hex'), serial);

function gt06Gps(f: Fix): Buffer {
  const t = f.time;
  const b = Buffer.alloc(18);
  b.set([t.getUTCFullYear() - 2000, t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()], 0);
  b.writeUInt8(0xc9, 6); // 12 bytes of GPS info, 9 satellites
  b.writeUInt32BE(Math.round(Math.abs(f.lat) * 1_800_000), 7);
  b.writeUInt32BE(Math.round(Math.abs(f.lon) * 1_800_000), 11);
  b.writeUInt8(Math.round(f.speedKmh ?? 0), 15);
  // course bits 0-9, bit 10 north, bit 11 west, bit 12 GPS fixed
  const courseStatus = (Math.round(f.course ?? 0) & 0x3ff) | (f.lat >= 0 ? 0x400 : 0) | (f.lon < 0 ? 0x800 : 0) | 0x1000;
  b.writeUInt16BE(courseStatus, 16);
  return b;
}

const LBS = Buffer.from([0x01, 0xcc, 0x00, 0x28, 0x7d, 0x00, 0x1f, 0x72]); // MCC 460, MNC 0, LAC, cell

/** GT06 0x22 GPS + LBS + ACC/upload mode/re-upload. */
export const gt06Position = (f: Fix, serial: number): Buffer => gt06Frame(0x22, Buffer.concat([gt06Gps(f), LBS, Buffer.from([1, 0, 0])]), serial);

/** GT06 0x16 alarm: GPS + LBS (length-prefixed) + status with alarm byte (0x01 SOS). */
export const gt06Alarm = (f: Fix, serial: number, alarm = 0x01): Buffer =>
  gt06Frame(0x16, Buffer.concat([gt06Gps(f), Buffer.from([LBS.length + 1]), LBS, Buffer.from([0x46, 0x06, 0x04, alarm, 0x01])]), serial);

/** GT06 0x13 heartbeat: terminal info, voltage level, GSM signal, alarm, language. */
export const gt06Heartbeat = (serial: number): Buffer => gt06Frame(0x13, Buffer.from([0x46, 0x06, 0x04, 0x00, 0x02]), serial);

/** The GT06 general acknowledgement the server must send for a frame of `protocol` with `serial`. */
export function gt06Ack(protocol: number, serial: number): Buffer {
  const body = Buffer.from([0x05, protocol, serial >> 8, serial & 0xff]);
  const crc = crc16X25(body);
  return Buffer.concat([Buffer.from([0x78, 0x78]), body, Buffer.from([crc >> 8, crc & 0xff, 0x0d, 0x0a])]);
}
