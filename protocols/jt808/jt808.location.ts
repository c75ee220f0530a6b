import type { ByteReader } from '../shared/byte-reader.js';
import { bcdNibbles } from '../shared/bcd.js';
import { NetworkInfo } from '../shared/network.js';
import { knotsToKmh } from '../shared/units.js';
import { ProtocolError, type DecodedLocation, type DecodedMessage } from '../types.js';
import { ALARM_BITS, AOVX_MODELS, PADLOCK_MODELS } from './jt808.constants.js';
import { decodeExtras, isItemChain, lockCommand } from './jt808.extras.js';
import {
  addAlarm,
  bcdTime,
  checkCoordinates,
  newMessage,
  readStatusAndCoordinates,
  readTime,
  setTime,
  type Jt808Context,
} from './jt808.fields.js';

const bit = (value: number, n: number): boolean => Math.floor(value / 2 ** n) % 2 === 1;

/** 8.18 table 24 alarm DWORD; padlock and AOVX models use their own bits (Traccar `decodeAlarm`) */
export function decodeAlarmDword(m: DecodedMessage, model: string | undefined, value: number): void {
  if (model && PADLOCK_MODELS.has(model)) {
    if (bit(value, 0) || bit(value, 4)) addAlarm(m, 'removing');
    if (bit(value, 1)) addAlarm(m, 'tampering');
    return;
  }
  if (model && AOVX_MODELS.has(model)) {
    if (bit(value, 16)) addAlarm(m, 'movement');
    return;
  }
  for (const [bits, alarm] of ALARM_BITS) {
    if (alarm === 'accident' && model === 'VL300') continue;
    if (bits.some((n) => bit(value, n))) addAlarm(m, alarm);
  }
}

/** a course outside 0-360 is noise, not a heading */
export function setCourse(location: DecodedLocation, course: number): void {
  if (course >= 0 && course <= 360) location.courseDeg = course;
}

/** 18 bytes after the basic fields in one vendor's reports, instead of additional items (Traccar) */
const VENDOR_TAIL_BYTES = 18;

function decodeVendorTail(r: ByteReader, m: DecodedMessage): void {
  r.skip(4); // remaining battery and mileage
  m.attributes.odometer = r.u32() * 1000;
  m.attributes.battery = r.u16() / 10;
  r.skip(4); // area id
  m.attributes.rssi = r.u8();
  r.skip(3); // reserved
}

/**
 * 8.18 location information: alarm u32, status u32, latitude u32, longitude u32 (1e-6 deg),
 * altitude s16 m, speed u16 (1/10 km/h), course u16, BCD[6] time, then additional information.
 */
/** Status, coordinates, altitude m, speed (1/10 km/h), course and BCD time: the standard location body. */
export function readLocationBody(r: ByteReader, m: DecodedMessage, c: Jt808Context): void {
  const location = readStatusAndCoordinates(r, m, c);
  location.altitudeM = r.i16();
  location.speedKmh = r.u16() / 10;
  setCourse(location, r.u16());
  setTime(m, readTime(r, c.utcOffsetMinutes), c);
  const checked = checkCoordinates(location, c);
  if (checked) m.location = checked;
}

export function decodeLocation(r: ByteReader, c: Jt808Context): DecodedMessage {
  const m = newMessage();
  decodeAlarmDword(m, c.model, r.u32());
  readLocationBody(r, m, c);
  if (r.remaining === VENDOR_TAIL_BYTES && !isItemChain(r)) {
    decodeVendorTail(r, m);
    return m;
  }
  const net = new NetworkInfo();
  decodeExtras(r, m, c, net);
  net.applyTo(m.attributes);
  copySatellites(m);
  return m;
}

/** the satellite count an item reported, on the location too */
function copySatellites(m: DecodedMessage): void {
  if (m.location && typeof m.attributes.sat === 'number') m.location.satellites = m.attributes.sat;
}

/** `DDMM.mmmm` packed as BCD digits DDMMmmmm (Traccar `Jt600ProtocolDecoder.convertCoordinate`) */
function bcdCoordinate(raw: number): number {
  const degrees = Math.floor(raw / 1_000_000);
  return degrees + (raw % 1_000_000) / 10_000 / 60;
}

/** JT701 0x5501/0x5502 items after the fixed part: `id u8, length u8, value` */
const LOCATION2_ITEMS: Readonly<
  Record<number, (v: ByteReader, m: DecodedMessage, length: number, l?: DecodedLocation) => void>
> = {
  0x02: (v, _m, _len, l) => {
    const alt = v.i16();
    if (l) l.altitudeM = alt;
  },
  0x10: (v, m) => {
    m.attributes.wakeSource = v.u8();
  },
  0x0b: (v, m, length) => lockCommand(v, m, length),
  0x0c: (v, m) => {
    // tilt x, y, z
    const axis = (): number => {
      const n = v.u16();
      return n > 0x8000 ? n - 0x10000 : n;
    };
    m.attributes.tilt = `[${axis()},${axis()},${axis()}]`;
  },
  0xfc: (v, m) => {
    m.attributes.geofence = v.u8();
  },
};

/**
 * JT701 padlock location (Traccar `decodeLocation2` after `Jt600ProtocolDecoder.decodeBinaryLocation`):
 * BCD DDMMYY hhmmss (UTC), BCD latitude (8 digits) and longitude (9 digits), flag nibble, BCD speed,
 * course/2, rssi, satellites, odometer km, battery, cell, product, status, alarm, then items.
 */
export function decodeLocation2(r: ByteReader, c: Jt808Context, blind: boolean): DecodedMessage {
  const m = newMessage();
  const time = r.bytes(6, 'BCD time');
  setTime(m, bcdTime(time, [2, 1, 0], 0), c);
  const coordinates = r.bytes(9, 'BCD coordinates');
  const lat = bcdNibbles(coordinates, 0, 8);
  const lon = bcdNibbles(coordinates, 8, 9);
  if (!Number.isFinite(lat) || !Number.isFinite(lon))
    throw new ProtocolError('jt808', 'JT701 coordinates are not BCD', r.buf);
  const flags = coordinates[8] & 0x0f;
  const speed = bcdNibbles(r.bytes(1), 0, 2);
  const location: DecodedLocation = {
    latitudeDeg: flags & 0x2 ? bcdCoordinate(lat) : -bcdCoordinate(lat),
    longitudeDeg: flags & 0x4 ? bcdCoordinate(lon) : -bcdCoordinate(lon),
    valid: !blind,
  };
  // Traccar stores this BCD speed unconverted, i.e. as knots
  if (Number.isFinite(speed)) location.speedKmh = knotsToKmh(speed);
  setCourse(location, r.u8() * 2);
  m.attributes.rssi = r.u8();
  m.attributes.sat = r.u8();
  m.attributes.odometer = r.u32() * 1000;
  const battery = r.u8();
  if (battery <= 100) m.attributes.batteryLevel = battery;
  else if (battery === 0xaa || battery === 0xab) m.attributes.charge = true;
  const cid = r.u32();
  const lac = r.u16();
  if (cid > 0 && lac > 0) {
    const net = new NetworkInfo();
    net.addCell(undefined, undefined, lac, cid);
    net.applyTo(m.attributes);
  }
  decodeProductAlarms(m, r.u8(), r.u16(), r.u16());
  const checked = checkCoordinates(location, c);
  if (checked) m.location = checked;
  while (r.remaining >= 2) {
    const id = r.u8();
    const length = r.u8();
    if (length > r.remaining) break;
    const v = r.sub(length);
    try {
      LOCATION2_ITEMS[id]?.(v, m, length, m.location);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      c.warnings.push(`JT701 item 0x${id.toString(16)} is too short`);
    }
  }
  copySatellites(m);
  return m;
}

function decodeProductAlarms(m: DecodedMessage, product: number, status: number, alarm: number): void {
  if (product === 1 || product === 2) {
    if (bit(alarm, 0)) addAlarm(m, 'lowPower');
  } else if (product === 3) {
    m.attributes.blocked = bit(status, 5);
    if (bit(alarm, 0)) addAlarm(m, 'overspeed');
    if (bit(alarm, 1)) addAlarm(m, 'lowPower');
    if (bit(alarm, 2)) addAlarm(m, 'vibration');
    if (bit(alarm, 3)) addAlarm(m, 'lowBattery');
    if (bit(alarm, 5)) addAlarm(m, 'geofenceEnter');
    if (bit(alarm, 6)) addAlarm(m, 'geofenceExit');
  }
  m.attributes.status = status;
}
