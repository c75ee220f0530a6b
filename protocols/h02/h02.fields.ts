import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue } from '../types.js';
import { STATUS_ALARMS, STATUS_IGNITION_BIT } from './h02.constants.js';

// Field formats of H02 frames, as H02ProtocolDecoder's patterns accept them.

const HEX8 = /^[0-9A-Fa-f]{8}$/;

export const isHex8 = (value: string | undefined): value is string => value !== undefined && HEX8.test(value);
export const isDigits = (value: string | undefined, length?: number): value is string =>
  value !== undefined && (length === undefined || value.length === length) && /^\d+$/.test(value);

/**
 * A text coordinate in one of the three layouts H02 devices send, signed by its hemisphere:
 * `-DD-MM.MMMM`, `DDMM.MMMM` (degrees may be absent or 1-3 digits) and `DDMMmmmm`.
 * Undefined when the value or hemisphere does not fit.
 */
export function textCoordinate(value: string, hemisphere: string, positive: 'N' | 'E'): number | undefined {
  const negative = positive === 'N' ? 'S' : 'W';
  if (hemisphere !== positive && hemisphere !== negative) return undefined;
  let degrees: number;
  let minutes: number;
  let m: RegExpExecArray | null;
  if ((m = /^-(\d+)-(\d+\.\d+)$/.exec(value))) {
    degrees = Number(m[1]);
    minutes = Number(m[2]);
  } else if ((m = /^(\d*)(\d\d\.\d+)$/.exec(value))) {
    degrees = m[1] ? Number(m[1]) : 0;
    minutes = Number(m[2]);
  } else if ((m = /^(\d+)(\d\d)(\d{4})$/.exec(value))) {
    degrees = Number(m[1]);
    minutes = Number(m[2]) + Number(m[3]) / 10_000;
  } else {
    return undefined;
  }
  const result = degrees + minutes / 60;
  return hemisphere === negative ? -result : result;
}

/** A coordinate field a device sends when it has no fix: empty, or zeros with no hemisphere. */
export const isNoFixCoordinate = (value: string | undefined): boolean => value === undefined || /^[0.]*$/.test(value);

/** UTC date from `ddmmyy` and `hhmmss` parts; undefined when a part is out of range. */
export function utcDate(day: number, month: number, year: number, hour = 0, minute = 0, second = 0): Date | undefined {
  if (![day, month, year, hour, minute, second].every(Number.isInteger)) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(Date.UTC(2000 + year, month - 1, day, hour, minute, second));
  return date.getUTCDate() === day ? date : undefined;
}

/** `ddmmyy` + `hhmmss` text fields (time may be empty: midnight, as Traccar's DateBuilder) */
export function textDate(ddmmyy: string, hhmmss: string): Date | undefined {
  if (!isDigits(ddmmyy, 6) || (hhmmss !== '' && !isDigits(hhmmss, 6))) return undefined;
  const t = hhmmss || '000000';
  return utcDate(
    Number(ddmmyy.slice(0, 2)),
    Number(ddmmyy.slice(2, 4)),
    Number(ddmmyy.slice(4, 6)),
    Number(t.slice(0, 2)),
    Number(t.slice(2, 4)),
    Number(t.slice(4, 6)),
  );
}

/** Alarms (inverted bits) and attributes of the 32-bit status word, H02ProtocolDecoder.processStatus */
export function decodeStatus(status: number): { alarms: Alarm[]; attributes: Record<string, AttributeValue> } {
  const alarms: Alarm[] = [];
  for (const { bit, alarm } of STATUS_ALARMS) {
    if (((status >>> bit) & 1) === 0 && !alarms.includes(alarm)) alarms.push(alarm);
  }
  return { alarms, attributes: { status, ignition: ((status >>> STATUS_IGNITION_BIT) & 1) === 1 } };
}

/** Battery byte of binary frames to a percentage, H02ProtocolDecoder.decodeBattery */
export function decodeBattery(value: number): number | undefined {
  if (value === 0) return undefined;
  if (value <= 3) return (value - 1) * 10;
  if (value <= 6) return (value - 1) * 20;
  if (value <= 100) return value;
  if (value >= 0xf1 && value <= 0xf6) return value - 0xf0;
  return undefined;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `yyyyMMddHHmmss` in UTC (V4 acknowledgements) */
export const utcStamp = (d: Date): string =>
  pad(d.getUTCFullYear(), 4) +
  pad(d.getUTCMonth() + 1) +
  pad(d.getUTCDate()) +
  pad(d.getUTCHours()) +
  pad(d.getUTCMinutes()) +
  pad(d.getUTCSeconds());
