/**
 * The ASCII sentences Meiligao frames carry: the RMC-like position with its `|`-separated extras
 * (manual §4.1.3), the RFID variant and the OBD lines, read as Traccar's patterns read them.
 */
import { type DecodedMessage, ProtocolError } from '../types.js';
import { PROTOCOL } from './meiligao.constants.js';
import { knotsToKmh } from '../shared/units.js';

const HEX4 = '([0-9a-fA-F]{4})';
/**
 * `hhmmss[.sss],A|V,ddmm.mmmm,N|S,dddmm.mmmm,E|W,speed kn,course,ddmmyy…` then optionally
 * `|hdop|altitude|state|adc1,adc2[,…adc8]`, then either `|cell|rssi|odometer hex[|satellites[|card]]`
 * or `|odometer[|rfid]`.
 */
const POSITION = new RegExp(
  [
    '^(\\d+)(\\d{2})(\\d{2})\\.?\\d*,([AV]),(\\d+)(\\d{2}\\.\\d+),([NS]),(\\d+)(\\d{2}\\.\\d+),([EW]),',
    '(\\d+\\.?\\d*)?,(\\d+\\.?\\d*)?,(\\d{2})(\\d{2})(\\d{2})[^|]*',
    '(?:\\|(\\d+\\.\\d+)?\\|(-?\\d+\\.?\\d*)?\\|([0-9a-fA-F]{4})?',
    `(?:\\|${HEX4},${HEX4}${`(?:,${HEX4})?`.repeat(6)}`,
    '(?:\\|[0-9a-fA-F]{16,20}\\|([0-9a-fA-F]{2})\\|([0-9a-fA-F]{8})(?:\\|([0-9a-fA-F]{2})(?:\\|(.*))?)?',
    '|\\|(\\d{1,9})(?:\\|([0-9a-fA-F]{5,}))?)?)?)?',
  ].join(''),
  's',
);
// group numbers in POSITION
const G_HDOP = 16;
const G_ALTITUDE = 17;
const G_STATE = 18;
const G_ADC = 19;
const G_RSSI = 27;
const G_ODOMETER_HEX = 28;
const G_SATELLITES = 29;
const G_CARD = 30;
const G_ODOMETER = 31;
const G_DRIVER = 32;

const RFID = /^\|(\d{2})(\d{2})(\d{2}),(\d{2})(\d{2})(\d{2}),(\d+)(\d{2}\.\d+),([NS]),(\d+)(\d{2}\.\d+),([EW])$/s;

const OBD = new RegExp(
  '^(\\d+\\.\\d+),(\\d+),(\\d+),(\\d+\\.\\d+),(\\d+\\.\\d+),(-?\\d+),(\\d+\\.\\d+),(\\d+\\.\\d+),' +
    '(\\d+\\.\\d+),(\\d+\\.?\\d*),(\\d+\\.\\d+),(\\d+\\.\\d+),(\\d+),(\\d+),(\\d+)$',
  's',
);
const OBD_KEYS = [
  'battery',
  'rpm',
  'obdSpeed',
  'throttle',
  'engineLoad',
  'coolantTemp',
  'fuelConsumption',
  'averageFuelConsumption',
  'drivingRange',
  'odometer',
  'singleFuelConsumption',
  'fuelUsed',
  'dtcs',
  'hardAccelerationCount',
  'hardBrakingCount',
];

const OBD_A = /^(\d+),(\d+\.\d+),(\d+\.\d+),(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)$/s;
const OBD_A_KEYS = [
  'totalIgnitionNo',
  'totalDrivingTime',
  'totalIdlingTime',
  'averageHotStartTime',
  'averageSpeed',
  'historyHighestSpeed',
  'historyHighestRpm',
  'totalHarshAccerleration',
  'totalHarshBrake',
];

/**
 * `ddmm.mmmm` (degrees, then minutes) with its hemisphere, at most `limit` degrees: beyond it the
 * sentence is unreadable (Traccar's Position refuses it, and the frame yields nothing).
 */
function coordinate(degrees: string, minutes: string, hemisphere: string, limit: number): number {
  const value = Number(degrees) + Number(minutes) / 60;
  if (!(value <= limit)) throw new ProtocolError(PROTOCOL, `coordinate ${degrees}${minutes} is out of range`);
  return hemisphere === 'S' || hemisphere === 'W' ? -value : value;
}

const num = (s: string | undefined): number | undefined => (s === undefined || s === '' ? undefined : Number(s));
const hexNum = (s: string | undefined): number | undefined =>
  s === undefined || s === '' ? undefined : Number.parseInt(s, 16);

function put(m: DecodedMessage, key: string, value: string | number | boolean | undefined): void {
  if (value === undefined || value === '' || (typeof value === 'number' && !Number.isFinite(value))) return;
  m.attributes[key] = value;
}

/** date `dd mm yy` and time of day (Traccar DateBuilder: out-of-range fields roll over) */
function utc(yy: string, mo: string, dd: string, hh: string, mi: string, ss: string): Date {
  const time = Date.UTC(2000 + Number(yy), Number(mo) - 1, Number(dd), Number(hh), Number(mi), Number(ss));
  if (Number.isNaN(time) || hh.length > 9) throw new ProtocolError(PROTOCOL, `time ${hh}${mi}${ss} is unreadable`);
  return new Date(time);
}

/** The position sentence into `m`; false when it is not one (Traccar returns no position). */
export function readPosition(m: DecodedMessage, sentence: string): boolean {
  const g = POSITION.exec(sentence);
  if (!g) return false;
  const speed = num(g[11]);
  const course = num(g[12]);
  m.fixTime = utc(g[15], g[14], g[13], g[1], g[2], g[3]);
  m.location = {
    latitudeDeg: coordinate(g[5], g[6], g[7], 90),
    longitudeDeg: coordinate(g[8], g[9], g[10], 180),
    valid: g[4] === 'A',
    speedKmh: knotsToKmh(speed ?? 0),
    courseDeg: course ?? 0,
  };
  put(m, 'hdop', num(g[G_HDOP]));
  const altitude = num(g[G_ALTITUDE]);
  if (altitude !== undefined) m.location.altitudeM = altitude;
  const state = hexNum(g[G_STATE]);
  if (state !== undefined) {
    for (let i = 1; i <= 5; i++) put(m, `out${i}`, (state & (1 << (i - 1))) !== 0);
    for (let i = 1; i <= 5; i++) put(m, `in${i}`, (state & (1 << (i + 7))) !== 0);
  }
  for (let i = 0; i < 8; i++) put(m, `adc${i + 1}`, hexNum(g[G_ADC + i]));
  put(m, 'rssi', hexNum(g[G_RSSI]));
  put(m, 'odometer', hexNum(g[G_ODOMETER_HEX]));
  put(m, 'sat', hexNum(g[G_SATELLITES]));
  put(m, 'card', g[G_CARD]);
  put(m, 'odometer', num(g[G_ODOMETER]));
  put(m, 'driverUniqueId', g[G_DRIVER]);
  return true;
}

/** The RFID sentence `|hhmmss,ddmmyy,lat,N,lon,E` into `m` (always valid); false when it is not one. */
export function readRfidPosition(m: DecodedMessage, sentence: string): boolean {
  const g = RFID.exec(sentence);
  if (!g) return false;
  m.fixTime = utc(g[6], g[5], g[4], g[1], g[2], g[3]);
  m.location = {
    latitudeDeg: coordinate(g[7], g[8], g[9], 90),
    longitudeDeg: coordinate(g[10], g[11], g[12], 180),
    valid: true,
  };
  return true;
}

/** An OBD line (0x9901 real time, 0x9902 totals) as attributes; false when it is not one. */
export function readObd(m: DecodedMessage, sentence: string, totals: boolean): boolean {
  const g = (totals ? OBD_A : OBD).exec(sentence);
  if (!g) return false;
  const keys = totals ? OBD_A_KEYS : OBD_KEYS;
  keys.forEach((key, i) => put(m, key, Number(g[i + 1])));
  return true;
}
