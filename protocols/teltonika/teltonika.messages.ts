import type { AttributeValue, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { type ByteReader, intBE, uintBE } from '../shared/byte-reader.js';
import {
  CODEC_8_EXT,
  CODEC_16,
  CODEC_GH3000,
  GH3000_EPOCH_S,
  GH3000_PARAMETERS,
  IO_DRIVER_LSB,
  IO_DRIVER_MSB,
  IO_PARAMETERS,
  NX_BEACONS,
  NX_DTCS,
  NX_TAGS,
  NX_VIN,
  PROTOCOL,
  SERIAL_TYPE_CAMERA,
  isFm6,
  type RecordState,
} from './teltonika.constants.js';

/** How the records of one AVL packet are read. */
export interface RecordOptions {
  codec: number;
  /** device model (DecodeContext.model), e.g. FMB130: enables FM-only IO meanings and alarms */
  model?: string;
}

export type RecordDecoder = (r: ByteReader, o: RecordOptions) => DecodedMessage | undefined;

const MAX_TIME_MS = 8.64e15;
const Y2000_MS = Date.UTC(2000, 0, 1);

function newState(): RecordState {
  return { attributes: {}, alarms: [] };
}

function toMessage(s: RecordState, fixTime?: Date): DecodedMessage {
  const m: DecodedMessage = { alarms: s.alarms, attributes: s.attributes };
  if (fixTime) m.fixTime = fixTime;
  if (s.location) m.location = s.location;
  return m;
}

function timeFromMs(ms: number, r: ByteReader): Date {
  if (!Number.isFinite(ms) || ms > MAX_TIME_MS)
    throw new ProtocolError(PROTOCOL, `record time out of range at ${r.offset}`, r.buf);
  return new Date(ms);
}

function isPrintable(b: Buffer): boolean {
  for (const c of b) if ((c < 32 || c > 126) && c !== 0x0d && c !== 0x0a) return false;
  return true;
}

/** `io<id>` fallback: unsigned value (8-byte values beyond 2^53 as a decimal string) */
function decodeIo(s: RecordState, id: number, value: Buffer, o: RecordOptions): void {
  const p = IO_PARAMETERS[id];
  if (p?.when(o.model)) p.decode(s, value);
  else s.attributes[`io${id}`] = uintBE(value);
  if (value.length === 8 && (id === IO_DRIVER_MSB || id === IO_DRIVER_LSB)) (s.raw ??= new Map()).set(id, value);
}

// Element widths per codec, Teltonika "Codec" wiki: 8E uses u16 for counts and ids, 16 uses u16 ids only
const wideCount = (codec: number): boolean => codec === CODEC_8_EXT;
const wideId = (codec: number): boolean => codec === CODEC_8_EXT || codec === CODEC_16;

/** IO value widths of Codec 8 / 8E / 16 records, in the order their groups come */
const AVL_IO_WIDTHS: readonly number[] = [1, 2, 4, 8];

function readIoGroups(r: ByteReader, s: RecordState, o: RecordOptions, widths: readonly number[]): void {
  const wideCounts = wideCount(o.codec);
  const wideIds = wideId(o.codec);
  for (let w = 0; w < widths.length; w++) {
    const width = widths[w];
    const n = wideCounts ? r.u16() : r.u8();
    for (let j = 0; j < n; j++) {
      const ioId = wideIds ? r.u16() : r.u8();
      // the label only when the frame is short: no string made per value
      if (r.remaining < width) r.need(width, `io value ${ioId}`);
      if (o.codec === CODEC_GH3000) {
        // GH3000's handlers are not checked for keeping their value: a Buffer of its own for them
        const value = r.bytes(width);
        const h = GH3000_PARAMETERS[ioId];
        if (h) h(s, value);
        else s.attributes[`io${ioId}`] = uintBE(value);
      } else {
        decodeIo(s, ioId, r.transient(width), o);
      }
    }
  }
}

/** Codec 8E NX elements (u16 id, u16 length, bytes), TeltonikaProtocolDecoder.decodeLocation */
function readVariableIo(r: ByteReader, s: RecordState): void {
  const n = r.u16();
  for (let j = 0; j < n; j++) {
    const id = r.u16();
    const data = r.sub(r.u16(), `nx io ${id}`);
    if (NX_VIN.includes(id)) s.attributes.vin = data.bytes(data.remaining).toString('latin1');
    else if (id === NX_DTCS) s.attributes.dtcs = data.bytes(data.remaining).toString('latin1').replace(/,/g, ' ');
    else if (id === NX_BEACONS) decodeBeacons(data, s.attributes);
    else if (NX_TAGS.includes(id)) decodeTags(data, s.attributes);
    else s.attributes[`io${id}`] = data.bytes(data.remaining).toString('hex');
  }
}

/** IO 385 Beacon list: a data-part byte, then per beacon flags, iBeacon or Eddystone id, rssi, optional battery/temp */
function decodeBeacons(d: ByteReader, a: Record<string, AttributeValue>): void {
  d.u8();
  for (let i = 1; d.remaining > 0; i++) {
    const flags = d.u8();
    if (flags >> 4 > 0) {
      a[`beacon${i}Uuid`] = d.bytes(16).toString('hex');
      a[`beacon${i}Major`] = d.u16();
      a[`beacon${i}Minor`] = d.u16();
    } else {
      a[`beacon${i}Namespace`] = d.bytes(10).toString('hex');
      a[`beacon${i}Instance`] = d.bytes(6).toString('hex');
    }
    a[`beacon${i}Rssi`] = d.i8();
    if (flags & 0x02) a[`beacon${i}Battery`] = d.u16() / 100;
    if (flags & 0x04) a[`beacon${i}Temp`] = d.u16();
  }
}

type TagField = (a: Record<string, AttributeValue>, tag: string, v: Buffer) => void;

/** Sensors pad their names with NULs to a fixed width: the name ends at the first NUL. */
function textToNul(v: Buffer): string {
  const end = v.indexOf(0);
  return v.subarray(0, end < 0 ? v.length : end).toString('utf8');
}

// BLE tag parameter ids, TeltonikaProtocolDecoder.decodeLocation (IOs 548, 10828, 10829, 10831, 11317)
const TAG_FIELDS: Record<number, TagField> = {
  0: (a, t, v) => (a[`${t}Rssi`] = intBE(v.subarray(0, 1))),
  1: (a, t, v) => (a[`${t}Id`] = v.toString('hex')),
  2: (a, t, v) => {
    if (v.length < 1) return;
    if (v[0] & 0x40) a[`${t}LowBattery`] = true;
    if (v[0] & 0x80 && v.length >= 2) a[`${t}Voltage`] = v[1] * 10 + 2000;
  },
  5: (a, t, v) => (a[`${t}Name`] = textToNul(v)),
  6: (a, t, v) => (a[`${t}Temp`] = intBE(v.subarray(0, 2))),
  7: (a, t, v) => (a[`${t}Humidity`] = v[0]),
  8: (a, t, v) => (a[`${t}Magnet`] = v[0] > 0),
  9: (a, t, v) => (a[`${t}Motion`] = v[0] > 0),
  10: (a, t, v) => (a[`${t}MotionCount`] = Number(uintBE(v.subarray(0, 2)))),
  11: (a, t, v) => (a[`${t}Pitch`] = intBE(v.subarray(0, 1))),
  12: (a, t, v) => (a[`${t}AngleRoll`] = intBE(v.subarray(0, 2))),
  13: (a, t, v) => (a[`${t}LowBattery`] = v[0]),
  14: (a, t, v) => (a[`${t}Battery`] = Number(uintBE(v.subarray(0, 2)))),
  15: (a, t, v) => (a[`${t}Mac`] = v.subarray(0, 6).toString('hex')),
};
const TAG_MIN_LENGTH: Record<number, number> = {
  0: 1,
  6: 2,
  7: 1,
  8: 1,
  9: 1,
  10: 2,
  11: 1,
  12: 2,
  13: 1,
  14: 2,
  15: 6,
};

function decodeTags(d: ByteReader, a: Record<string, AttributeValue>): void {
  d.u8(); // header
  for (let i = 1; d.remaining > 0; i++) {
    const tag = d.sub(d.u8(), 'ble tag');
    while (tag.remaining > 0) {
      const pid = tag.u8();
      const value = tag.bytes(tag.u8(), `ble tag parameter ${pid}`);
      const field = TAG_FIELDS[pid];
      if (field && value.length >= (TAG_MIN_LENGTH[pid] ?? 0)) field(a, `tag${i}`, value);
    }
  }
}

/** FM.6.. iButton/driver id split over IOs 195 (MSB) and 196 (LSB) as 16 ASCII bytes */
function decodeFm6Driver(s: RecordState, o: RecordOptions): void {
  if (!o.model || !isFm6(o.model)) return;
  const msb = s.raw?.get(IO_DRIVER_MSB);
  const lsb = s.raw?.get(IO_DRIVER_LSB);
  if (msb && lsb) s.attributes.driverUniqueId = Buffer.concat([msb, lsb]).toString('latin1');
}

/** Codec 8 / 8E / 16 AVL record, Teltonika "Codec" wiki and TeltonikaProtocolDecoder.decodeLocation */
export const decodeAvlRecord: RecordDecoder = (r, o) => {
  const s = newState();
  const fixTime = timeFromMs(r.u64Number(), r);
  s.attributes.priority = r.u8();
  const lon = r.i32() / 1e7;
  const lat = r.i32() / 1e7;
  if (Math.abs(lat) > 90 || Math.abs(lon) > 180)
    throw new ProtocolError(PROTOCOL, `coordinates out of range (${lat}, ${lon})`, r.buf);
  const altitudeM = r.i16();
  const courseDeg = r.u16();
  const satellites = r.u8();
  const speedKmh = r.u16();
  s.location = {
    latitudeDeg: lat,
    longitudeDeg: lon,
    valid: satellites !== 0,
    altitudeM,
    courseDeg,
    satellites,
    speedKmh,
  };
  s.attributes.sat = satellites;
  s.attributes.event = wideId(o.codec) ? r.u16() : r.u8();
  if (o.codec === CODEC_16) r.u8(); // generation type
  if (wideCount(o.codec))
    r.u16(); // total IO count
  else r.u8();
  readIoGroups(r, s, o, AVL_IO_WIDTHS);
  if (o.codec === CODEC_8_EXT) readVariableIo(r, s);
  decodeFm6Driver(s, o);
  return toMessage(s, fixTime);
};

/** Codec 7 (GH3000) record: masked fields, float coordinates, 2007 epoch; TeltonikaProtocolDecoder.decodeLocation */
export const decodeGh3000Record: RecordDecoder = (r, o) => {
  const s = newState();
  const fixTime = new Date(((r.u32() & 0x3fffffff) + GH3000_EPOCH_S) * 1000);
  const globalMask = r.u8();
  if (globalMask & 0x01) {
    const mask = r.u8();
    if (mask & 0x01) {
      const lat = r.f32();
      const lon = r.f32();
      if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180))
        throw new ProtocolError(PROTOCOL, 'GH3000 coordinates out of range', r.buf);
      s.location = { latitudeDeg: lat, longitudeDeg: lon, valid: true };
    }
    const loc = s.location;
    if (mask & 0x02) setIf(loc, 'altitudeM', r.u16());
    if (mask & 0x04) setIf(loc, 'courseDeg', (r.u8() * 360) / 256);
    if (mask & 0x08) setIf(loc, 'speedKmh', r.u8());
    if (mask & 0x10) {
      const sat = r.u8();
      s.attributes.sat = sat;
      setIf(loc, 'satellites', sat);
    }
    if (mask & 0x20) {
      s.attributes.lac = r.u16();
      s.attributes.cid = r.u16();
    }
    if (mask & 0x40) s.attributes.rssi = r.u8();
    if (mask & 0x80) s.attributes.operator = r.u32();
  }
  const widths = [1, 2, 4].filter((_, i) => globalMask & (0x02 << i));
  readIoGroups(r, s, o, widths);
  return toMessage(s, fixTime);
};

function setIf<K extends 'altitudeM' | 'courseDeg' | 'speedKmh' | 'satellites'>(
  loc: RecordState['location'],
  key: K,
  value: number,
): void {
  if (loc) loc[key] = value;
}

/** Codec 12 record from the device: a command response or serial data, TeltonikaProtocolDecoder.decodeSerial */
export const decodeSerialRecord: RecordDecoder = (r) => {
  const type = r.u8();
  const data = r.bytes(r.u32(), 'codec 12 data');
  if (type === SERIAL_TYPE_CAMERA) return undefined; // photo transfer chunks: not stored
  const attributes: Record<string, AttributeValue> = { type };
  if (!isPrintable(data)) {
    attributes.result = data.toString('hex');
    return { alarms: [], attributes };
  }
  const text = data.toString('latin1').trim();
  if (!decodeAxleLoads(text, attributes)) attributes.result = text;
  return { alarms: [], attributes };
};

/** `UUUUww<12 values separated by ;>...SSS` axle load report carried in Codec 12 */
function decodeAxleLoads(text: string, a: Record<string, AttributeValue>): boolean {
  if (!text.startsWith('UUUUww') || !text.endsWith('SSS')) return false;
  const values = text
    .substring(6, text.length - 4)
    .split(';')
    .map(Number);
  if (values.length < 12 || values.slice(0, 12).some((v) => !Number.isFinite(v))) return false;
  for (let i = 0; i < 8; i++) a[`axle${i + 1}`] = values[i];
  a.loadTruck = values[8];
  a.loadTrailer = values[9];
  a.totalTruck = values[10];
  a.totalTrailer = values[11];
  return true;
}

/** Codec 13 record: type, u32 length (including the timestamp), u32 seconds, data; TeltonikaProtocolDecoder.parseData */
export const decodeCommandResponseRecord: RecordDecoder = (r) => {
  r.u8(); // type
  const length = r.u32() - 4;
  if (length < 0) throw new ProtocolError(PROTOCOL, 'codec 13 length below 4', r.buf);
  const time = new Date(r.u32() * 1000);
  const data = r.bytes(length, 'codec 13 data');
  const attributes: Record<string, AttributeValue> = {};
  if (!isPrintable(data)) {
    attributes.result = data.toString('hex');
  } else {
    const text = data.toString('latin1').trim();
    const driver = text.startsWith('GTSL') ? text.split('|')[4] : undefined;
    if (driver !== undefined) attributes.driverUniqueId = driver;
    else attributes.result = text;
  }
  // a time before 2000 is not a clock reading (devices send 0 or a counter): leave it to the receive time
  return time.getTime() >= Y2000_MS ? { fixTime: time, alarms: [], attributes } : { alarms: [], attributes };
};
