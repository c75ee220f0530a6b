import type { AttributeValue, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import {
  PATTERN_HEARTBEAT,
  PATTERN_LBS,
  PATTERN_POSITION,
  PATTERN_STATUS,
  POSITION_ALARMS,
  PROTOCOL,
  TYPE_BLOOD_PRESSURE,
  TYPE_HEALTH,
  TYPE_HEART_RATE,
  TYPE_TEMPERATURE,
} from './trv.constants.js';

/** One message of a known device: what it reports (none when the reference reports nothing). */
export type TrvHandler = (sentence: string, type: string) => DecodedMessage[];

const INT_MAX = 2 ** 31 - 1;

function fail(sentence: string, reason: string): never {
  throw new ProtocolError(PROTOCOL, reason, Buffer.from(sentence, 'latin1'));
}

/** A decimal integer as Java's Integer.parseInt reads it; anything else makes the frame unreadable. */
function int(sentence: string, s: string | undefined): number {
  if (s === undefined || !/^[+-]?\d+$/.test(s)) fail(sentence, `"${s ?? ''}" is no integer`);
  const n = Number.parseInt(s, 10);
  if (Math.abs(n) > INT_MAX) fail(sentence, `"${s}" is out of range`);
  return n;
}

/** A decimal number as Double.parseDouble reads the usual forms. */
function double(sentence: string, s: string | undefined): number {
  const n = s === undefined || !/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(s) ? Number.NaN : Number(s);
  if (!Number.isFinite(n)) fail(sentence, `"${s ?? ''}" is no number`);
  return n;
}

/** A field that is 0 when not reported: true when it is `active`, else false. */
function optionalFlag(a: Record<string, AttributeValue>, key: string, value: number, active: number): void {
  if (value !== 0) a[key] = value === active;
}

/** GSM signal, satellites, battery, ACC, arm state and working mode, shared by positions and CP01. */
function decodeCommon(sentence: string, g: RegExpExecArray, first: number, a: Record<string, AttributeValue>): void {
  const [rssi, sat, battery, acc, armed, mode] = [0, 1, 2, 3, 4, 5].map((i) => int(sentence, g[first + i]));
  a.rssi = rssi;
  a.sat = sat;
  a.battery = battery;
  optionalFlag(a, 'ignition', acc, 1);
  optionalFlag(a, 'armed', armed, 1);
  if (mode !== 0) a.mode = mode;
}

/** `name|aa-bb-cc-dd-ee-ff|rssi&…`: every access point, its MAC written with colons. */
function decodeWifi(sentence: string, data: string, network: NetworkInfo): void {
  for (const wifi of data.split('&')) {
    if (wifi === '') continue;
    const values = wifi.split('|');
    if (values.length < 3) fail(sentence, `Wi-Fi entry "${wifi}" is not name|mac|rssi`);
    network.addWifi(values[1].replace(/-/g, ':'), int(sentence, values[2]));
  }
}

function coordinate(sentence: string, deg: string, min: string, hemisphere: string, max: number): number {
  const value = int(sentence, deg) + double(sentence, min) / 60;
  if (value > max) fail(sentence, `coordinate ${deg}${min} out of range`);
  return hemisphere === 'S' || hemisphere === 'W' ? -value : value;
}

function fixTime(sentence: string, g: RegExpExecArray): Date {
  const [yy, mo, dd] = [1, 2, 3].map((i) => int(sentence, g[i]));
  const [hh, mi, ss] = [12, 13, 14].map((i) => int(sentence, g[i]));
  if (mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh > 23 || mi > 59 || ss > 59)
    fail(sentence, 'impossible date or time');
  return new Date(Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss));
}

/** AP01 / AP10 / YP03 / YP14: a GPS fix with its cell, alarm and Wi-Fi. */
export const decodePosition: TrvHandler = (sentence) => {
  const g = PATTERN_POSITION.exec(sentence);
  if (!g) return [];
  const courseDeg = double(sentence, g[15]);
  if (courseDeg < 0 || courseDeg > 360) fail(sentence, `course ${g[15]} out of range`);
  const m: DecodedMessage = {
    fixTime: fixTime(sentence, g),
    location: {
      latitudeDeg: coordinate(sentence, g[5], g[6], g[7], 90),
      longitudeDeg: coordinate(sentence, g[8], g[9], g[10], 180),
      valid: g[4] === 'A',
      speedKmh: double(sentence, g[11]),
      courseDeg,
    },
    alarms: [],
    attributes: {},
  };
  decodeCommon(sentence, g, 16, m.attributes);
  const network = new NetworkInfo();
  network.addCell(...([22, 23, 24, 25].map((i) => int(sentence, g[i])) as [number, number, number, number]));
  const alarm = g[26] === undefined ? undefined : POSITION_ALARMS[int(sentence, g[26])];
  if (alarm) m.alarms.push(alarm);
  if (g[27] !== undefined) decodeWifi(sentence, g[27], network);
  network.applyTo(m.attributes);
  return [m];
};

/** CP01: the tracker's state, no fix. */
export const decodeStatus: TrvHandler = (sentence) => {
  const g = PATTERN_STATUS.exec(sentence);
  if (!g) return [];
  const m: DecodedMessage = { alarms: [], attributes: {} };
  decodeCommon(sentence, g, 1, m.attributes);
  if (g[7] !== undefined) {
    optionalFlag(m.attributes, 'blocked', int(sentence, g[7]), 2);
    optionalFlag(m.attributes, 'charge', int(sentence, g[8]), 1);
    optionalFlag(m.attributes, 'motion', int(sentence, g[9]), 1);
  }
  return [m];
};

/** AP02: cells and Wi-Fi for a network fix, no GPS. */
export const decodeLbs: TrvHandler = (sentence) => {
  const g = PATTERN_LBS.exec(sentence);
  if (!g) return [];
  const mcc = int(sentence, g[1]);
  const mnc = int(sentence, g[2]);
  const network = new NetworkInfo();
  for (const cell of g[3].split(',')) {
    if (cell === '') continue;
    const [lac, cid, rssi] = cell.split('|').map((v) => int(sentence, v));
    network.addCell(mcc, mnc, lac, cid, rssi);
  }
  decodeWifi(sentence, g[4], network);
  const m: DecodedMessage = { alarms: [], attributes: {} };
  network.applyTo(m.attributes);
  return [m];
};

/** AP03 heartbeat: signal, satellites, battery level and steps. */
export const decodeHeartbeat: TrvHandler = (sentence) => {
  const g = PATTERN_HEARTBEAT.exec(sentence);
  if (!g) return [];
  const [rssi, sat, batteryLevel, steps] = [1, 2, 3, 4].map((i) => int(sentence, g[i]));
  return [{ alarms: [], attributes: { rssi, sat, batteryLevel, steps } }];
};

/** AP49 heart rate, APHT blood pressure, APHP health data, AP50 body temperature: comma-separated values. */
export const decodeHealth: TrvHandler = (sentence, type) => {
  // Java's split: trailing empty values are dropped
  const values = sentence.replace(/,+$/, '').split(',');
  const i = (n: number): number => int(sentence, values[n]);
  const d = (n: number): number => double(sentence, values[n]);
  const a: Record<string, AttributeValue> = {};
  if (type === TYPE_HEART_RATE) a.heartRate = i(1);
  else if (type === TYPE_BLOOD_PRESSURE || type === TYPE_HEALTH) {
    a.heartRate = i(1);
    a.pressureSystolic = i(2);
    a.pressureDiastolic = i(3);
    if (type === TYPE_HEALTH) {
      a.spo2 = i(4);
      a.bloodSugar = d(5);
      a.temperature = d(6);
    }
  } else if (type === TYPE_TEMPERATURE) {
    a.temperature = d(1);
    a.batteryLevel = i(2);
  }
  return [{ alarms: [], attributes: a }];
};
