import type { AttributeValue, DecodeContext, DecodeResult, DecodedLocation, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import type { Alarm } from '../../core/model/alarm.js';
import { knotsToKmh } from '../shared/units.js';
import { nearestTimeOfDay } from '../shared/time.js';
import {
  KEYWORD_ALARMS,
  KEYWORD_PREFIX_ALARMS,
  PATTERN_ALT,
  PATTERN_OBD,
  PATTERN_REGULAR,
  PROTOCOL,
  REPLY_HEARTBEAT,
  REPLY_LOGIN,
  replySos,
} from './gps103.constants.js';

/** One sentence (line ending removed; a trailing `;` or `*` delimiter may remain) in, a result out. */
export type SentenceHandler = (sentence: string, ctx: DecodeContext) => DecodeResult;

type Groups = RegExpExecArray;

const text = (s: string): Buffer => Buffer.from(s, 'latin1');
const int = (s: string): number => parseInt(s, 10);
const Y2K = 2000;

function imeiIn(sentence: string): string | undefined {
  return /imei:(\d+)/.exec(sentence)?.[1];
}

/**
 * A sentence that matches no known layout (Traccar returns nothing for it): a frame this decoder
 * cannot read, thrown as such, naming the device the sentence names (for the raw-frame feed).
 */
export function unrecognised(sentence: string): never {
  const identity = imeiIn(sentence);
  throw new ProtocolError(PROTOCOL, 'unrecognised gps103 sentence', Buffer.from(sentence, 'latin1'), {
    ...(identity && { identity }),
  });
}

function hasContent(m: DecodedMessage): boolean {
  return m.location !== undefined || m.alarms.length > 0 || Object.keys(m.attributes).length > 0;
}

function setNumber(a: Record<string, AttributeValue>, key: string, value: string | undefined, scale = 1): void {
  if (value === undefined || value === '') return;
  const n = Number(value);
  if (Number.isFinite(n)) a[key] = n * scale;
}

/** `##,imei:<imei>,A` (a sentence with `imei:` of at most 30 chars): reply LOAD */
export const decodeLogin: SentenceHandler = (sentence) => {
  const identity = /imei:(\d+),/.exec(sentence)?.[1];
  return { ...(identity && { identity }), messages: [], replies: [text(REPLY_LOGIN)] };
};

/** Bare IMEI heartbeat `359586015829802`: reply ON; an `imei:` report glued after it is decoded too */
export function decodeHeartbeat(sentence: string, ctx: DecodeContext, decodeRest: SentenceHandler): DecodeResult {
  const on = text(REPLY_HEARTBEAT);
  const start = sentence.indexOf('imei:');
  if (start < 0) {
    const identity = /^\d+/.exec(sentence)?.[0];
    return { ...(identity && { identity }), messages: [], replies: [on] };
  }
  const rest = decodeRest(sentence.substring(start), ctx);
  return { ...rest, replies: [on, ...rest.replies] };
}

/** `imei:<imei>,vr<hex>`: a photo chunk (after a `vt<n>` announcement); photos are not stored */
export const decodePhoto: SentenceHandler = (sentence) => {
  const identity = imeiIn(sentence);
  return { ...(identity && { identity }), messages: [], replies: [] };
};

function keywordAlarm(keyword: string): Alarm | undefined {
  return KEYWORD_ALARMS[keyword] ?? KEYWORD_PREFIX_ALARMS.find(([prefix]) => keyword.startsWith(prefix))?.[1];
}

/** Keyword side effects, Gps103ProtocolDecoder.decodeRegular */
function applyKeyword(keyword: string, imei: string, m: DecodedMessage, replies: Buffer[]): void {
  const alarm = keywordAlarm(keyword);
  if (alarm) m.alarms.push(alarm);
  if (keyword === 'help me') replies.push(text(replySos(imei)));
  else if (keyword.startsWith('vt'))
    return; // photo announcement: `vt<packet count>`
  else if (keyword === 'acc on') m.attributes.ignition = true;
  else if (keyword === 'acc off') m.attributes.ignition = false;
  else if (keyword.startsWith('T:')) setNumber(m.attributes, 'temp1', keyword.substring(2));
  else if (keyword.startsWith('oil ')) setNumber(m.attributes, 'fuel', keyword.substring(4));
  else if (!alarm && keyword !== 'tracker' && keyword !== '') m.attributes.event = keyword;
}

/**
 * Local date and time, corrected by its offset from the UTC time of day of the fix (the device's
 * time zone is the difference, wrapped into ±12 h). Without a usable local date, the UTC time of
 * day nearest to the receive time.
 */
function regularTime(g: Groups, now: Date): Date | undefined {
  const utc = g[11] !== undefined ? [int(g[11]), int(g[12]), int(g[13])] : undefined;
  if (g[3] !== undefined) {
    const [yy, mo, dd, hh, mi] = [3, 4, 5, 6, 7].map((i) => int(g[i]));
    if (mo >= 1 && mo <= 12 && dd >= 1 && dd <= 31 && hh <= 23 && mi <= 59) {
      let t = Date.UTC(Y2K + yy, mo - 1, dd, hh, mi, utc ? utc[2] : 0);
      if (utc) {
        let delta = (hh - utc[0]) * 60 + (mi - utc[1]);
        if (delta <= -12 * 60) delta += 24 * 60;
        else if (delta > 12 * 60) delta -= 24 * 60;
        t -= delta * 60_000;
      }
      return new Date(t);
    }
  }
  if (utc && utc[0] <= 23 && utc[1] <= 59 && utc[2] <= 59) return nearestTimeOfDay(now, utc[0], utc[1], utc[2]);
  return undefined;
}

/** `[hemisphere,]ddmm.mmmm[,hemisphere]`, Traccar Parser HEM_DEG_MIN_HEM */
function coordinate(hemBefore: string | undefined, deg: string, min: string, hemAfter: string | undefined): number {
  const value = int(deg) + Number(min) / 60;
  const hem = hemAfter ?? hemBefore;
  return hem === 'S' || hem === 'W' ? -value : value;
}

function checkRange(lat: number, lon: number, sentence: string): void {
  if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180)) {
    throw new ProtocolError(PROTOCOL, `coordinates out of range (${lat}, ${lon})`, text(sentence));
  }
}

function regularLocation(g: Groups, sentence: string): DecodedLocation {
  const lat = coordinate(g[15], g[16], g[17], g[18]);
  const lon = coordinate(g[19], g[20], g[21], g[22]);
  checkRange(lat, lon, sentence);
  const loc: DecodedLocation = { latitudeDeg: lat, longitudeDeg: lon, valid: g[14] === 'A' };
  loc.speedKmh = knotsToKmh(g[23] ? Number(g[23]) : 0);
  if (g[24]) loc.courseDeg = Number(g[24]);
  if (g[25]) loc.altitudeM = Number(g[25]);
  return loc;
}

/** Regular `imei:` report with an F (GPS) or L (LBS) fix, Gps103ProtocolDecoder.decodeRegular */
export const decodeRegular: SentenceHandler = (sentence, ctx) => {
  const g = PATTERN_REGULAR.exec(sentence);
  if (!g) return unrecognised(sentence);
  const imei = g[1];
  const keyword = g[2];
  const m: DecodedMessage = { alarms: [], attributes: {} };
  const replies: Buffer[] = [];
  applyKeyword(keyword, imei, m, replies);
  if (keyword === 'rfid' && g[8]) m.attributes.driverUniqueId = g[8];
  if (g[14] !== undefined) {
    const fixTime = regularTime(g, ctx.now);
    if (fixTime) m.fixTime = fixTime;
    m.location = regularLocation(g, sentence);
    if (g[26]) m.attributes.ignition = g[26] === '1';
    if (g[27]) m.attributes.door = g[27] === '1';
    setNumber(m.attributes, 'fuel1', g[28]);
    setNumber(m.attributes, 'fuel2', g[29]);
    setNumber(m.attributes, 'temp1', g[30]);
  }
  return { identity: imei, messages: hasContent(m) ? [m] : [], replies };
};

/** `imei:<imei>,OBD,<yyMMddHHmmss>,odometer,fuel,avgFuel,hours,speed,load%,coolant,throttle%,rpm,battery,dtcs` */
export const decodeObd: SentenceHandler = (sentence) => {
  const g = PATTERN_OBD.exec(sentence);
  if (!g) return unrecognised(sentence);
  const [yy, mo, dd, hh, mi, ss] = [2, 3, 4, 5, 6, 7].map((i) => int(g[i]));
  const a: Record<string, AttributeValue> = {};
  setNumber(a, 'odometer', g[8]);
  setNumber(a, 'fuelConsumption', g[10]);
  setNumber(a, 'hours', g[11], 3_600_000);
  setNumber(a, 'obdSpeed', g[12]);
  setNumber(a, 'engineLoad', g[13]);
  setNumber(a, 'coolantTemp', g[14]);
  setNumber(a, 'throttle', g[15]);
  setNumber(a, 'rpm', g[16]);
  setNumber(a, 'battery', g[17]);
  const dtcs = g[18].replace(/,/g, ' ').trim();
  if (dtcs) a.dtcs = dtcs;
  const m: DecodedMessage = {
    fixTime: new Date(Date.UTC(Y2K + yy, mo - 1, dd, hh, mi, ss)),
    alarms: [],
    attributes: a,
  };
  return { identity: g[1], messages: [m], replies: [] };
};

/** Alternative report ending in `*`: decimal degrees, km/h, HHmmss,ddMMyy (Gps103ProtocolDecoder.decodeAlternative) */
export const decodeAlternative: SentenceHandler = (sentence) => {
  const g = PATTERN_ALT.exec(sentence);
  if (!g) return unrecognised(sentence);
  const [hh, mi, ss, dd, mo, yy] = [5, 6, 7, 8, 9, 10].map((i) => int(g[i]));
  const lat = Number(g[13]);
  const lon = Number(g[14]);
  checkRange(lat, lon, sentence);
  const satellites = int(g[19]);
  const a: Record<string, AttributeValue> = {};
  if (g[2]) a.event = g[2];
  if (g[3]) a.sensorId = g[3];
  setNumber(a, 'sensorVoltage', g[4]);
  a.rssi = int(g[11]);
  a.hdop = Number(g[18]);
  a.sat = satellites;
  a.ignition = g[20] === '1';
  a.charge = g[21] === '1';
  const error = g[22]?.replace(/,?\*$/, '');
  if (error) a.error = error;
  const m: DecodedMessage = {
    fixTime: new Date(Date.UTC(Y2K + yy, mo - 1, dd, hh, mi, ss)),
    location: {
      latitudeDeg: lat,
      longitudeDeg: lon,
      valid: int(g[12]) > 0,
      speedKmh: int(g[15]),
      courseDeg: int(g[16]),
      altitudeM: int(g[17]),
      satellites,
    },
    alarms: [],
    attributes: a,
  };
  return { identity: g[1], messages: [m], replies: [] };
};
