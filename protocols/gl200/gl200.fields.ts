import type { Alarm } from '../../core/model/alarm.js';
import { NetworkInfo } from '../shared/network.js';
import { ProtocolError, type AttributeValue, type DecodedLocation, type DecodedMessage } from '../types.js';
import { MODEL_BY_VERSION, PROTOCOL } from './gl200.constants.js';

/**
 * One report being decoded. `gpsTime` is the fix time of its location; `deviceTime` the time the
 * device sent it (the second-to-last field). A report without a fix takes its send time.
 */
export class Report {
  gpsTime?: Date;
  deviceTime?: Date;
  location?: DecodedLocation;
  readonly alarms: Alarm[] = [];
  readonly attributes: Record<string, AttributeValue> = {};
  readonly network = new NetworkInfo();

  /** sets an attribute; undefined, null and non-finite numbers leave it as it is (Traccar's `set`) */
  set(key: string, value: AttributeValue | undefined | null): void {
    if (value === undefined || value === null) return;
    if (typeof value === 'number' && !Number.isFinite(value)) return;
    this.attributes[key] = value;
  }

  addAlarm(alarm: Alarm | undefined): void {
    if (alarm && !this.alarms.includes(alarm)) this.alarms.push(alarm);
  }

  has(key: string): boolean {
    return Object.hasOwn(this.attributes, key);
  }

  /** holds anything worth storing (decodeBasic returns nothing otherwise) */
  get hasContent(): boolean {
    return (
      this.location !== undefined ||
      this.alarms.length > 0 ||
      Object.keys(this.attributes).length > 0 ||
      !this.network.empty
    );
  }

  toMessage(): DecodedMessage {
    const attributes = { ...this.attributes };
    this.network.applyTo(attributes);
    const m: DecodedMessage = { alarms: [...this.alarms], attributes };
    const fixTime = this.location ? this.gpsTime : this.deviceTime;
    if (fixTime) m.fixTime = fixTime;
    if (this.location) m.location = { ...this.location };
    return m;
  }
}

const bad = (what: string, value: string): ProtocolError =>
  new ProtocolError(PROTOCOL, `${what} "${value.slice(0, 40)}" is not valid`);

/** a decimal integer field (Java Integer.parseInt: optional sign, digits only) */
export function int(value: string, what = 'integer'): number {
  if (!/^[-+]?\d{1,15}$/.test(value)) throw bad(what, value);
  return parseInt(value, 10);
}

/** a hexadecimal field */
export function hex(value: string, what = 'hex field'): number {
  if (!/^[0-9a-fA-F]{1,12}$/.test(value)) throw bad(what, value);
  return parseInt(value, 16);
}

/** a decimal number field (Java Double.parseDouble, without its Infinity/NaN spellings) */
export function num(value: string, what = 'number'): number {
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(value)) throw bad(what, value);
  return Number(value);
}

/** bit `n` of a mask that may exceed 32 bits */
export const bit = (mask: number, n: number): boolean => Math.floor(mask / 2 ** n) % 2 === 1;

/** `yyyyMMddHHmmss`, UTC */
export function time14(value: string, what = 'time'): Date {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (!m) throw bad(what, value);
  return timeOf([m[1], m[2], m[3], m[4], m[5], m[6]], what);
}

/** six captured strings: year, month, day, hours, minutes, seconds (UTC) */
export function timeOf(parts: readonly string[], what = 'time'): Date {
  const [y, mo, d, h, mi, s] = parts.map((p) => parseInt(p, 10));
  const t = Date.UTC(y, mo - 1, d, h, mi, s);
  const date = new Date(t);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59 || date.getUTCDate() !== d) {
    throw bad(what, parts.join(''));
  }
  return date;
}

/** `HHHHH:mm:ss` hour meter -> milliseconds (Gl200TextProtocolDecoder.parseHours) */
export function hoursMs(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const [h, m, s] = value.split(':');
  return (
    (int(h, 'hours') * 3600 +
      (m !== undefined ? int(m, 'minutes') * 60 : 0) +
      (s !== undefined ? int(s, 'seconds') : 0)) *
    1000
  );
}

/** `aabbccddeeff` -> `aa:bb:cc:dd:ee:ff` */
export const macAddress = (value: string): string => value.match(/../g)!.join(':');

/**
 * The model whose layout a report follows: the device record's model, upper-cased, else the one
 * the protocol version names (its first two hex digits, or six of a longer version).
 */
export function modelOf(version: string, declared: string | undefined): string {
  if (declared) return declared.toUpperCase();
  const prefix = version.length > 6 ? version.substring(0, 6) : version.substring(0, 2);
  return MODEL_BY_VERSION[prefix] ?? '';
}

/** Comma-separated fields read in order; reading past the end gives '' (an absent field). */
export class Fields {
  i = 0;
  constructor(readonly v: readonly string[]) {}

  next(): string {
    return this.v[this.i++] ?? '';
  }

  at(offset: number): string {
    return this.v[this.i + offset] ?? '';
  }

  skip(n = 1): void {
    this.i += n;
  }

  get length(): number {
    return this.v.length;
  }

  /** the field `n` from the end (1: the count number, 2: the send time) */
  fromEnd(n: number): string {
    return this.v[this.v.length - n] ?? '';
  }
}

/**
 * The location block read field by field (Gl200TextProtocolDecoder.decodeLocation over values):
 * `<hdop>,<speed km/h>,<azimuth>,<altitude>,<longitude>,<latitude>,<gps utc time>`, optional Wi-Fi
 * access points, `<mcc>,<mnc>,<lac hex>,<cell hex>`, then, by model, CSQ fields and a reserved
 * field that is an odometer (km, with a point) or an append mask (satellites, trigger type, jamming).
 */
export function readLocation(r: Report, model: string, f: Fields): void {
  const hdop = f.next();
  if (hdop) r.set('hdop', num(hdop, 'hdop'));
  const speed = f.next();
  const course = f.next();
  const altitude = f.next();
  if (f.at(0) && f.at(1) && f.at(2)) {
    setLocation(r, f.next(), f.next(), speed, course, altitude);
    r.gpsTime = time14(f.next(), 'gps time');
  } else {
    f.skip(3);
  }
  if (f.at(1).length === 12) {
    const count = int(f.next(), 'wifi count');
    for (let i = 0; i < count; i++) {
      const mac = f.next();
      const rssi = f.next();
      if (/^[0-9a-fA-F]{12}$/.test(mac)) r.network.addWifi(macAddress(mac), int(rssi, 'wifi rssi'));
      f.skip(3);
    }
  }
  if (f.at(0)) {
    r.network.addCell(int(f.next(), 'mcc'), int(f.next(), 'mnc'), hex(f.next(), 'lac'), hex(f.next(), 'cell id'));
  } else {
    f.skip(4);
  }
  if (model.startsWith('GL5')) f.skip(2); // csq rssi, csq ber
  if (model === 'GT500MA' || model === 'GT501') {
    f.skip(); // csq rssi
    return;
  }
  if (model === 'GL320M') return;
  const reserved = f.next();
  if (!reserved) return;
  if (reserved.includes('.')) {
    r.set('odometer', num(reserved, 'odometer') * 1000);
    return;
  }
  const append = hex(reserved, 'append mask');
  if (bit(append, 0)) r.set('sat', int(f.next(), 'satellites'));
  if (bit(append, 1)) f.skip(); // trigger type
  if (bit(append, 4)) f.skip(); // gnss jamming state
}

/** the position of a location block, when longitude, latitude and time are all there */
export function setLocation(
  r: Report,
  lon: string,
  lat: string,
  speed: string | undefined,
  course: string | undefined,
  altitude: string | undefined,
): void {
  const longitudeDeg = num(lon, 'longitude');
  const latitudeDeg = num(lat, 'latitude');
  if (Math.abs(latitudeDeg) > 90 || Math.abs(longitudeDeg) > 180) {
    throw new ProtocolError(PROTOCOL, `coordinates out of range (${latitudeDeg}, ${longitudeDeg})`);
  }
  const location: DecodedLocation = { latitudeDeg, longitudeDeg, valid: true };
  // a speed or azimuth out of range is left out, not the whole position
  const speedKmh = speed ? num(speed, 'speed') : 0;
  const courseDeg = course ? num(course, 'course') : 0;
  if (speedKmh >= 0) location.speedKmh = speedKmh;
  if (courseDeg >= 0 && courseDeg <= 360) location.courseDeg = courseDeg;
  if (altitude) location.altitudeM = num(altitude, 'altitude');
  r.location = location;
}

/** IO status `<ignition byte><inputs byte><outputs byte>` (Gl200TextProtocolDecoder.decodeStatus) */
export function decodeStatus(r: Report, value: number): void {
  const ignition = (value >> 16) & 0xff;
  if (ignition & 0x10) r.set('ignition', false);
  else if (ignition & 0x20) r.set('ignition', true);
  const input = (value >> 8) & 0xff;
  const output = value & 0xff;
  r.set('input', input);
  r.set('in1', (input & 0x02) !== 0);
  r.set('in2', (input & 0x04) !== 0);
  r.set('output', output);
  r.set('out1', (output & 0x01) !== 0);
  r.set('out2', (output & 0x02) !== 0);
}
