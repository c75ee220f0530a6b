import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue, DecodedLocation, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL } from './suntech.constants.js';

/** The `;` fields of a text report, read in order; a missing field reads as ''. */
export class Fields {
  index = 0;

  constructor(
    readonly values: string[],
    readonly frame: Buffer,
  ) {}

  get left(): number {
    return this.values.length - this.index;
  }

  next(): string {
    return this.index < this.values.length ? this.values[this.index++] : (this.index++, '');
  }

  peek(offset = 0): string | undefined {
    return this.values[this.index + offset];
  }

  skip(n = 1): void {
    this.index += n;
  }

  fail(reason: string): never {
    throw new ProtocolError(PROTOCOL, reason, this.frame);
  }

  /** a decimal number; '' or junk fails the frame */
  number(what: string): number {
    const s = this.next().trim();
    if (!/^[+-]?\d+(\.\d+)?$/.test(s)) this.fail(`${what} "${s}" is not a number`);
    return Number(s);
  }

  /** a decimal integer, or undefined when empty or junk */
  optionalInt(): number | undefined {
    const s = this.next().trim();
    return /^[+-]?\d+$/.test(s) ? parseInt(s, 10) : undefined;
  }

  /** a hexadecimal integer, or undefined when empty or junk */
  optionalHex(): number | undefined {
    const s = this.next().trim();
    return /^[0-9A-Fa-f]{1,12}$/.test(s) ? parseInt(s, 16) : undefined;
  }

  /** `yyyyMMdd;HH:mm:ss`, UTC */
  dateTime(): Date {
    const d = /^(\d{4})(\d{2})(\d{2})$/.exec(this.next());
    const t = /^(\d{2}):(\d{2}):(\d{2})$/.exec(this.next());
    if (!d || !t) this.fail('no yyyyMMdd;HH:mm:ss date and time');
    const [y, mo, dd, hh, mi, ss] = [d[1], d[2], d[3], t[1], t[2], t[3]].map(Number);
    if (mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh > 23 || mi > 59 || ss > 59) this.fail('date or time out of range');
    return new Date(Date.UTC(y, mo - 1, dd, hh, mi, ss));
  }
}

export const isDate = (s: string | undefined): boolean => s !== undefined && /^\d{8}$/.test(s);
export const isTime = (s: string | undefined): boolean => s !== undefined && /^\d{2}:\d{2}:\d{2}$/.test(s);
export const isDecimal = (s: string | undefined): boolean => s !== undefined && /^[+-]?\d+\.\d+$/.test(s);

/** A report being built: location fields as they come, then the message. */
export class Report {
  fixTime?: Date;
  latitudeDeg?: number;
  longitudeDeg?: number;
  valid = false;
  speedKmh?: number;
  courseDeg?: number;
  satellites?: number;
  readonly alarms: Alarm[] = [];
  readonly attributes: Record<string, AttributeValue> = {};

  constructor(readonly f: Fields) {}

  coordinates(lat: number, lon: number): void {
    if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180)) this.f.fail(`coordinates out of range (${lat}, ${lon})`);
    this.latitudeDeg = lat;
    this.longitudeDeg = lon;
  }

  course(value: number): void {
    this.courseDeg = value >= 0 && value <= 360 ? value : 0;
  }

  alarm(alarm: Alarm | undefined): void {
    if (alarm && !this.alarms.includes(alarm)) this.alarms.push(alarm);
  }

  set(key: string, value: AttributeValue | undefined): void {
    if (value !== undefined && !(typeof value === 'number' && !Number.isFinite(value))) this.attributes[key] = value;
  }

  message(): DecodedMessage {
    const m: DecodedMessage = { alarms: this.alarms, attributes: this.attributes };
    if (this.fixTime) m.fixTime = this.fixTime;
    if (this.latitudeDeg !== undefined && this.longitudeDeg !== undefined) {
      const location: DecodedLocation = {
        latitudeDeg: this.latitudeDeg,
        longitudeDeg: this.longitudeDeg,
        valid: this.valid,
      };
      if (this.speedKmh !== undefined) location.speedKmh = Math.max(0, this.speedKmh);
      if (this.courseDeg !== undefined) location.courseDeg = this.courseDeg;
      if (this.satellites !== undefined) location.satellites = this.satellites;
      m.location = location;
    }
    return m;
  }
}
