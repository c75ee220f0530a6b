import { NetworkInfo } from '../shared/network.js';
import type { DecodedMessage } from '../types.js';
import {
  applyScAlarm,
  applyStatistics,
  readFix,
  readStatistics,
  reportWithoutFix,
  statisticsReport,
} from './castel.blocks.js';
import {
  G_PER_UNIT,
  MSG_SC_AGPS_REQUEST,
  MSG_SC_ALARM,
  MSG_SC_ALARM_RESPONSE,
  MSG_SC_CELL,
  MSG_SC_COMPREHENSIVE,
  MSG_SC_CURRENT_LOCATION,
  MSG_SC_DTCS_COMMERCIAL,
  MSG_SC_DTCS_PASSENGER,
  MSG_SC_FUEL,
  MSG_SC_G_SENSOR,
  MSG_SC_GPS,
  MSG_SC_GPS_SLEEP,
  MSG_SC_HEARTBEAT,
  MSG_SC_HEARTBEAT_RESPONSE,
  MSG_SC_LOGIN,
  MSG_SC_LOGIN_RESPONSE,
  MSG_SC_LOGOUT,
  MSG_SC_OBD_DATA,
  MSG_SC_PID_DATA,
  MSG_SC_QUERY_RESPONSE,
} from './castel.constants.js';
import { decodeComprehensiveTags } from './castel.tags.js';
import { decodeObdValues, troubleCode } from './castel.obd.js';
import type { ByteReader } from '../shared/byte-reader.js';
import { replyTo, type MessageHandler } from './castel.replies.js';

/** `count u8 | count × GPS block`, each carrying the message's statistics */
function readFixes(r: ByteReader): DecodedMessage[] {
  const stats = readStatistics(r);
  const count = r.u8();
  const fixes: DecodedMessage[] = [];
  for (let i = 0; i < count; i++) {
    const m = readFix(r);
    applyStatistics(m, stats);
    fixes.push(m);
  }
  return fixes;
}

/** 0x1001 login: statistics, fixes, then versions and the supported PIDs (not read). Answered 0x9001. */
const login: MessageHandler = (r, env, now) => {
  const content = Buffer.alloc(10);
  content.writeUInt32LE(0xffffffff, 0);
  content.writeUInt16LE(0, 4);
  content.writeUInt32LE(Math.floor(now.getTime() / 1000) >>> 0, 6);
  const replies = [replyTo(env, MSG_SC_LOGIN_RESPONSE, content)];
  return { messages: readFixes(r), replies };
};

/** 0x1002 logout: statistics and fixes, no answer */
const logout: MessageHandler = (r) => ({ messages: readFixes(r), replies: [] });

/** 0x4001 GPS: a history flag, statistics and fixes */
const gps: MessageHandler = (r) => {
  r.skip(1); // 1: history data
  return { messages: readFixes(r), replies: [] };
};

/** 0xB001 current location (answer to a location query): a u16, statistics and fixes */
const currentLocation: MessageHandler = (r) => {
  r.skip(2);
  return { messages: readFixes(r), replies: [] };
};

/**
 * 0x4007 alarm: `alarm index u32 | statistics | fixes | count u8 | count × (flag u8 [, number u8,
 * description u16, threshold u16] when the flag is set)`. Every alarm goes on every fix. Answered
 * 0xC007 with the index, whether or not a fix came.
 */
const alarm: MessageHandler = (r, env) => {
  const index = Buffer.from(r.bytes(4));
  const replies = [replyTo(env, MSG_SC_ALARM_RESPONSE, index)];
  const fixes = readFixes(r);
  const count = r.u8();
  for (let i = 0; i < count; i++) {
    if (r.u8() === 0) continue;
    const code = r.u8();
    for (const m of fixes) applyScAlarm(m, code);
    r.skip(4); // description, threshold
  }
  return { messages: fixes, replies };
};

/** 0x400E fuel: statistics, fixes, then one fuel level u16 (adc1) per fix */
const fuel: MessageHandler = (r) => {
  const fixes = readFixes(r);
  for (const m of fixes) m.attributes.adc1 = r.u16le();
  return { messages: fixes, replies: [] };
};

/**
 * 0x401F comprehensive: a history flag, an index u32, statistics, fixes, then tag-length-value
 * data that goes on the last fix (nothing is reported when no fix came, as in Traccar).
 */
const comprehensive: MessageHandler = (r) => {
  r.skip(1 + 4); // history flag, index
  const fixes = readFixes(r);
  decodeComprehensiveTags(r, fixes.at(-1) ?? reportWithoutFix());
  return { messages: fixes, replies: [] };
};

/** 0x1003 heartbeat: answered 0x9003 with no body */
const heartbeat: MessageHandler = (_r, env) => ({
  messages: [],
  replies: [replyTo(env, MSG_SC_HEARTBEAT_RESPONSE)],
});

/** 0x4009 GPS while asleep: device time u32, then one fix */
const gpsSleep: MessageHandler = (r) => {
  r.skip(4);
  return { messages: [readFix(r)], replies: [] };
};

/** 0x5101 AGPS request: the last fix */
const agpsRequest: MessageHandler = (r) => ({ messages: [readFix(r)], replies: [] });

/** 0x4002 PID data: statistics, sample rate u16, PID values of the first group */
const pidData: MessageHandler = (r) => {
  const m = statisticsReport(r);
  r.skip(2); // sample rate
  decodeObdValues(r, m.attributes as Record<string, number>, true);
  return { messages: [m], replies: [] };
};

/** 0x4005 OBD data: statistics, a flag, PID values */
const obdData: MessageHandler = (r) => {
  const m = statisticsReport(r);
  r.skip(1);
  decodeObdValues(r, m.attributes as Record<string, number>, false);
  return { messages: [m], replies: [] };
};

/** Java's Double.toString for the 1/64 g steps: always a decimal point */
const javaDouble = (v: number): string => (Number.isInteger(v) ? v.toFixed(1) : String(v));

/** 0x4003 G-sensor: statistics, sample rate u16, count u8, count × (x, y, z) i16 LE in 1/64 g */
const gSensor: MessageHandler = (r) => {
  const m = statisticsReport(r);
  r.skip(2);
  const count = r.u8();
  const samples: string[] = [];
  for (let i = 0; i < count; i++) {
    const axes = [r.i16le(), r.i16le(), r.i16le()].map((v) => javaDouble(v * G_PER_UNIT));
    samples.push(`[${axes.join(',')}]`);
  }
  m.attributes.gSensor = `[${samples.join(',')}]`;
  return { messages: [m], replies: [] };
};

/** 0x4006 / 0x400B trouble codes: statistics, a flag, count u8, codes u16 LE (commercial: + 2 bytes) */
function dtcs(commercial: boolean): MessageHandler {
  return (r) => {
    const m = statisticsReport(r);
    r.skip(1);
    const count = r.u8();
    const codes: string[] = [];
    for (let i = 0; i < count; i++) {
      codes.push(troubleCode(r.u16le()));
      if (commercial) r.skip(2); // attribute, occurrences
    }
    if (codes.length > 0) m.attributes.dtcs = codes.join(' ');
    return { messages: [m], replies: [] };
  };
}

/** 0x4008 cell: statistics, LAC u16 and cell id u16 */
const cell: MessageHandler = (r) => {
  const m = statisticsReport(r);
  const network = new NetworkInfo();
  network.addCell(undefined, undefined, r.u16le(), r.u16le());
  network.applyTo(m.attributes);
  return { messages: [m], replies: [] };
};

/**
 * 0xA002 query answer: index u16, answer count and index, failed tags (count u8, u16 each), then
 * answered tags (count u8, each tag u16, length u16, ASCII): the last answer is `result`.
 */
const queryResponse: MessageHandler = (r) => {
  const m = reportWithoutFix();
  r.skip(2 + 1 + 1);
  r.skip(2 * r.u8());
  const answered = r.u8();
  for (let i = 0; i < answered; i++) {
    r.skip(2);
    const text = r.bytes(r.u16le(), 'answer').toString('latin1');
    if (text) m.attributes.result = text;
  }
  return { messages: [m], replies: [] };
};

/** SC message handlers by type; other types (0x4004 supported PIDs, server messages) report nothing */
export const SC_HANDLERS: Readonly<Record<number, MessageHandler>> = {
  [MSG_SC_LOGIN]: login,
  [MSG_SC_LOGOUT]: logout,
  [MSG_SC_HEARTBEAT]: heartbeat,
  [MSG_SC_GPS]: gps,
  [MSG_SC_PID_DATA]: pidData,
  [MSG_SC_G_SENSOR]: gSensor,
  [MSG_SC_OBD_DATA]: obdData,
  [MSG_SC_DTCS_PASSENGER]: dtcs(false),
  [MSG_SC_DTCS_COMMERCIAL]: dtcs(true),
  [MSG_SC_ALARM]: alarm,
  [MSG_SC_CELL]: cell,
  [MSG_SC_GPS_SLEEP]: gpsSleep,
  [MSG_SC_FUEL]: fuel,
  [MSG_SC_COMPREHENSIVE]: comprehensive,
  [MSG_SC_AGPS_REQUEST]: agpsRequest,
  [MSG_SC_QUERY_RESPONSE]: queryResponse,
  [MSG_SC_CURRENT_LOCATION]: currentLocation,
};
