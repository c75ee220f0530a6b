import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue, DecodeContext, DecodeResult, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { knotsToKmh } from '../shared/units.js';
import {
  FULL_OFFSET,
  PATTERN_BASIC,
  PATTERN_FULL,
  PATTERN_IMEI,
  PROTOCOL,
  SETTING_EXTENDED,
  STATUS_ALARMS,
  STATUS_IGNITION,
} from './xexun.constants.js';

const int = (s: string | undefined): number => (s ? parseInt(s, 10) : 0);
const Y2K = 2000;

/** `ddmm.mmmm`, the degrees possibly missing; S and W are negative (Traccar Parser DEG_MIN_HEM) */
function coordinate(deg: string, min: string, hemisphere: string | undefined): number {
  const value = int(deg) + Number(min) / 60;
  return hemisphere === 'S' || hemisphere === 'W' ? -value : value;
}

/** hhmmss from groups `at`..`at+2`, ddmmyy from `at+12`..`at+14`; no date, no fix time */
function fixTime(g: RegExpExecArray, at: number): Date | undefined {
  const [hh, mi, ss] = [0, 1, 2].map((i) => int(g[at + i]));
  const [dd, mo, yy] = [12, 13, 14].map((i) => int(g[at + i]));
  if (dd === 0 || mo === 0 || mo > 12 || hh > 23 || mi > 59 || ss > 59) return undefined;
  return new Date(Date.UTC(Y2K + yy, mo - 1, dd, hh, mi, ss));
}

/** The RMC sentence's XOR checksum (from `G` to `*`, NMEA without its `$`), or a mismatch text. */
function checksumError(text: string, start: number): string | undefined {
  const star = text.indexOf('*', start);
  if (star < 0) return 'no RMC checksum';
  let x = 0;
  for (let i = start; i < star; i++) x ^= text.charCodeAt(i);
  const given = text.substring(star + 1, star + 3).toUpperCase();
  const computed = x.toString(16).toUpperCase().padStart(2, '0');
  return given === computed ? undefined : `RMC checksum ${given} != computed ${computed}`;
}

/** The report of a basic record whose groups start at `at` (1 for a basic record, 3 in a full line). */
function report(g: RegExpExecArray, at: number): DecodedMessage {
  const status = (g[at + 16] ?? '').toLowerCase();
  const alarm: Alarm | undefined = STATUS_ALARMS[status];
  const attributes: Record<string, AttributeValue> = { signal: g[at + 15] };
  const ignition = STATUS_IGNITION[status];
  if (ignition !== undefined) attributes.ignition = ignition;
  const time = fixTime(g, at);
  const latitudeDeg = coordinate(g[at + 4], g[at + 5], g[at + 6]);
  const longitudeDeg = coordinate(g[at + 7], g[at + 8], g[at + 9]);
  // Traccar refuses such a position (Position.setLatitude throws)
  if (Math.abs(latitudeDeg) > 90 || Math.abs(longitudeDeg) > 180)
    throw new ProtocolError(PROTOCOL, `coordinates out of range: ${latitudeDeg}, ${longitudeDeg}`);
  return {
    ...(time && { fixTime: time }),
    location: {
      latitudeDeg,
      longitudeDeg,
      valid: g[at + 3] === 'A',
      speedKmh: knotsToKmh(Number(g[at + 10])),
      courseDeg: g[at + 11] ? Number(g[at + 11]) : 0,
    },
    alarms: alarm ? [alarm] : [],
    attributes,
  };
}

/** A full line: serial, phone, the basic record, then satellites, altitude and power. */
function decodeFull(text: string): { imei: string; message: DecodedMessage; rmc: number } | undefined {
  const g = PATTERN_FULL.exec(text);
  if (!g) return undefined;
  const at = 1 + FULL_OFFSET;
  const message = report(g, at);
  const satellites = int(g[at + 18]);
  message.location = { ...message.location!, altitudeM: g[at + 19] ? Number(g[at + 19]) : 0, satellites };
  message.attributes = {
    serial: g[1],
    ...(g[2] !== undefined && { number: g[2] }),
    ...message.attributes,
    sat: satellites,
    power: Number(g[at + 20]),
  };
  return { imei: g[at + 17], message, rmc: text.search(/G[PN]RMC,/) };
}

function decodeBasic(text: string): { imei: string; message: DecodedMessage; rmc: number } | undefined {
  const g = PATTERN_BASIC.exec(text);
  return g ? { imei: g[18], message: report(g, 1), rmc: g.index } : undefined;
}

/**
 * One record as the splitter cuts it (a basic record, or a whole line), or a frame given to
 * `trackgate decode`. The device setting `extended=true` reads the full line (serial, phone,
 * satellites, altitude, power); otherwise only the basic record in it. Nothing is answered.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const text = frame.toString('latin1');
  const extended = ctx.options?.[SETTING_EXTENDED] === 'true';
  const found = extended ? decodeFull(text) : decodeBasic(text);
  if (!found) {
    const identity = PATTERN_IMEI.exec(text)?.[1];
    // a line without a fix still names its device (Traccar returns nothing for it)
    if (identity && !/G[PN]RMC,/.test(text)) return { identity, messages: [], replies: [] };
    throw new ProtocolError(PROTOCOL, `not a ${extended ? 'full' : 'basic'} Xexun record`, frame, {
      ...(identity && { identity }),
    });
  }
  const error = checksumError(text, found.rmc);
  if (error && ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, error, frame, { identity: found.imei });
  return {
    identity: found.imei,
    messages: [found.message],
    replies: [],
    ...(error && { checksumError: error, warnings: [error] }),
  };
}
