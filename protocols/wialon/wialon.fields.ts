import type { AttributeValue, DecodedLocation, DecodedMessage } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import { DATA_FIELDS, PARAM } from './wialon.constants.js';

type Attributes = Record<string, AttributeValue>;

/** Java's String.split: trailing empty parts are dropped (all of them when every part is empty). */
export function javaSplit(s: string, separator: string): string[] {
  if (!s.includes(separator)) return [s];
  const parts = s.split(separator);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** The frame is read as latin1 (byte offsets for the CRC); text values are UTF-8, as IPS 2.0 says. */
const utf8 = (s: string): string => Buffer.from(s, 'latin1').toString('utf8');

const JAVA_DOUBLE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?$/;

/** A parameter's value as Traccar keeps it: a number when Java reads it as a double, else a boolean or text. */
function paramValue(value: string): AttributeValue {
  const trimmed = value.trim();
  if (JAVA_DOUBLE.test(trimmed)) {
    const n = Number.parseFloat(trimmed);
    if (Number.isFinite(n)) return n;
  }
  if (value.toLowerCase() === 'true') return true;
  if (value.toLowerCase() === 'false') return false;
  return value;
}

const numeric = (v: AttributeValue | undefined): number | undefined => {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && JAVA_DOUBLE.test(v.trim())) return Number.parseFloat(v);
  return undefined;
};

/** Moves `key` to `to` as an integer (Java's intValue truncates), when it holds a number. */
function moveInteger(a: Attributes, key: string, to: string): void {
  const n = numeric(a[key]);
  if (n === undefined) return;
  delete a[key];
  a[to] = Math.trunc(n);
}

/**
 * Cell towers in params, as Traccar reads them: `mcc`, `mnc`, `lac`, `cell_id`, then the same with
 * the suffixes 1 to 9 until one is incomplete. `cell_id` stays an attribute, the rest move into
 * the `network` attribute.
 */
function cellTowers(a: Attributes): void {
  const network = new NetworkInfo();
  const tower = (suffix: string): boolean => {
    const [mcc, mnc, lac, cid] = ['mcc', 'mnc', 'lac', 'cell_id'].map((k) => numeric(a[k + suffix]));
    if (mcc === undefined || mnc === undefined || lac === undefined || cid === undefined) return false;
    for (const k of ['mcc', 'mnc', 'lac']) delete a[k + suffix];
    network.addCell(Math.trunc(mcc), Math.trunc(mnc), Math.trunc(lac), Math.trunc(cid));
    return true;
  };
  tower('');
  for (let i = 1; i <= 9 && tower(String(i)); i++);
  network.applyTo(a);
}

/** `name:type:value,…` (IPS 2.0 "Additional parameters"): names lower-cased, as Traccar keeps them. */
function decodeParams(text: string, m: DecodedMessage): void {
  const a = m.attributes;
  for (const param of javaSplit(text, ',')) {
    const p = PARAM.exec(param);
    if (!p) continue;
    const value = paramValue(utf8(p[2]));
    if (value !== '') a[utf8(p[1]).toLowerCase()] = value;
  }
  const accuracy = numeric(a.accuracy);
  if (accuracy !== undefined && m.location) {
    delete a.accuracy;
    m.location.accuracyM = accuracy;
  }
  moveInteger(a, 'bat', 'batteryLevel');
  moveInteger(a, 'temp', 'deviceTemp');
  cellTowers(a);
}

const int = (s: string): number => Number.parseInt(s, 10);

function coordinate(degrees: string, minutes: string, hemisphere: string | undefined, negative: string): number {
  const value = int(degrees) + Number.parseFloat(minutes) / 60;
  return hemisphere === negative ? -value : value;
}

/**
 * Date, time and the fix. No date or no time: the receive time, as Traccar takes it. No latitude or
 * no longitude: no location (Traccar writes 0/0 or the last known place there).
 */
function fix(g: RegExpExecArray, now: Date): { fixTime: Date; location?: DecodedLocation } {
  const fixTime = g.slice(1, 7).every((x) => x !== undefined)
    ? new Date(Date.UTC(2000 + int(g[3]), int(g[2]) - 1, int(g[1]), int(g[4]), int(g[5]), int(g[6])))
    : now;
  if (g[7] === undefined || g[10] === undefined) return { fixTime };
  const location: DecodedLocation = {
    latitudeDeg: coordinate(g[7], g[8], g[9], 'S'),
    longitudeDeg: coordinate(g[10], g[11], g[12], 'W'),
    valid: g[16] !== undefined && int(g[16]) >= 3,
  };
  if (g[13]) location.speedKmh = Number.parseFloat(g[13]);
  if (g[14]) location.courseDeg = Number.parseFloat(g[14]);
  if (g[15]) location.altitudeM = Number.parseFloat(g[15]);
  return { fixTime, location };
}

/** The extended fields of a D packet: hdop, inputs, outputs, adc1…, iButton key, params. */
function extended(g: RegExpExecArray, m: DecodedMessage): void {
  const a = m.attributes;
  if (g[17]) a.hdop = Number.parseFloat(g[17]);
  if (g[18]) a.input = g[18];
  if (g[19]) a.output = g[19];
  if (g[20]) javaSplit(g[20], ',').forEach((v, i) => v !== '' && (a[`adc${i + 1}`] = v));
  if (g[21]) a.driverUniqueId = utf8(g[21]);
  if (g[22]) decodeParams(g[22], m);
}

/** One SD/D message or black-box record; undefined when its fields do not read or its place cannot be. */
export function decodeDataFields(text: string, now: Date): DecodedMessage | undefined {
  const g = DATA_FIELDS.exec(text);
  if (!g) return undefined;
  const { fixTime, location } = fix(g, now);
  if (location && !(Math.abs(location.latitudeDeg) <= 90 && Math.abs(location.longitudeDeg) <= 180)) return undefined;
  const m: DecodedMessage = { fixTime, alarms: [], attributes: {}, ...(location && { location }) };
  if (g[16]) m.attributes.sat = int(g[16]);
  extended(g, m);
  return m;
}
