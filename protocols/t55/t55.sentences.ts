import type { AttributeValue, DecodedLocation, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { nearestTimeOfDay } from '../shared/time.js';
import { knotsToKmh } from '../shared/units.js';
import { PROTOCOL } from './t55.constants.js';

/** What a sentence gives: its message (if it has one), and the device it names itself. */
export interface Sentence {
  message?: DecodedMessage;
  identity?: string;
}

/** Reads one kind of sentence; `now` dates the sentences that carry only a time of day. */
export type SentenceReader = (sentence: string, now: Date) => Sentence;

const num = (s: string | undefined, fallback = 0): number => (s === undefined || s === '' ? fallback : Number(s));

/** `ddmm.mmmm` split as the layout groups it, and its hemisphere */
function degMin(deg: string, min: string, hemisphere: string, max: number): number {
  const v = Number(deg) + Number(min) / 60;
  if (!(v <= max)) throw new ProtocolError(PROTOCOL, `coordinate ${deg}${min}${hemisphere} out of range`);
  return hemisphere === 'S' || hemisphere === 'W' ? -v : v;
}

/** a decimal coordinate, checked */
function degrees(value: string, max: number, hemisphere = ''): number {
  const v = Number(value);
  if (!(Math.abs(v) <= max)) throw new ProtocolError(PROTOCOL, `coordinate ${value} out of range`);
  return hemisphere === 'S' || hemisphere === 'W' ? -Math.abs(v) : v;
}

/** a full date and time, refused when it is no calendar date; two-digit years are 20yy */
export function dateTime(year: number, month: number, day: number, h: number, m: number, s: number): Date {
  const y = year < 100 ? 2000 + year : year;
  const t = new Date(Date.UTC(y, month - 1, day, h, m, s));
  if (month < 1 || month > 12 || day < 1 || t.getUTCDate() !== day || h > 23 || m > 59 || s > 59)
    throw new ProtocolError(PROTOCOL, `no such time ${y}-${month}-${day} ${h}:${m}:${s}`);
  return t;
}

/** a time of day (the sentence has no date): the nearest such instant to the receive time */
function timeOfDay(now: Date, h: string, m: string, s: string): Date {
  if (Number(h) > 23 || Number(m) > 59 || Number(s) > 59)
    throw new ProtocolError(PROTOCOL, `no such time ${h}${m}${s}`);
  return nearestTimeOfDay(now, Number(h), Number(m), Number(s));
}

function course(value: number): { courseDeg?: number } {
  return value >= 0 && value <= 360 ? { courseDeg: value } : {};
}

function message(
  location: DecodedLocation | undefined,
  attributes: Record<string, AttributeValue> = {},
  fixTime?: Date,
): DecodedMessage {
  return { ...(fixTime && { fixTime }), ...(location && { location }), alarms: [], attributes };
}

/**
 * `$GPRMC,hhmmss[.s],A|V,ddmm.m,N|S,dddmm.m,E|W,knots,course,ddmmyy,...` (NMEA 0183 RMC; GN/GL
 * talkers too). Some trackers write after the checksum `,sat,imei,ignition,fuel,battery[,io...]`:
 * then the line names its device.
 */
const RMC =
  /^\$G[PLN]RMC,(\d\d)(\d\d)(\d\d)\.?\d*,([AV]),(\d\d)(\d\d\.\d+),([NS]),(\d{2,3})(\d\d\.\d+),([EW]),(\d+\.?\d*)?,(\d+\.?\d*)?,(\d\d)(\d\d)(\d\d),[^*]+(?:\*[^,]+,(\d+),(\d+),([01]),(\d+),(\d+))?((?:,\d+)+)?.*$/s;

export const readRmc: SentenceReader = (s) => {
  const g = RMC.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'an RMC sentence that matches no known layout');
  const fixTime = dateTime(+g[15], +g[14], +g[13], +g[1], +g[2], +g[3]);
  const location: DecodedLocation = {
    latitudeDeg: degMin(g[5], g[6], g[7], 90),
    longitudeDeg: degMin(g[8], g[9], g[10], 180),
    valid: g[4] === 'A',
    speedKmh: knotsToKmh(num(g[11])),
    ...course(num(g[12])),
  };
  const a: Record<string, AttributeValue> = {};
  if (g[16] !== undefined) {
    location.satellites = Number(g[16]);
    a.sat = Number(g[16]);
    a.ignition = g[18] === '1';
    a.fuel = Number(g[19]);
    a.battery = Number(g[20]);
  }
  if (g[21] !== undefined) g[21].split(',').forEach((v, i) => i > 0 && (a[`io${i}`] = v));
  return { message: message(location, a, fixTime), ...(g[17] !== undefined && { identity: g[17] }) };
};

/** `$GPGGA,hhmmss,lat,N,lon,E,fix quality,satellites,hdop,altitude,M,...` (NMEA 0183 GGA): no date */
const GGA =
  /^\$G[PLN]GGA,(\d\d)(\d\d)(\d\d)\.?\d*,(\d+)(\d\d\.\d+),([NS]),(\d+)(\d\d\.\d+),([EW]),(\d+),(\d+),(\d+\.?\d*),(-?\d+\.?\d*),.*$/s;

export const readGga: SentenceReader = (s, now) => {
  const g = GGA.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'a GGA sentence that matches no known layout');
  const satellites = Number(g[11]);
  const location: DecodedLocation = {
    latitudeDeg: degMin(g[4], g[5], g[6], 90),
    longitudeDeg: degMin(g[7], g[8], g[9], 180),
    valid: Number(g[10]) > 0,
    altitudeM: Number(g[13]),
    satellites,
  };
  return { message: message(location, { sat: satellites, hdop: Number(g[12]) }, timeOfDay(now, g[1], g[2], g[3])) };
};

/** `$GPGLL,lat,N,lon,E,hhmmss,A|V,...` (NMEA 0183 GLL): no date */
const GLL = /^\$G[PLN]GLL,(\d+)(\d\d\.\d+),([NS]),(\d+)(\d\d\.\d+),([EW]),(\d\d)(\d\d)(\d\d)\.?\d*,([AV]),.*$/s;

export const readGll: SentenceReader = (s, now) => {
  const g = GLL.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'a GLL sentence that matches no known layout');
  const location: DecodedLocation = {
    latitudeDeg: degMin(g[1], g[2], g[3], 90),
    longitudeDeg: degMin(g[4], g[5], g[6], 180),
    valid: g[10] === 'A',
  };
  return { message: message(location, {}, timeOfDay(now, g[7], g[8], g[9])) };
};

/** `$GPRMA,A|V,lat,N,lon,E,,,knots,course,...` (NMEA 0183 RMA, Loran-C): no time; dated when received */
const RMA = /^\$GPRMA,([AV]),(\d\d)(\d\d\.\d+),([NS]),(\d{3})(\d\d\.\d+),([EW]),,,(\d+\.?\d*)?,(\d+\.?\d*)?,.*$/s;

export const readRma: SentenceReader = (s, now) => {
  const g = RMA.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'an RMA sentence that matches no known layout');
  const location: DecodedLocation = {
    latitudeDeg: degMin(g[2], g[3], g[4], 90),
    longitudeDeg: degMin(g[5], g[6], g[7], 180),
    valid: g[1] === 'A',
    speedKmh: knotsToKmh(num(g[8])),
    ...course(num(g[9])),
  };
  return { message: message(location, {}, now) };
};

/** `$TRCCR,yyyymmddhhmmss.sss,A|V,lat,lon,knots,course,altitude,battery,...` (decimal degrees) */
const TRCCR =
  /^\$TRCCR,(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)\.?\d*,([AV]),(-?\d+\.\d+),(-?\d+\.\d+),(\d+\.\d+),(\d+\.\d+),(-?\d+\.\d+),(\d+\.?\d*),.*$/s;

export const readTrccr: SentenceReader = (s) => {
  const g = TRCCR.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'a TRCCR sentence that matches no known layout');
  const location: DecodedLocation = {
    latitudeDeg: degrees(g[8], 90),
    longitudeDeg: degrees(g[9], 180),
    valid: g[7] === 'A',
    speedKmh: knotsToKmh(Number(g[10])),
    ...course(Number(g[11])),
    altitudeM: Number(g[12]),
  };
  const fixTime = dateTime(+g[1], +g[2], +g[3], +g[4], +g[5], +g[6]);
  return { message: message(location, { battery: Number(g[13]) }, fixTime) };
};

/** `$GPIOP,inputs,outputs,adc1,adc2,adc3,adc4,power,battery` (8-bit I/O masks, volts): no fix */
const GPIOP = /^\$GPIOP,[01]{8},[01]{8},\d+\.\d+,\d+\.\d+,\d+\.\d+,\d+\.\d+,(\d+\.\d+),(\d+\.\d+).*$/s;

export const readGpiop: SentenceReader = (s) => {
  const g = GPIOP.exec(s);
  if (!g) throw new ProtocolError(PROTOCOL, 'a GPIOP sentence that matches no known layout');
  return { message: message(undefined, { power: Number(g[1]), battery: Number(g[2]) }) };
};
