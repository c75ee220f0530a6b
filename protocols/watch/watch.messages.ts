import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue, DecodedLocation, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import {
  PROTOCOL,
  REPLY_ALARM,
  REPLY_INIT,
  REPLY_LINK,
  REPLY_VOICE_CHUNK,
  STATUS_ALARMS,
  STATUS_MOTION_BIT,
} from './watch.constants.js';

/** One frame, its envelope parsed: `[<maker>*<id>*[<index>*]<len>*<type>[,<payload>]]` */
export interface WatchFrame {
  frame: Buffer;
  maker: string;
  id: string;
  /** the 4-hex-digit index some watches (ZJ) put before the length */
  index?: string;
  type: string;
  /** everything after the first comma of the content (latin1) */
  payload: string;
  /** true when the content has a comma after the type */
  hasPayload: boolean;
}

/** What a handler makes of a frame: messages and the reply contents (`LK`, `AL`, ...). */
export interface WatchOutcome {
  messages: DecodedMessage[];
  /** contents to answer with, each wrapped as `[<maker>*<id>*[<index>*]<len>*<content>]` */
  answers: string[];
  /** the frame is a watch's answer to a server command (`[..*CR]`, `[..*SOS1]`) */
  commandAnswer?: boolean;
}

export type WatchHandler = (f: WatchFrame) => WatchOutcome;

const none = (answers: string[] = []): WatchOutcome => ({ messages: [], answers });
const int = (s: string | undefined): number | undefined =>
  s !== undefined && /^-?\d+$/.test(s.trim()) ? parseInt(s, 10) : undefined;
const num = (s: string | undefined): number | undefined =>
  s !== undefined && /^\s*-?\d+(\.\d*)?\s*$/.test(s) ? Number(s) : undefined;

function fail(f: WatchFrame, reason: string): never {
  throw new ProtocolError(PROTOCOL, reason, f.frame);
}

/** The first alarm of the status word (WatchProtocolDecoder.decodeAlarm), or none. */
export function statusAlarm(status: number): Alarm | undefined {
  return STATUS_ALARMS.find(([bit]) => (status >>> bit) & 1)?.[1];
}

/** `ddmmyy`,`hhmmss` (UTC, as Traccar takes it; many watches send local time) */
function dateTime(f: WatchFrame, date: string, time: string): Date {
  const d = /^(\d{2})(\d{2})(\d{2})$/.exec(date);
  const t = /^(\d{2})(\d{2})(\d{2})$/.exec(time);
  if (!d || !t) fail(f, `bad date or time "${date},${time}"`);
  const [dd, mo, yy] = [d[1], d[2], d[3]].map(Number);
  const [hh, mi, ss] = [t[1], t[2], t[3]].map(Number);
  if (mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh > 23 || mi > 59 || ss > 59)
    fail(f, `bad date or time "${date},${time}"`);
  return new Date(Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss));
}

/** decimal degrees with an optional hemisphere letter: S and W make it negative (Traccar DEG_HEM) */
function coordinate(f: WatchFrame, value: string, hemisphere: string, max: number): number {
  const v = num(value);
  if (v === undefined || Math.abs(v) > max) fail(f, `bad coordinate "${value}"`);
  return hemisphere === 'S' || hemisphere === 'W' ? -Math.abs(v) : v;
}

/** A cell or area code: decimal, or hex where the watch writes it so (`55C0`, `3B882A2`). */
const code = (s: string | undefined): number | undefined =>
  s === undefined || s === ''
    ? undefined
    : /^\d+$/.test(s)
      ? parseInt(s, 10)
      : /^[0-9A-Fa-f]+$/.test(s)
        ? parseInt(s, 16)
        : undefined;

/**
 * `<cell count>,<ta>,[<mcc>,<mnc>,{<lac>,<cid>,<rssi>}…],<wifi count>,{<name>,<mac>,<rssi>}…`.
 * A tail that does not follow the layout is left out (the position stands without it).
 */
function network(values: string[]): NetworkInfo {
  const net = new NetworkInfo();
  let i = 0;
  const cells = int(values[i++]);
  if (cells === undefined) return net;
  i++; // timing advance
  if (cells > 0) {
    const mcc = code(values[i++]);
    const mnc = code(values[i++]);
    for (let c = 0; c < cells && i + 2 < values.length + 1; c++) {
      const lac = code(values[i++]);
      const cid = code(values[i++]);
      const rssi = int(values[i++]);
      if (lac === undefined || cid === undefined) return net;
      net.addCell(mcc, mnc, lac, cid, rssi);
    }
  }
  const wifis = int(values[i++]);
  for (let w = 0; wifis !== undefined && w < wifis && i + 2 < values.length + 1; w++) {
    i++; // access point name
    const mac = values[i++];
    const rssi = int(values[i++]);
    if (!/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$/.test(mac ?? '')) break;
    net.addWifi(mac.toLowerCase(), rssi);
  }
  return net;
}

/**
 * UD, UD2, UD3, UD_LTE, UD_WCDMA, WT, AL, AL_LTE …:
 * `ddmmyy,hhmmss,A|V,lat,N|S,lon,E|W,speed km/h,course,altitude,sats,rssi,battery %,steps,tumbles,status hex,<network>`
 */
export function decodePosition(f: WatchFrame): DecodedMessage {
  const v = f.payload.split(',');
  if (v.length < 16) fail(f, `position has ${v.length} fields, needs 16`);
  const fixTime = dateTime(f, v[0].trim(), v[1].trim());
  if (v[2] !== 'A' && v[2] !== 'V') fail(f, `validity "${v[2]}" is not A or V`);
  const location: DecodedLocation = {
    latitudeDeg: coordinate(f, v[3], v[4], 90),
    longitudeDeg: coordinate(f, v[5], v[6], 180),
    valid: v[2] === 'A',
    speedKmh: Math.max(0, num(v[7]) ?? 0),
    courseDeg: num(v[8]) ?? 0,
  };
  if (location.courseDeg! < 0 || location.courseDeg! > 360) location.courseDeg = 0;
  const altitude = num(v[9]);
  if (altitude !== undefined) location.altitudeM = altitude;
  const satellites = int(v[10]);
  if (satellites !== undefined) location.satellites = satellites;
  const attributes: Record<string, AttributeValue> = {};
  if (satellites !== undefined) attributes.sat = satellites;
  const rssi = int(v[11]);
  if (rssi !== undefined) attributes.rssi = rssi;
  const battery = int(v[12]);
  if (battery !== undefined) attributes.batteryLevel = battery;
  const steps = int(v[13]);
  if (steps !== undefined) attributes.steps = steps;
  const status = /^[0-9A-Fa-f]{1,8}$/.test(v[15]) ? parseInt(v[15], 16) : 0;
  attributes.status = status;
  if ((status >>> STATUS_MOTION_BIT) & 1) attributes.motion = true;
  const alarm = statusAlarm(status);
  network(v.slice(16)).applyTo(attributes);
  return { fixTime, location, alarms: alarm ? [alarm] : [], attributes };
}

/** UD… / WT…: a position, not answered */
export const decodeReport: WatchHandler = (f) => ({ messages: [decodePosition(f)], answers: [] });

/** AL…: an alarm with a position, answered `AL`; a status with no alarm bit is a general alarm */
export const decodeAlarm: WatchHandler = (f) => {
  const m = decodePosition(f);
  if (m.alarms.length === 0) m.alarms.push('general');
  return { messages: [m], answers: [REPLY_ALARM] };
};

/** LK[,steps,tumbles,battery %]: the link keep-alive, answered `LK` */
export const decodeLink: WatchHandler = (f) => {
  const v = f.hasPayload ? f.payload.split(',') : [];
  const steps = int(v[0]);
  const battery = int(v[2]);
  if (v.length < 3 || steps === undefined || battery === undefined) return none([REPLY_LINK]);
  return { messages: [{ alarms: [], attributes: { steps, batteryLevel: battery } }], answers: [REPLY_LINK] };
};

/** INIT: answered `INIT,1` */
export const decodeInit: WatchHandler = () => none([REPLY_INIT]);

/** TKQ / TKQ2 (voice request): echoed */
export const decodeEcho: WatchHandler = (f) => none([f.type]);

/** JXTK,<len>,<name>,<current>,<total>,<amr>: a voice chunk, answered `JXTKR,1`; voice is not stored */
export const decodeVoiceChunk: WatchHandler = () => none([REPLY_VOICE_CHUNK]);

/**
 * TK: a voice message from the watch (not stored), or, with a one-byte payload (`TK,1`), the
 * watch's answer to a voice message the server sent.
 */
export const decodeVoice: WatchHandler = (f) => (f.payload.length === 1 ? { ...none(), commandAnswer: true } : none());

/** img: a picture (not stored) */
export const decodeNothing: WatchHandler = () => none();

function health(attributes: Record<string, AttributeValue>): WatchOutcome {
  return Object.keys(attributes).length ? { messages: [{ alarms: [], attributes }], answers: [] } : none();
}

/** PULSE / HEART,<rate>; BLOOD / BPHRT,<high>,<low>[,<rate>] */
export const decodeHeart: WatchHandler = (f) => {
  const v = f.payload.split(',');
  const a: Record<string, AttributeValue> = {};
  let i = 0;
  if (/^(blood|bphrt)$/i.test(f.type)) {
    const high = int(v[i++]);
    const low = int(v[i++]);
    if (high !== undefined) a.pressureHigh = high;
    if (low !== undefined) a.pressureLow = low;
  }
  const rate = int(v[i]);
  if (rate !== undefined) a.heartRate = rate;
  return health(a);
};

/** oxygen,<flag>,<SpO2 %> */
export const decodeOxygen: WatchHandler = (f) => {
  const spo2 = int(f.payload.split(',')[1]);
  return health(spo2 === undefined ? {} : { bloodOxygen: spo2 });
};

/** btemp2,<flag>,<°C> (taken when the flag is set); TEMP,<°C> */
export const decodeTemperature: WatchHandler = (f) => {
  const v = f.payload.split(',');
  const value = /^btemp2$/i.test(f.type) ? ((int(v[0]) ?? 0) > 0 ? num(v[1]) : undefined) : num(v[0]);
  return health(value === undefined ? {} : { temp1: value });
};

/** Anything else: the watch's answer to a server command, which echoes the command word. */
export const decodeCommandAnswer: WatchHandler = () => ({ ...none(), commandAnswer: true });
