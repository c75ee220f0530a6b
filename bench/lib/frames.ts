/**
 * Pre-encoded tracker frames for the load generators: Teltonika Codec 8, GT06 0x22, Queclink
 * (gl200) +RESP:GTFRI text, Ruptela records, Wialon IPS `#D#` text and Navtelecom FLEX `~A` arrays, each with a correct checksum and a unique fix time
 * per record, so every record becomes one stored row (rows are keyed by device + fix time). Frames
 * of one protocol all have the same length, so one Buffer per connection holds all of them back to
 * back. Every frame is acknowledged by the server with an ack the generator knows in advance
 * (`expectedAck`).
 */
import { crc16Arc, crc16Kermit, crc16X25, crc8Egts } from '../../protocols/shared/crc.js';

/** Fix times start here (well in the past: the ingest path refuses fixes > 25 h ahead). */
export const BASE_FIX_MS = Date.UTC(2025, 0, 1);

/** 15-digit IMEIs: Teltonika devices 35…, GT06 devices 86… (index up to 10^9). */
export const teltonikaImei = (i: number): string => `35${String(i).padStart(13, '0')}`;
export const gt06Imei = (i: number): string => `86${String(i).padStart(13, '0')}`;
/** Queclink devices 87…, Ruptela devices 88… */
export const gl200Imei = (i: number): string => `87${String(i).padStart(13, '0')}`;
export const ruptelaImei = (i: number): string => `88${String(i).padStart(13, '0')}`;
/** Wialon IPS devices 89…, Navtelecom devices 84… */
export const wialonImei = (i: number): string => `89${String(i).padStart(13, '0')}`;
export const navisImei = (i: number): string => `84${String(i).padStart(13, '0')}`;

export type BenchProtocol = 'teltonika' | 'gt06' | 'gl200' | 'ruptela' | 'wialon' | 'navis';
export const BENCH_PROTOCOLS: readonly BenchProtocol[] = ['teltonika', 'gt06', 'gl200', 'ruptela', 'wialon', 'navis'];

const IMEI_PREFIX: Record<BenchProtocol, string> = {
  teltonika: '35',
  gt06: '86',
  gl200: '87',
  ruptela: '88',
  wialon: '89',
  navis: '84',
};
export const imeiOf = (protocol: BenchProtocol, index: number): string =>
  `${IMEI_PREFIX[protocol]}${String(index).padStart(13, '0')}`;

/** Teltonika TCP login: `00 0F` + 15 ASCII digits; the server answers `01`. */
export function teltonikaLogin(imei: string): Buffer {
  return Buffer.concat([Buffer.from([0, imei.length]), Buffer.from(imei, 'ascii')]);
}

// IO elements of every record: 1-byte 239 ignition, 240 movement, 21 GSM signal; 2-byte 66 external
// voltage, 67 battery voltage; 4-byte 16 total odometer; no 8-byte elements.
const IO = Buffer.from([
  0,
  6, // event IO id, total IO count
  3,
  239,
  1,
  240,
  1,
  21,
  4,
  2,
  66,
  0x30,
  0xd4,
  67,
  0x0f,
  0xa0,
  1,
  16,
  0x00,
  0x01,
  0xe2,
  0x40,
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
  gps.set(
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
  gps[6] = 0xc9; // 12 bytes of GPS info, 9 satellites
  gps.writeUInt32BE(Math.round((40.4168 + (seed % 1000) * 1e-4) * 1_800_000), 7);
  gps.writeUInt32BE(Math.round((3.7038 + ((seed * 7) % 1000) * 1e-4) * 1_800_000), 11);
  gps[15] = 30 + (seed % 60);
  gps.writeUInt16BE(((seed * 13) % 360) | 0x0400 | 0x0800 | 0x1000, 16); // course, north, west, fixed
  return gt06Frame(0x22, Buffer.concat([gps, LBS_TAIL]), serial);
}

export const GT06_POSITION_BYTES = gt06Position(BASE_FIX_MS, 0, 0).length;
export const GT06_ACK_BYTES = 10;

// --- Queclink (gl200) text -------------------------------------------------------------------

/** protocol version `020102`: device type 02 (GL200), as in Queclink's own examples */
const GL200_VERSION = '020102';
const hex4 = (n: number): string => (n & 0xffff).toString(16).toUpperCase().padStart(4, '0');
/** `yyyyMMddHHmmss` UTC */
const gl200Time = (ms: number): string => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);

/** The heartbeat `+ACK:GTHBD` identifies the device; the server answers `+SACK:GTHBD,<version>,<count>$`. */
export function gl200Login(imei: string): Buffer {
  return Buffer.from(`+ACK:GTHBD,${GL200_VERSION},${imei},,${gl200Time(BASE_FIX_MS)},0000$`, 'latin1');
}
export const GL200_LOGIN_ACK = Buffer.from(`+SACK:GTHBD,${GL200_VERSION},0000$`, 'latin1');

/**
 * `+RESP:GTFRI` with one location block (what a GL200 sends at its default settings): fields of
 * fixed width, so every frame has the same length; acknowledged `+SACK:<count>$`.
 */
export function gl200Fri(fixMs: number, count: number, seed: number, imei: string): Buffer {
  const speed = `${30 + (seed % 60)}.0`;
  const azimuth = String(100 + ((seed * 13) % 200));
  const lon = (-3.7038 + (seed % 1000) * 1e-4).toFixed(6);
  const lat = (40.4168 + ((seed * 7) % 1000) * 1e-4).toFixed(6);
  const block = `1,${speed},${azimuth},650.0,${lon},${lat},${gl200Time(fixMs)},0214,0007,18D8,6141,00`;
  return Buffer.from(
    `+RESP:GTFRI,${GL200_VERSION},${imei},,0,0,1,${block},,${gl200Time(fixMs)},${hex4(count)}$`,
    'latin1',
  );
}

// --- Ruptela ---------------------------------------------------------------------------------

/** `u16 length | u64 IMEI | u8 command | payload | CRC-16/KERMIT of IMEI..payload` */
function ruptelaPacket(imei: string, command: number, payload: Buffer): Buffer {
  const f = Buffer.alloc(2 + 9 + payload.length + 2);
  f.writeUInt16BE(9 + payload.length, 0);
  f.writeBigUInt64BE(BigInt(imei), 2);
  f[10] = command;
  payload.copy(f, 11);
  f.writeUInt16BE(crc16Kermit(f, 2, 11 + payload.length), 11 + payload.length);
  return f;
}

/** Identification (command 15), answered `0002 73 01 cb25`. */
export const ruptelaLogin = (imei: string): Buffer => ruptelaPacket(imei, 15, Buffer.from([0x01, 0x02]));
export const RUPTELA_LOGIN_ACK = Buffer.from('00027301cb25', 'hex');
/** Records (command 1) are answered with the fixed `0002 64 01 13bc`. */
export const RUPTELA_RECORDS_ACK = Buffer.from('0002640113bc', 'hex');

// IO groups of every record: 1-byte 2 in1, 13 motion; 2-byte 29 power (mV), 30 battery (mV); 4-byte 65 odometer; no 8-byte
const RUPTELA_IO = Buffer.from([2, 2, 1, 13, 1, 2, 29, 0x30, 0xd4, 30, 0x0f, 0xa0, 1, 65, 0x00, 0x01, 0xe2, 0x40, 0]);
const RUPTELA_RECORD_BYTES = 4 + 1 + 1 + 4 + 4 + 2 + 2 + 1 + 2 + 1 + 1 + RUPTELA_IO.length;

/** Command 1 with `records` records at `firstFixMs + k * stepMs` (whole seconds). */
export function ruptelaRecords(
  records: number,
  firstFixMs: number,
  stepMs: number,
  seed: number,
  imei: string,
): Buffer {
  const payload = Buffer.alloc(2 + records * RUPTELA_RECORD_BYTES);
  payload[0] = 0; // records left
  payload[1] = records;
  let o = 2;
  for (let k = 0; k < records; k++) {
    o = payload.writeUInt32BE((firstFixMs + k * stepMs) / 1000, o);
    payload[o++] = 0; // timestamp extension
    payload[o++] = 0; // priority
    o = payload.writeInt32BE(Math.round((-3.7038 + ((seed + k) % 1000) * 1e-4) * 1e7), o);
    o = payload.writeInt32BE(Math.round((40.4168 + ((seed * 7 + k) % 1000) * 1e-4) * 1e7), o);
    o = payload.writeUInt16BE(6500, o); // 650.0 m
    o = payload.writeUInt16BE(((seed + k * 13) % 360) * 100, o); // course ×0.01
    payload[o++] = 9; // satellites
    o = payload.writeUInt16BE(30 + ((seed + k) % 60), o); // km/h
    payload[o++] = 8; // hdop 0.8
    payload[o++] = 5; // event
    o += RUPTELA_IO.copy(payload, o);
  }
  return ruptelaPacket(imei, 1, payload);
}

// --- Wialon IPS ------------------------------------------------------------------------------

/** IPS 1.1 login `#L#<imei>;NA`, answered `#AL#1`. */
export const wialonLogin = (imei: string): Buffer => Buffer.from(`#L#${imei};NA\r\n`, 'latin1');
export const WIALON_LOGIN_ACK = Buffer.from('#AL#1\r\n', 'latin1');
export const WIALON_DATA_ACK = Buffer.from('#AD#1\r\n', 'latin1');

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * Extended data `#D#` with fix time `fixMs` (UTC, whole seconds), as a tracker sends it at its
 * default settings: fields of fixed width, so every frame has the same length; answered `#AD#1`.
 */
export function wialonData(fixMs: number, seed: number): Buffer {
  const t = new Date(fixMs);
  const date = `${two(t.getUTCDate())}${two(t.getUTCMonth() + 1)}${two(t.getUTCFullYear() % 100)}`;
  const time = `${two(t.getUTCHours())}${two(t.getUTCMinutes())}${two(t.getUTCSeconds())}`;
  const lat = `40${(25 + (seed % 1000) * 0.006).toFixed(4).padStart(7, '0')}`;
  const lon = `003${(42 + ((seed * 7) % 1000) * 0.006).toFixed(4).padStart(7, '0')}`;
  const speed = String(30 + (seed % 60)).padStart(3, '0');
  const course = String((seed * 13) % 360).padStart(3, '0');
  return Buffer.from(
    `#D#${date};${time};${lat};N;${lon};W;${speed};${course};650;9;1.0;0;0;;NA;pwr_ext:2:12.50,gsm:1:4\r\n`,
    'latin1',
  );
}

// --- Navtelecom FLEX --------------------------------------------------------------------------

/** NTCB envelope: `@NTC`, receiver, sender (u32 LE), body length (u16 LE), XOR of the body, XOR of the header. */
function ntcb(receiver: number, sender: number, body: Buffer): Buffer {
  const f = Buffer.alloc(16 + body.length);
  f.write('@NTC', 0, 'latin1');
  f.writeUInt32LE(receiver, 4);
  f.writeUInt32LE(sender, 8);
  f.writeUInt16LE(body.length, 12);
  f[14] = xor(body, 0, body.length);
  f[15] = xor(f, 0, 15);
  body.copy(f, 16);
  return f;
}
const xor = (b: Buffer, start: number, end: number): number => {
  let x = 0;
  for (let i = start; i < end; i++) x ^= b[i];
  return x;
};

/** FLEX 1.0 with the first 14 fields: index, event, device time, status x3, GSM, navigation, fix time, lat, lon, altitude, speed, course. */
const NAVIS_FIELDS = 14;
const NAVIS_BITFIELD = Buffer.from([0xff, 0xfc]);
const NAVIS_RECORD_BYTES = 4 + 2 + 4 + 1 + 1 + 1 + 1 + 1 + 4 + 4 + 4 + 4 + 4 + 2;
const NAVIS_SERVER = 1;
const NAVIS_DEVICE = 0;

/** `*>S:<imei>` then the `*>FLEX` negotiation, answered `*<S` and `*<FLEX` (NTCB, ids swapped). */
export function navisLogin(imei: string): Buffer {
  const flex = Buffer.concat([
    Buffer.from('*>FLEX', 'latin1'),
    Buffer.from([0xb0, 10, 10, NAVIS_FIELDS]),
    NAVIS_BITFIELD,
  ]);
  return Buffer.concat([
    ntcb(NAVIS_SERVER, NAVIS_DEVICE, Buffer.from(`*>S:${imei}`, 'latin1')),
    ntcb(NAVIS_SERVER, NAVIS_DEVICE, flex),
  ]);
}
export const NAVIS_LOGIN_ACK = Buffer.concat([
  ntcb(NAVIS_DEVICE, NAVIS_SERVER, Buffer.from('*<S', 'latin1')),
  ntcb(NAVIS_DEVICE, NAVIS_SERVER, Buffer.concat([Buffer.from('*<FLEX', 'latin1'), Buffer.from([0xb0, 10, 10])])),
]);

/** A `~A` array of `records` FLEX records at `firstFixMs + k * stepMs` (whole seconds), ended by CRC-8/EGTS. */
export function navisArray(records: number, firstFixMs: number, stepMs: number, seed: number): Buffer {
  const f = Buffer.alloc(3 + records * NAVIS_RECORD_BYTES + 1);
  f.write('~A', 0, 'latin1');
  f[2] = records;
  for (let k = 0; k < records; k++) {
    let o = 3 + k * NAVIS_RECORD_BYTES;
    const s = Math.floor((firstFixMs + k * stepMs) / 1000);
    const r = seed + k;
    o = f.writeUInt32LE(s & 0xffffffff, o); // index
    o = f.writeUInt16LE(0, o); // event
    o = f.writeUInt32LE(s, o); // device time
    o += 3; // armed, status, status 2
    f[o++] = 20; // GSM level
    f[o++] = (9 << 2) | 0x02; // 9 satellites, valid
    o = f.writeUInt32LE(s, o); // fix time
    o = f.writeInt32LE(Math.round((40.4168 + (r % 1000) * 1e-4) * 600_000), o);
    o = f.writeInt32LE(Math.round((-3.7038 + ((r * 7) % 1000) * 1e-4) * 600_000), o);
    o = f.writeInt32LE(6500, o); // 650.0 m
    o = f.writeFloatLE(30 + (r % 60), o); // km/h
    f.writeUInt16LE((r * 13) % 360, o);
  }
  f[f.length - 1] = crc8Egts(f, 0, f.length - 1);
  return f;
}

/** `~A` + the record count + CRC-8/EGTS. */
export function navisArrayAck(records: number): Buffer {
  const ack = Buffer.from([0x7e, 0x41, records, 0]);
  ack[3] = crc8Egts(ack, 0, 3);
  return ack;
}

// --- all protocols ---------------------------------------------------------------------------

/** The login frame of a device (Teltonika IMEI, GT06 0x01, gl200 heartbeat, Ruptela identification). */
export function loginFrame(protocol: BenchProtocol, index: number): Buffer {
  const imei = imeiOf(protocol, index);
  if (protocol === 'teltonika') return teltonikaLogin(imei);
  if (protocol === 'gt06') return gt06Login(imei);
  if (protocol === 'gl200') return gl200Login(imei);
  if (protocol === 'wialon') return wialonLogin(imei);
  if (protocol === 'navis') return navisLogin(imei);
  return ruptelaLogin(imei);
}

/** Positions in one frame of `protocol` (Teltonika and Ruptela: `recordsPerFrame`; GT06 and gl200: 1). */
export const positionsPerFrame = (protocol: BenchProtocol, recordsPerFrame: number): number =>
  protocol === 'teltonika' || protocol === 'ruptela' || protocol === 'navis' ? recordsPerFrame : 1;

export interface FramePlan {
  protocol: BenchProtocol;
  /** index of the device among its protocol's devices (its IMEI) */
  index: number;
  frames: number;
  /** Teltonika and Ruptela records per frame (GT06, gl200: always 1) */
  recordsPerFrame: number;
}

/**
 * Frame `i` of one connection. Fix times are unique per device: record k of frame i at
 * BASE + (i * N + k) s (Teltonika, Ruptela), frame i at BASE + i s (GT06, gl200).
 */
export function encodeFrame(p: FramePlan, i: number): Buffer {
  if (p.protocol === 'teltonika')
    return teltonikaAvl(p.recordsPerFrame, BASE_FIX_MS + i * p.recordsPerFrame * 1000, 1000, p.index + i);
  if (p.protocol === 'ruptela')
    return ruptelaRecords(
      p.recordsPerFrame,
      BASE_FIX_MS + i * p.recordsPerFrame * 1000,
      1000,
      p.index + i,
      ruptelaImei(p.index),
    );
  if (p.protocol === 'gl200') return gl200Fri(BASE_FIX_MS + i * 1000, i, p.index + i, gl200Imei(p.index));
  if (p.protocol === 'wialon') return wialonData(BASE_FIX_MS + i * 1000, p.index + i);
  if (p.protocol === 'navis')
    return navisArray(p.recordsPerFrame, BASE_FIX_MS + i * p.recordsPerFrame * 1000, 1000, p.index + i);
  return gt06Position(BASE_FIX_MS + i * 1000, i + 2, p.index + i);
}

/** The exact acknowledgement of frame `i` (what trackgate and the ack-only server answer). */
export function expectedAck(p: FramePlan, i: number): Buffer {
  if (p.protocol === 'teltonika') {
    const ack = Buffer.alloc(4);
    ack.writeUInt32BE(p.recordsPerFrame);
    return ack;
  }
  if (p.protocol === 'ruptela') return RUPTELA_RECORDS_ACK;
  if (p.protocol === 'gl200') return Buffer.from(`+SACK:${hex4(i)}$`, 'latin1');
  if (p.protocol === 'wialon') return WIALON_DATA_ACK;
  if (p.protocol === 'navis') return navisArrayAck(p.recordsPerFrame);
  const ack = Buffer.from([0x78, 0x78, 0x05, 0x22, ((i + 2) >> 8) & 0xff, (i + 2) & 0xff, 0, 0, 0x0d, 0x0a]);
  ack.writeUInt16BE(crc16X25(ack, 2, 6), 6);
  return ack;
}

/** All frames of one connection, back to back (every frame of a protocol has the same length). */
export function encodeFrames(p: FramePlan): { bytes: Buffer; frameBytes: number } {
  const first = encodeFrame(p, 0);
  const frameBytes = first.length;
  const bytes = Buffer.alloc(frameBytes * p.frames);
  for (let i = 0; i < p.frames; i++) {
    const f = i === 0 ? first : encodeFrame(p, i);
    if (f.length !== frameBytes)
      throw new Error(`${p.protocol} frame ${i} of device ${p.index} is ${f.length} bytes, not ${frameBytes}`);
    f.copy(bytes, i * frameBytes);
  }
  return { bytes, frameBytes };
}
