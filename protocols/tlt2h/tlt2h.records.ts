import type { DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import { knotsToKmh } from '../shared/units.js';
import { PATTERN_RMC, PATTERN_WIFI, PROTOCOL } from './tlt2h.constants.js';

/** What one record line gives: its message, or none for a line the reference skips, and why not a fix time. */
export interface RecordOutcome {
  message?: DecodedMessage;
  warning?: string;
}

const INT_MAX = 2 ** 31 - 1;

function fail(line: string, reason: string): never {
  throw new ProtocolError(PROTOCOL, reason, Buffer.from(line, 'latin1'));
}

function int(line: string, s: string, radix = 10): number {
  const n = Number.parseInt(s, radix);
  if (!Number.isFinite(n) || n > INT_MAX) fail(line, `"${s}" is out of range`);
  return n;
}

/** 2 digits: tenths of a volt; 4 digits: millivolts */
const battery = (line: string, s: string): number => {
  const v = int(line, s);
  return v > 100 ? v / 1000 : v / 10;
};

function addCell(line: string, g: RegExpExecArray, network: NetworkInfo): void {
  if (g[2] === undefined) return;
  network.addCell(int(line, g[2]), int(line, g[3]), int(line, g[4], 16), int(line, g[5], 16));
}

/**
 * `ddmmyy` and `hhmmss` as a UTC instant; undefined when a field is out of range (the reference's
 * lenient calendar rolls such a date over, into the next year or decades ahead).
 */
function utc(day: string[], time: string[] | undefined): Date | undefined {
  const [dd, mo, yy] = day.map(Number);
  const [hh, mi, ss] = (time ?? ['0', '0', '0']).map(Number);
  if (mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh > 23 || mi > 59 || ss > 59) return undefined;
  return new Date(Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss));
}

function coordinate(line: string, deg: string, min: string, hemisphere: string, max: number): number {
  const value = int(line, deg) + Number(min) / 60;
  if (!(value <= max)) fail(line, `coordinate ${deg}${min} out of range`);
  return hemisphere === 'S' || hemisphere === 'W' ? -value : value;
}

/** `#<battery>[#mcc,mnc,lac,cid]$GPRMC,…`: a fix, or only the record's status when the fix is empty. */
export function decodeRmc(line: string): RecordOutcome {
  const g = PATTERN_RMC.exec(line);
  if (!g) return {};
  const m: DecodedMessage = { alarms: [], attributes: {} };
  if (g[1] !== undefined) m.attributes.battery = battery(line, g[1]);
  const network = new NetworkInfo();
  addCell(line, g, network);
  network.applyTo(m.attributes);
  if (g[10] === undefined) return { message: m };
  const courseDeg = g[17] === undefined ? 0 : Number(g[17]);
  if (courseDeg > 360) fail(line, `course ${courseDeg} out of range`);
  m.location = {
    latitudeDeg: coordinate(line, g[10], g[11], g[12], 90),
    longitudeDeg: coordinate(line, g[13], g[14], g[15], 180),
    valid: g[9] === 'A',
    speedKmh: knotsToKmh(g[16] === undefined ? 0 : Number(g[16])),
    courseDeg,
  };
  const time = g[6] === undefined ? undefined : [g[6], g[7], g[8]];
  const fixTime = utc([g[18], g[19], g[20]], time);
  if (fixTime) m.fixTime = fixTime;
  return fixTime ? { message: m } : { message: m, warning: 'impossible date or time: the receive time is used' };
}

/** `#<battery>[#][mcc,mnc,lac,cid]$WIFI,hhmmss.ss,A,<rssi>,<mac>,…,ddmmyy*xx`: access points, no fix. */
export function decodeWifi(line: string): RecordOutcome {
  const g = PATTERN_WIFI.exec(line);
  if (!g) return {};
  const m: DecodedMessage = { alarms: [], attributes: {} };
  if (g[1] !== undefined) m.attributes.battery = battery(line, g[1]);
  const network = new NetworkInfo();
  addCell(line, g, network);
  // Java's split: trailing empty values are dropped
  const values = g[9].replace(/,+$/, '').split(',');
  for (let i = 0; i + 1 < values.length; i += 2) {
    const mac = values[i + 1];
    if (mac.length < 12 || !/^[+-]?\d+$/.test(values[i])) fail(line, `access point "${values[i]},${mac}" unreadable`);
    const pairs = mac.substring(0, 12).match(/../g) ?? [];
    network.addWifi(pairs.join(':'), int(line, values[i]));
  }
  network.applyTo(m.attributes);
  const time = utc([g[10], g[11], g[12]], [g[6], g[7], g[8]]);
  if (time) m.fixTime = time;
  return { message: m };
}
