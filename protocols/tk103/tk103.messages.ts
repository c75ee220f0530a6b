import type { AttributeValue, DecodeContext, DecodedMessage, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import {
  BATTERY_LEVELS,
  BO01_ALARMS,
  BQ81_ALARMS,
  IGNITION_OFF,
  IGNITION_ON,
  PATTERN_BATTERY,
  PATTERN_CELL,
  PATTERN_COMMAND_RESULT,
  PATTERN_LBS_WIFI,
  PATTERN_NETWORK,
  PATTERN_POSITION,
  PATTERN_VIN,
  PROTOCOL,
  TYPE_ALARMS,
  replyAlarm,
} from './tk103.constants.js';

/** One sentence `(...)` in; `id` is the 12 characters after `(` (what acknowledgements carry). */
export type SentenceHandler = (sentence: string, ctx: DecodeContext) => DecodeResult;

const int = (s: string): number => parseInt(s, 10);
const hexInt = (s: string): number => parseInt(s, 16);
const text = (s: string): Buffer => Buffer.from(s, 'latin1');
const Y2K = 2000;

/** the 12-character id of `(<id><command>...)` */
export const shortId = (sentence: string): string => sentence.substring(1, 13);

/** The device a sentence names: the comma form's first field, else the 12-character id before a command word. */
export function namedDevice(sentence: string): string | undefined {
  const comma = /^\((\d{6,20}),/.exec(sentence);
  if (comma) return comma[1];
  return /^\([0-9A-Za-z]{12}[A-Z]{2}[0-9A-F]{2}/.test(sentence) ? shortId(sentence) : undefined;
}

/**
 * A sentence that matches no known layout (Traccar returns nothing for it): a frame this decoder
 * cannot read, thrown as such, naming the device the sentence names (for the raw-frame feed).
 */
export function unrecognised(sentence: string): never {
  const identity = namedDevice(sentence);
  throw new ProtocolError(PROTOCOL, 'unrecognised tk103 sentence', Buffer.from(sentence, 'latin1'), {
    ...(identity && { identity }),
  });
}

/** day, month, two-digit year, hours, minutes, seconds as a UTC date; out-of-range fields roll over as Traccar's (lenient) calendar does */
const utc = (dd: string, mo: string, yy: string, hh: string, mi: string, ss: string): Date =>
  new Date(Date.UTC(Y2K + int(yy), int(mo) - 1, int(dd), int(hh), int(mi), int(ss)));

function coordinate(deg: string, min: string, hemisphere: string): number {
  const value = (deg ? int(deg) : 0) + Number(min) / 60;
  return hemisphere === 'S' || hemisphere === 'W' ? -value : value;
}

const bit = (mask: number, i: number): boolean => ((mask >> i) & 1) === 1;

/** The io masks, fuel and odometer after the course (Tk103ProtocolDecoder, `decodeLow` off: low bits only when set). */
function ioBlock(g: RegExpExecArray, a: Record<string, AttributeValue>): void {
  a.charge = g[22] === '0';
  a.ignition = g[23] === '1';
  const m1 = hexInt(g[24]);
  a.in2 = bit(m1, 0) ? 1 : 0;
  a.panic = bit(m1, 1) ? 1 : 0;
  a.out2 = bit(m1, 2) ? 1 : 0;
  if (bit(m1, 3)) a.blocked = 1;
  const m2 = hexInt(g[25]);
  for (let i = 0; i < 3; i++) if (bit(m2, i)) a[`hs${3 - i}`] = 1;
  if (bit(m2, 3)) a.door = 1;
  const m3 = hexInt(g[26]);
  for (let i = 1; i <= 3; i++) if (bit(m3, i)) a[`ls${3 - i + 1}`] = 1;
  a.fuel = hexInt(g[27]);
  a.odometer = hexInt(g[28]);
}

/** Alarms and ignition a command word carries (Tk103ProtocolDecoder.decodeType). */
function applyType(m: DecodedMessage, type: string, data: string | undefined): void {
  const alarm =
    type === 'BQ81'
      ? BQ81_ALARMS[data ?? '']
      : type === 'BO01'
        ? BO01_ALARMS[data?.charAt(0) ?? '']
        : TYPE_ALARMS[type];
  if (alarm) m.alarms.push(alarm);
  if (IGNITION_ON.has(type)) m.attributes.ignition = true;
  if (IGNITION_OFF.has(type)) m.attributes.ignition = false;
}

/**
 * A position report: BR00 (and BR01..), BP05 login, BO01 alarm, BQ81 alarm, the comma form's ZC1x
 * and DW3x events. Speed is km/h. BO01 is answered `(<id>AS01<alarm>)`.
 */
export const decodePosition: SentenceHandler = (sentence) => {
  const g = PATTERN_POSITION.exec(sentence);
  if (!g) return unrecognised(sentence);
  const comma = g[2] !== undefined;
  const identity = comma ? g[2] : g[1];
  const type = g[3];
  const data = g[5] ?? g[4];
  const lat = coordinate(g[10], g[11], g[12]);
  const lon = coordinate(g[13], g[14], g[15]);
  if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180))
    throw new ProtocolError(PROTOCOL, `coordinates out of range (${lat}, ${lon})`, text(sentence));
  const [d1, d2, d3] = [g[6], g[7], g[8]];
  const fixTime = comma ? utc(d1, d2, d3, g[17], g[18], g[19]) : utc(d3, d2, d1, g[17], g[18], g[19]);
  if (Number.isNaN(fixTime.getTime())) throw new ProtocolError(PROTOCOL, 'impossible report time', text(sentence));
  const speed = Number(g[16].trim());
  const m: DecodedMessage = {
    fixTime,
    location: {
      latitudeDeg: lat,
      longitudeDeg: lon,
      valid: g[9] === 'A',
      speedKmh: Number.isFinite(speed) ? speed : 0,
    },
    alarms: [],
    attributes: {},
  };
  applyType(m, type, data);
  const course = [g[20], g[21], g[29]]
    .map((c) => (c === undefined ? NaN : Number(c.trim())))
    .find((c) => Number.isFinite(c));
  if (course !== undefined) m.location!.courseDeg = course <= 360 ? course : course % 360;
  if (g[22] !== undefined) ioBlock(g, m.attributes);
  if (g[30]) m.attributes.temp1 = Number(g[30]);
  const replies = type === 'BO01' && data ? [text(replyAlarm(shortId(sentence), data.charAt(0)))] : [];
  return { identity, messages: [m], replies };
};

/** ZC20 battery report: level code, battery (10 mV), power (100 mV); 255 / 65535 mean absent */
export const decodeBattery: SentenceHandler = (sentence) => {
  const g = PATTERN_BATTERY.exec(sentence);
  if (!g) return unrecognised(sentence);
  const a: Record<string, AttributeValue> = {};
  const level = BATTERY_LEVELS[int(g[8])];
  if (level !== undefined) a.batteryLevel = level;
  if (int(g[9]) !== 65535) a.battery = int(g[9]) * 0.01;
  if (int(g[10]) !== 65535) a.power = int(g[10]) * 0.1;
  return {
    identity: g[1],
    messages: [{ fixTime: utc(g[2], g[3], g[4], g[5], g[6], g[7]), alarms: [], attributes: a }],
    replies: [],
  };
};

/** `{mcc,mnc,lac,cid}` lines (after BP05 or BZ00) and an odometer */
export const decodeCells: SentenceHandler = (sentence) => {
  const g = PATTERN_CELL.exec(sentence);
  if (!g) return unrecognised(sentence);
  const network = new NetworkInfo();
  for (const cell of g[2].split('\n')) {
    const v = /^\{(\d+),(\d+),(\d+),(\d+)\}$/.exec(cell.trim());
    if (v) network.addCell(int(v[1]), int(v[2]), int(v[3]), int(v[4]));
  }
  const a: Record<string, AttributeValue> = { odometer: hexInt(g[3]) };
  network.applyTo(a);
  return { identity: g[1], messages: [{ alarms: [], attributes: a }], replies: [] };
};

/** BZ00 serving cell, lac and cell id in hex */
export const decodeNetwork: SentenceHandler = (sentence) => {
  const g = PATTERN_NETWORK.exec(sentence);
  if (!g) return unrecognised(sentence);
  const network = new NetworkInfo();
  network.addCell(int(g[2]), int(g[3]), hexInt(g[4]), hexInt(g[5]));
  const a: Record<string, AttributeValue> = {};
  network.applyTo(a);
  return { identity: g[1], messages: [{ alarms: [], attributes: a }], replies: [] };
};

/** DW5x: an event with the serving cell and Wi-Fi access points instead of a fix */
export const decodeLbsWifi: SentenceHandler = (sentence) => {
  const g = PATTERN_LBS_WIFI.exec(sentence);
  if (!g) return unrecognised(sentence);
  const m: DecodedMessage = { fixTime: utc(g[9], g[10], g[11], g[12], g[13], g[14]), alarms: [], attributes: {} };
  applyType(m, g[2], '0');
  const network = new NetworkInfo();
  network.addCell(int(g[3]), int(g[4]), int(g[5]), int(g[6]));
  const macs = g[8].split(',').filter((x) => x);
  if (macs.length === int(g[7])) {
    for (const wifi of macs) {
      const [mac, rssi] = wifi.split('*');
      network.addWifi(mac, int(rssi));
    }
  }
  network.applyTo(m.attributes);
  return { identity: g[1], messages: [m], replies: [] };
};

/** ZC03 free text between `$` signs: a command's answer (the device echoes nothing of the command) */
export const decodeCommandResult: SentenceHandler = (sentence) => {
  const g = PATTERN_COMMAND_RESULT.exec(sentence);
  if (!g) return unrecognised(sentence);
  const result = g[8];
  return {
    identity: g[1],
    messages: [{ fixTime: utc(g[2], g[3], g[4], g[5], g[6], g[7]), alarms: [], attributes: { result } }],
    replies: [],
    commandResults: [{ text: result }],
  };
};

/** BV00: the vehicle's VIN */
export const decodeVin: SentenceHandler = (sentence) => {
  const g = PATTERN_VIN.exec(sentence);
  if (!g) return unrecognised(sentence);
  return { identity: g[1], messages: [{ alarms: [], attributes: { vin: g[2] } }], replies: [] };
};

/** BS50 battery management block (hex, little-endian) */
function bs50(payload: Buffer, a: Record<string, AttributeValue>): void {
  let o = 3; // header
  const count = payload[o++];
  for (let i = 1; i <= 24; i++, o += 2) if (i <= count) a[`battery${i}`] = payload.readUInt16LE(o) * 0.001;
  a.charge = payload[o++] === 0;
  a.current = payload.readUInt16LE(o) * 0.1;
  a.battery = payload.readUInt16LE(o + 2) * 0.01;
  o += 4;
  a.batteryLevel = payload[o++];
  a.batteryOverheat = payload[o++] > 0;
  a.chargeProtection = payload[o++] > 0;
  a.dischargeProtection = payload[o++] > 0;
  o += 2; // drop line, balanced
  a.cycles = payload.readUInt16LE(o);
  o += 2;
  a.faultAlarm = payload[o++];
  o += 6;
  const temperatures = payload[o++];
  a.powerTemp = payload[o++] - 40;
  a.equilibriumTemp = payload[o++] - 40;
  for (let i = 1; i <= 7; i++, o++) if (i <= temperatures) a[`batteryTemp${i}`] = payload[o] - 40;
  a.calibrationCapacity = payload.readUInt16LE(o) * 0.01;
  a.dischargeCapacity = payload.readUInt32LE(o + 2);
}
const BS50_BYTES = 3 + 1 + 48 + 1 + 4 + 6 + 2 + 1 + 6 + 3 + 7 + 6;

/** BS51 `key:hex` pairs, keys 0x90-0x92 */
function bs51(payload: string, a: Record<string, AttributeValue>, sentence: string): void {
  for (const pair of payload.split(',')) {
    const [key, value] = pair.split(':');
    if (!value || !/^(?:[0-9A-Fa-f]{2})+$/.test(value)) continue;
    const b = Buffer.from(value, 'hex');
    const need = (n: number): void => {
      if (b.length < n)
        throw new ProtocolError(PROTOCOL, `BS51 ${key} holds ${b.length} bytes, not ${n}`, text(sentence));
    };
    switch (hexInt(key)) {
      case 0x90:
        need(8);
        a.cumulativeVoltage = b.readUInt16LE(0) * 0.1;
        a.gatherVoltage = b.readUInt16LE(2) * 0.1;
        a.current = (b.readUInt16LE(4) - 30000) * 0.1;
        a.soc = b.readUInt16LE(6) * 0.1;
        break;
      case 0x91:
        need(6);
        a.maxCellVoltage = b.readUInt16LE(0) * 0.001;
        a.maxCellVoltageCount = b[2];
        a.minCellVoltage = b.readUInt16LE(3) * 0.001;
        a.minCellVoltageCount = b[5];
        break;
      case 0x92:
        need(4);
        a.maxTemp = b[0] - 40;
        a.maxTempCount = b[1];
        a.minTemp = b[2] - 40;
        a.minTempCount = b[3];
        break;
      default:
        break;
    }
  }
}

/** BS50 / BS51: a battery management system's report (no fix) */
export const decodeBms: SentenceHandler = (sentence) => {
  const identity = shortId(sentence);
  const payload = sentence.substring(17, sentence.length - 1);
  const a: Record<string, AttributeValue> = {};
  if (sentence.startsWith('BS50', 13)) {
    if (!/^(?:[0-9A-Fa-f]{2})+$/.test(payload) || payload.length / 2 < BS50_BYTES)
      throw new ProtocolError(PROTOCOL, 'BS50 block too short or not hex', text(sentence));
    bs50(Buffer.from(payload, 'hex'), a);
  } else {
    bs51(payload, a, sentence);
  }
  return { identity, messages: [{ alarms: [], attributes: a }], replies: [] };
};
