import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue, CommandResult, DecodeContext, DecodedLocation, DecodedMessage } from '../types.js';
import { crc16X25 } from '../shared/crc.js';
import type { ByteReader } from '../shared/byte-reader.js';
import { NetworkInfo } from '../shared/network.js';
import {
  decodeStatusAlarm,
  MSG_ALARM_MODULE,
  MSG_GPS_LBS_6,
  MSG_GPS_LBS_7,
  MSG_GPS_LBS_8,
  MSG_GPS_LBS_DRIVER,
  MSG_GPS_LBS_STATUS_5,
  MSG_IBUTTON,
  MSG_LBS_ALARM,
  MSG_LOCATION_RFID,
  type ModelFlags,
  type Variant,
} from './gt06.constants.js';

/** What the decoder knows about the frame being decoded. */
export interface Gt06Env {
  frame: Buffer;
  /** 0x7979 start (u16 length) rather than 0x7878 */
  extended: boolean;
  type: number;
  /** the length field */
  length: number;
  /** length - 5: the content bytes a well-formed frame carries */
  dataLength: number;
  /** u16 six bytes before the end (Traccar `buf.getShort(writerIndex - 6)`); absent on stub frames */
  serial?: number;
  variant: Variant;
  models: ModelFlags;
  /** device clock offset east of UTC, from the login extension bits */
  tzOffsetMin: number;
  ctx: DecodeContext;
}

export interface Outcome {
  identity?: string;
  messages: DecodedMessage[];
  replies: Buffer[];
  /** the device's answers to 0x80 commands (0x15, 0x21) */
  commandResults?: CommandResult[];
  /** why nothing was read (a type not decoded), for the log */
  warnings?: string[];
}

export type { CellTower, WifiAccessPoint } from '../shared/network.js';

/** One message being assembled (Traccar's Position, in trackgate units). */
export class Pos {
  fixTime?: Date;
  location?: DecodedLocation;
  readonly alarms: Alarm[] = [];
  readonly attributes: Record<string, AttributeValue> = {};
  private readonly network = new NetworkInfo();
  readonly cells = this.network.cellTowers;
  readonly wifi = this.network.wifiAccessPoints;

  set(key: string, value: AttributeValue | undefined | null): void {
    if (value === undefined || value === null) return;
    if (typeof value === 'number' && !Number.isFinite(value)) return;
    this.attributes[key] = value;
  }

  addAlarm(alarm: Alarm | undefined): void {
    if (alarm && !this.alarms.includes(alarm)) this.alarms.push(alarm);
  }

  setAltitude(metres: number): void {
    if (this.location) this.location.altitudeM = metres;
  }

  toMessage(): DecodedMessage {
    const attributes = { ...this.attributes };
    this.network.applyTo(attributes);
    const m: DecodedMessage = { alarms: [...this.alarms], attributes };
    if (this.fixTime) m.fixTime = this.fixTime;
    if (this.location) m.location = this.location;
    return m;
  }
}

export const round2 = (v: number): number => Math.round(v * 100) / 100;
export const hex = (b: Buffer): string => b.toString('hex');

/** u24 big-endian (Netty `readUnsignedMedium`) */
export function u24(r: ByteReader): number {
  return r.bytes(3).readUIntBE(0, 3);
}

/** u64 as a number (cell ids carried in 8 bytes; precision beyond 2^53 is not meaningful) */
export function u64n(r: ByteReader): number {
  return Number(r.u64());
}

/** `YY MM DD hh mm ss` in the device clock, to UTC (Traccar `DateBuilder`: 2-digit years are 20xx) */
export function dateFromFields(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  tzOffsetMin: number,
): Date {
  const year = y < 100 ? 2000 + y : y;
  return new Date(Date.UTC(year, mo - 1, d, h, mi, s) - tzOffsetMin * 60_000);
}

export function readDate(r: ByteReader, env: Gt06Env): Date {
  const f = r.bytes(6, 'date');
  return dateFromFields(f[0], f[1], f[2], f[3], f[4], f[5], env.tzOffsetMin);
}

/** Six BCD bytes `YYMMDDhhmmss` (Wi-Fi packets), read digit by digit like Traccar `BcdUtil` */
export function readBcdDate(time: Buffer): Date {
  const v = (i: number): number => (time[i] >> 4) * 10 + (time[i] & 0x0f);
  return dateFromFields(v(0), v(1), v(2), v(3), v(4), v(5), 0);
}

export interface GpsOptions {
  /** a GPS length byte follows the time; 0 means no fix block (AZ735) */
  hasLength?: boolean;
  hasSatellites?: boolean;
  hasSpeed?: boolean;
  /** u16 speed (JC400) */
  longSpeed?: boolean;
  /** course/status word before the speed (JC400) */
  swapFlags?: boolean;
}

/**
 * GPS block, GT06 protocol manual 5.2.1.4 (Traccar `decodeGps`): time, satellites, lat/lon in
 * degrees x 1,800,000, speed km/h, course/status word (bits 0-9 course, 10 north, 11 west,
 * 12 fixed, 14 ACC known, 15 ACC on). Returns false when a length byte says there is no fix.
 */
export function decodeGps(r: ByteReader, pos: Pos, env: Gt06Env, o: GpsOptions = {}): boolean {
  const { hasLength = false, hasSatellites = true, hasSpeed = true, longSpeed = false, swapFlags = false } = o;
  pos.fixTime = readDate(r, env);
  if (hasLength && r.u8() === 0) return false;
  let satellites: number | undefined;
  if (hasSatellites) {
    satellites = r.u8() & 0x0f;
    pos.set('sat', satellites);
  }
  let latitude = r.u32() / 60 / 30000;
  let longitude = r.u32() / 60 / 30000;
  let flags = swapFlags ? r.u16() : 0;
  const speedKmh = hasSpeed ? (longSpeed ? r.u16() : r.u8()) : undefined;
  if (!swapFlags) flags = r.u16();
  if (!(flags & 0x0400)) latitude = -latitude;
  if (flags & 0x0800) longitude = -longitude;
  if (flags & 0x4000) pos.set('ignition', (flags & 0x8000) !== 0);
  // beyond the globe means the layout was misread (e.g. a model-specific frame without its model)
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return true;
  const course = flags & 0x03ff;
  const location: DecodedLocation = { latitudeDeg: latitude, longitudeDeg: longitude, valid: (flags & 0x1000) !== 0 };
  if (speedKmh !== undefined) location.speedKmh = speedKmh;
  if (course <= 360) location.courseDeg = course;
  if (satellites !== undefined) location.satellites = satellites;
  pos.location = location;
  return true;
}

/**
 * LBS block, GT06 protocol manual 5.2.1.9 (Traccar `decodeLbs`): MCC u16 (bit 15: u16 MNC),
 * MNC, LAC, cell id. Newer 4G types widen LAC to u32 and the cell id to u32/u64; 0x38/0x39 prefix
 * a cell type (>= 3: 4G widths and a u16 RSSI). With a length byte of 0 there is no cell.
 */
export function decodeLbs(r: ByteReader, pos: Pos, env: Gt06Env, hasLength: boolean): boolean {
  const { type, variant } = env;
  let length = 0;
  if (hasLength) {
    length = r.u8();
    if (length === 0) {
      const start = r.offset;
      let zeroed = true;
      for (let i = start + 9; i < start + 45 && i < r.buf.length; i++) {
        if (r.buf[i] !== 0) {
          zeroed = false;
          break;
        }
      }
      if (zeroed) r.skip(Math.min(r.remaining, 45));
      return false;
    }
  }
  const cellType = type === MSG_GPS_LBS_8 || type === MSG_ALARM_MODULE ? r.u8() : 0;
  const mcc = r.u16();
  const mnc = mcc & 0x8000 || type === MSG_GPS_LBS_6 || variant === 'SL4X' ? r.u16() : r.u8();
  const wide = cellType >= 3 || type === MSG_LBS_ALARM || type === MSG_GPS_LBS_7 || type === MSG_GPS_LBS_STATUS_5;
  const lac = wide ? r.i32() : r.u16();
  let cid: number;
  if (wide || variant === 'SL4X') cid = u64n(r);
  else if (
    type === MSG_GPS_LBS_6 ||
    type === MSG_IBUTTON ||
    type === MSG_GPS_LBS_DRIVER ||
    type === MSG_LOCATION_RFID ||
    variant === 'SEEWORLD'
  )
    cid = r.u32();
  else cid = u24(r);
  if (cellType >= 3)
    r.u16(); // rssi
  else if (type === MSG_GPS_LBS_8 || type === MSG_ALARM_MODULE) r.u8(); // rssi
  pos.cells.push({ mobileCountryCode: mcc & 0x7fff, mobileNetworkCode: mnc, locationAreaCode: lac, cellId: cid });
  if (length > 9) r.skip(length - 9);
  return true;
}

/** Terminal information byte, GT06 protocol manual 5.3.1.10: 1 ACC, 2 charging, 3-5 alarm, 7 oil/electric cut. */
export function decodeStatus(r: ByteReader, pos: Pos, env: Gt06Env): void {
  const status = r.u8();
  pos.set('status', status);
  pos.set('ignition', (status & 0x02) !== 0);
  pos.set('charge', (status & 0x04) !== 0);
  pos.set('blocked', (status & 0x80) !== 0);
  pos.addAlarm(decodeStatusAlarm((status >> 3) & 0x07, env.variant));
}

/** `78 78 | len | type | content | serial | CRC-16/X-25 | 0D 0A` (0x7979: u16 len), Traccar `sendResponse`. */
export function response(extended: boolean, type: number, serial: number, content?: Buffer): Buffer {
  const body = content ?? Buffer.alloc(0);
  const length = 5 + body.length;
  const head = extended
    ? Buffer.from([0x79, 0x79, length >> 8, length & 0xff])
    : Buffer.from([0x78, 0x78, length & 0xff]);
  const out = Buffer.concat([head, Buffer.from([type]), body, Buffer.alloc(6)]);
  let p = head.length + 1 + body.length;
  out.writeUInt16BE(serial & 0xffff, p);
  p += 2;
  out.writeUInt16BE(crc16X25(out, 2, p), p);
  out[p + 2] = 0x0d;
  out[p + 3] = 0x0a;
  return out;
}

/** The general acknowledgement echoing this frame's type and serial (none for stub frames). */
export function ack(env: Gt06Env, extended = false): Buffer[] {
  return env.serial === undefined ? [] : [response(extended, env.type, env.serial)];
}

export function outcome(pos: Pos | undefined, replies: Buffer[] = []): Outcome {
  return { messages: pos ? [pos.toMessage()] : [], replies };
}

/** Printable ASCII (tab, CR and LF allowed), as Traccar `BufferUtil.isPrintable`. */
export function isPrintable(b: Buffer): boolean {
  for (const c of b) {
    if ((c < 0x20 || c > 0x7e) && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return true;
}
