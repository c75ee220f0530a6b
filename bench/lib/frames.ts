/**
 * Pre-encoded tracker frames for the load generators: Teltonika Codec 8 and GT06 0x22, each with a
 * correct CRC and a unique fix time per record, so every record becomes one stored row
 * (rows are keyed by device + fix time). Frames of one protocol all have the same length, so one
 * Buffer per connection holds all of them back to back.
 */
import { crc16Arc, crc16X25 } from '../../protocols/shared/crc.js';

/** Fix times start here (well in the past: the ingest path refuses fixes > 25 h ahead). */
export const BASE_FIX_MS = Date.UTC(2025, 0, 1);

/** 15-digit IMEIs: Teltonika devices 35…, GT06 devices 86… (index up to 10^9). */
export const teltonikaImei = (i: number): string => `35${String(i).padStart(13, '0')}`;
export const gt06Imei = (i: number): string => `86${String(i).padStart(13, '0')}`;

/** Teltonika TCP login: `00 0F` + 15 ASCII digits; the server answers `01`. */
export function teltonikaLogin(imei: string): Buffer {
  return Buffer.concat([Buffer.from([0, imei.length]), Buffer.from(imei, 'ascii')]);
}

// IO elements of every record: 1-byte 239 ignition, 240 movement, 21 GSM signal; 2-byte 66 external
// voltage, 67 battery voltage; 4-byte 16 total odometer; no 8-byte elements.
const IO = Buffer.from([
  0, 6, // event IO id, total IO count
  3, 239, 1, 240, 1, 21, 4,
  2, 66, 0x30, 0xd4, 67, 0x0f, 0xa0,
  1, 16, 0x00, 0x01, 0xe2, 0x40,
  0,
]);
const RECORD_BYTES = 8 + 1 + 4 + 4 + 2 + 2 + 1 + 2 + IO.length;

export function teltonikaFrameBytes(records: number): number {
  return 8 + 3 + records * RECORD_BYTES + 4;
}

/**
 * Codec 8 AVL frame `00000000 | u32 len | 08 N records N | u32 crc` whose records have fix times
 * `firstFixMs + k * stepMs`; the server acknowledges it with the u32 record count.
 */
export function teltonikaAvl(records: number, firstFixMs: number, stepMs: number, seed: number): Buffer {
  const f = Buffer.alloc(teltonikaFrameBytes(records));
  f.writeUInt32BE(0, 0);
  f.writeUInt32BE(3 + records * RECORD_BYTES, 4);
  let o = 8;
  f[o++] = 0x08;
  f[o++] = records;
  for (let k = 0; k < records; k++) {
    o = f.writeBigUInt64BE(BigInt(firstFixMs + k * stepMs), o);
    f[o++] = 0; // priority
    o = f.writeInt32BE(Math.round((-3.7038 + ((seed + k) % 1000) * 1e-4) * 1e7), o); // longitude
    o = f.writeInt32BE(Math.round((40.4168 + ((seed * 7 + k) % 1000) * 1e-4) * 1e7), o); // latitude
    o = f.writeInt16BE(650, o); // altitude
    o = f.writeUInt16BE((seed + k * 13) % 360, o); // course
    f[o++] = 9; // satellites
    o = f.writeUInt16BE(30 + ((seed + k) % 60), o); // speed km/h
    o += IO.copy(f, o);
  }
  f[o++] = records;
  f.writeUInt32BE(crc16Arc(f, 8, o), o);
  return f;
}

function gt06Frame(protocol: number, content: Buffer, serial: number): Buffer {
  const f = Buffer.alloc(2 + 1 + 1 + content.length + 2 + 2 + 2);
  f[0] = 0x78;
  f[1] = 0x78;
  f[2] = 1 + content.length + 2 + 2;
  f[3] = protocol;
  content.copy(f, 4);
  f.writeUInt16BE(serial & 0xffff, 4 + content.length);
  f.writeUInt16BE(crc16X25(f, 2, 6 + content.length), 6 + content.length);
  f[f.length - 2] = 0x0d;
  f[f.length - 1] = 0x0a;
  return f;
}

/** GT06 login 0x01: IMEI as 8 BCD bytes with a leading 0 nibble; the server answers with a 10-byte ack. */
export function gt06Login(imei: string): Buffer {
  return gt06Frame(0x01, Buffer.from(imei.padStart(16, '0'), 'hex'), 1);
}

const LBS_TAIL = Buffer.from([0x01, 0xcc, 0x00, 0x28, 0x7d, 0x00, 0x1f, 0x72, 0x01, 0x00, 0x00]); // MCC 460 …, ACC, upload mode, re-upload

/** GT06 0x22 GPS + LBS frame with fix time `fixMs` (UTC, whole seconds); acknowledged with 10 bytes. */
export function gt06Position(fixMs: number, serial: number, seed: number): Buffer {
  const t = new Date(fixMs);
  const gps = Buffer.alloc(18);
  gps.set([t.getUTCFullYear() - 2000, t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()], 0);
  gps[6] = 0xc9; // 12 bytes of GPS info, 9 satellites
  gps.writeUInt32BE(Math.round((40.4168 + (seed % 1000) * 1e-4) * 1_800_000), 7);
  gps.writeUInt32BE(Math.round((3.7038 + ((seed * 7) % 1000) * 1e-4) * 1_800_000), 11);
  gps[15] = 30 + (seed % 60);
  gps.writeUInt16BE(((seed * 13) % 360) | 0x0400 | 0x0800 | 0x1000, 16); // course, north, west, fixed
  return gt06Frame(0x22, Buffer.concat([gps, LBS_TAIL]), serial);
}

export const GT06_POSITION_BYTES = gt06Position(BASE_FIX_MS, 0, 0).length;
export const GT06_ACK_BYTES = 10;

export interface FramePlan {
  protocol: 'teltonika' | 'gt06';
  /** index of the device among its protocol's devices (its IMEI) */
  index: number;
  frames: number;
  /** Teltonika records per AVL frame (GT06: always 1) */
  recordsPerFrame: number;
}

/**
 * Frame `i` of one connection. Fix times are unique per device: Teltonika record k of frame i at
 * BASE + (i * N + k) s, GT06 frame i at BASE + i s.
 */
export function encodeFrame(p: FramePlan, i: number): Buffer {
  if (p.protocol === 'teltonika') return teltonikaAvl(p.recordsPerFrame, BASE_FIX_MS + i * p.recordsPerFrame * 1000, 1000, p.index + i);
  return gt06Position(BASE_FIX_MS + i * 1000, i + 2, p.index + i);
}

/** All frames of one connection, back to back (every frame of a protocol has the same length). */
export function encodeFrames(p: FramePlan): { bytes: Buffer; frameBytes: number } {
  const frameBytes = p.protocol === 'teltonika' ? teltonikaFrameBytes(p.recordsPerFrame) : GT06_POSITION_BYTES;
  const bytes = Buffer.alloc(frameBytes * p.frames);
  for (let i = 0; i < p.frames; i++) encodeFrame(p, i).copy(bytes, i * frameBytes);
  return { bytes, frameBytes };
}
