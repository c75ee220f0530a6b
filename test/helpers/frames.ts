/** Builds real tracker frames for gateway tests and benchmarks (checked against our decoders). */
import { crc16Arc, crc16X25, xor8 } from '../../protocols/shared/crc.js';
import { escapeFrame } from '../../protocols/jt808/jt808.frame.js';

export interface Fix {
  time: Date;
  lat: number;
  lon: number;
  speedKmh?: number;
  course?: number;
}

/** Teltonika TCP login: `00 0F` + IMEI digits. */
export const teltonikaLogin = (imei: string): Buffer =>
  Buffer.concat([Buffer.from([0, imei.length]), Buffer.from(imei, 'ascii')]);

/**
 * Teltonika Codec 8 AVL data (codec .. N2) with one record per fix. IO elements: 239 ignition = 1
 * and any 1-byte elements of `io` (id -> value), no 2/4/8-byte elements.
 */
export function teltonikaAvlData(fixes: Fix[], io: Record<number, number> = {}): Buffer {
  const elements = [[239, 1], ...Object.entries(io).map(([id, value]) => [Number(id), value])];
  const records = fixes.map((f) => {
    const r = Buffer.alloc(8 + 1 + 4 + 4 + 2 + 2 + 1 + 2);
    let o = r.writeBigUInt64BE(BigInt(f.time.getTime()), 0);
    o = r.writeUInt8(0, o);
    o = r.writeInt32BE(Math.round(f.lon * 1e7), o);
    o = r.writeInt32BE(Math.round(f.lat * 1e7), o);
    o = r.writeInt16BE(100, o);
    o = r.writeUInt16BE(f.course ?? 0, o);
    o = r.writeUInt8(9, o);
    r.writeUInt16BE(Math.round(f.speedKmh ?? 0), o);
    // IO: event id 0, total, the 1-byte elements, then no 2-, 4- or 8-byte elements
    return Buffer.concat([r, Buffer.from([0, elements.length, elements.length, ...elements.flat(), 0, 0, 0])]);
  });
  return Buffer.concat([Buffer.from([0x08, fixes.length]), ...records, Buffer.from([fixes.length])]);
}

/** Teltonika TCP AVL frame: `00000000 | u32 length | data | u32 CRC-16/IBM`. */
export function teltonikaFrame(data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 4);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc16Arc(data), 0);
  return Buffer.concat([head, data, crc]);
}

/** Teltonika Codec 8 AVL frame with one record per fix (IO: ignition, and `io`'s 1-byte elements). */
export const teltonikaAvl = (fixes: Fix[], io: Record<number, number> = {}): Buffer =>
  teltonikaFrame(teltonikaAvlData(fixes, io));

/** Teltonika UDP datagram: `u16 length | packet id | type 01 | AVL packet id | u16 IMEI length | IMEI | data`. */
export function teltonikaUdp(imei: string, avlPacketId: number, data: Buffer): Buffer {
  const id = Buffer.from(imei, 'ascii');
  const body = Buffer.concat([Buffer.from([0xca, 0xfe, 0x01, avlPacketId, 0x00, id.length]), id, data]);
  return Buffer.concat([Buffer.from([body.length >> 8, body.length & 0xff]), body]);
}

/** A Teltonika UDP datagram of one record per fix. */
export const teltonikaDatagram = (
  imei: string,
  avlPacketId: number,
  fixes: Fix[],
  io: Record<number, number> = {},
): Buffer => teltonikaUdp(imei, avlPacketId, teltonikaAvlData(fixes, io));

/** The data of a device's Codec 12 answer: `0C | 01 | type 06 | u32 length | text | 01` (Teltonika wiki, Codec 12). */
export function teltonikaAnswerData(text: string): Buffer {
  const body = Buffer.from(text, 'latin1');
  const head = Buffer.from([0x0c, 0x01, 0x06, 0, 0, 0, 0]);
  head.writeUInt32BE(body.length, 3);
  return Buffer.concat([head, body, Buffer.from([0x01])]);
}

/** A device's Codec 12 answer as a TCP frame. */
export const teltonikaAnswer = (text: string): Buffer => teltonikaFrame(teltonikaAnswerData(text));

/** A 0x7878 GT06 frame of `protocol` around `content`, with its serial and CRC-ITU. */
export function gt06Frame(protocol: number, content: Buffer, serial: number): Buffer {
  const len = 1 + content.length + 2 + 2;
  const body = Buffer.concat([Buffer.from([len, protocol]), content, Buffer.from([serial >> 8, serial & 0xff])]);
  const crc = crc16X25(body);
  return Buffer.concat([Buffer.from([0x78, 0x78]), body, Buffer.from([crc >> 8, crc & 0xff, 0x0d, 0x0a])]);
}

/** A GT06 0x15 answer to a server command: command length, the echoed server flag, text, language 0x0002 (English). */
export function gt06CommandAnswer(serverFlag: number, text: string, serial = 7): Buffer {
  const body = Buffer.alloc(1 + 4 + text.length + 2);
  body[0] = 4 + text.length;
  body.writeUInt32BE(serverFlag, 1);
  body.write(text, 5, 'latin1');
  body.writeUInt16BE(2, 5 + text.length);
  return gt06Frame(0x15, body, serial);
}

/** GT06 login 0x01: IMEI as 8 BCD bytes with a leading 0 nibble. */
export const gt06Login = (imei: string, serial = 1): Buffer =>
  gt06Frame(0x01, Buffer.from(imei.padStart(16, '0'), 'hex'), serial);

function gt06Gps(f: Fix): Buffer {
  const t = f.time;
  const b = Buffer.alloc(18);
  b.set(
    [
      t.getUTCFullYear() - 2000,
      t.getUTCMonth() + 1,
      t.getUTCDate(),
      t.getUTCHours(),
      t.getUTCMinutes(),
      t.getUTCSeconds(),
    ],
    0,
  );
  b.writeUInt8(0xc9, 6); // 12 bytes of GPS info, 9 satellites
  b.writeUInt32BE(Math.round(Math.abs(f.lat) * 1_800_000), 7);
  b.writeUInt32BE(Math.round(Math.abs(f.lon) * 1_800_000), 11);
  b.writeUInt8(Math.round(f.speedKmh ?? 0), 15);
  // course bits 0-9, bit 10 north, bit 11 west, bit 12 GPS fixed
  const courseStatus =
    (Math.round(f.course ?? 0) & 0x3ff) | (f.lat >= 0 ? 0x400 : 0) | (f.lon < 0 ? 0x800 : 0) | 0x1000;
  b.writeUInt16BE(courseStatus, 16);
  return b;
}

const LBS = Buffer.from([0x01, 0xcc, 0x00, 0x28, 0x7d, 0x00, 0x1f, 0x72]); // MCC 460, MNC 0, LAC, cell

/** GT06 0x22 GPS + LBS + ACC/upload mode/re-upload. */
export const gt06Position = (f: Fix, serial: number): Buffer =>
  gt06Frame(0x22, Buffer.concat([gt06Gps(f), LBS, Buffer.from([1, 0, 0])]), serial);

/** GT06 0x16 alarm: GPS + LBS (length-prefixed) + status with alarm byte (0x01 SOS). */
export const gt06Alarm = (f: Fix, serial: number, alarm = 0x01): Buffer =>
  gt06Frame(
    0x16,
    Buffer.concat([gt06Gps(f), Buffer.from([LBS.length + 1]), LBS, Buffer.from([0x46, 0x06, 0x04, alarm, 0x01])]),
    serial,
  );

/** GT06 0x13 heartbeat: terminal info, voltage level, GSM signal, alarm, language. */
export const gt06Heartbeat = (serial: number): Buffer =>
  gt06Frame(0x13, Buffer.from([0x46, 0x06, 0x04, 0x00, 0x02]), serial);

/** The GT06 general acknowledgement the server must send for a frame of `protocol` with `serial`. */
export function gt06Ack(protocol: number, serial: number): Buffer {
  const body = Buffer.from([0x05, protocol, serial >> 8, serial & 0xff]);
  const crc = crc16X25(body);
  return Buffer.concat([Buffer.from([0x78, 0x78]), body, Buffer.from([crc >> 8, crc & 0xff, 0x0d, 0x0a])]);
}

const bcd = (digits: string): Buffer => Buffer.from(digits, 'hex');
const two = (n: number): string => String(n).padStart(2, '0');

/**
 * JT/T 808 (2013) location report 0x0200, escaped and delimited: alarm DWORD, status (fixed,
 * hemispheres), coordinates, speed, course and the time in GMT+8, as the devices keep it, then
 * `extras` (additional information items, `id u8 | length u8 | value`) as given.
 */
export function jt808Location(terminalId: string, f: Fix, serial: number, alarm = 0, extras = Buffer.alloc(0)): Buffer {
  const beijing = new Date(f.time.getTime() + 8 * 3600_000);
  const body = Buffer.alloc(28);
  body.writeUInt32BE(alarm, 0);
  body.writeUInt32BE(0x02 | (f.lat < 0 ? 0x04 : 0) | (f.lon < 0 ? 0x08 : 0), 4); // bit 1 fixed, 2 south, 3 west
  body.writeUInt32BE(Math.round(Math.abs(f.lat) * 1e6), 8);
  body.writeUInt32BE(Math.round(Math.abs(f.lon) * 1e6), 12);
  body.writeUInt16BE(0, 16); // altitude m
  body.writeUInt16BE(Math.round((f.speedKmh ?? 0) * 10), 18); // 0.1 km/h
  body.writeUInt16BE(Math.round(f.course ?? 0), 20);
  bcd(
    two(beijing.getUTCFullYear() % 100) +
      two(beijing.getUTCMonth() + 1) +
      two(beijing.getUTCDate()) +
      two(beijing.getUTCHours()) +
      two(beijing.getUTCMinutes()) +
      two(beijing.getUTCSeconds()),
  ).copy(body, 22);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(0x0200, 0);
  header.writeUInt16BE(body.length + extras.length, 2);
  bcd(terminalId.padStart(12, '0')).copy(header, 4);
  header.writeUInt16BE(serial, 10);
  const content = Buffer.concat([header, body, extras]);
  return escapeFrame(
    Buffer.concat([Buffer.from([0x7e]), content, Buffer.from([xor8(content, 0, content.length), 0x7e])]),
  );
}
