/**
 * One handler per Meiligao command (MeiligaoProtocolDecoder.decode): the session commands the
 * server answers (login, heartbeat, server request, photo upload), and the reports (position,
 * logged position, alarm, RFID, retransmission, OBD, trouble codes, position with image).
 */
import type { Alarm } from '../../core/model/alarm.js';
import type { ByteReader } from '../shared/byte-reader.js';
import type { DecodeContext, DecodedMessage } from '../types.js';
import * as C from './meiligao.constants.js';
import { meiligaoFrame } from './meiligao.encoder.js';
import { readObd, readPosition, readRfidPosition } from './meiligao.sentence.js';

export interface MeiligaoEnv {
  /** the 7 id bytes, copied into every answer */
  id: Buffer;
  command: number;
  /** the data between the command and the CRC */
  data: ByteReader;
  ctx: DecodeContext;
}

export interface Outcome {
  messages: DecodedMessage[];
  replies: Buffer[];
  warnings?: string[];
}

export type Handler = (env: MeiligaoEnv) => Outcome;

const nothing = (replies: Buffer[] = [], warnings?: string[]): Outcome => ({
  messages: [],
  replies,
  ...(warnings && { warnings }),
});
const one = (m: DecodedMessage | undefined): Outcome => ({ messages: m ? [m] : [], replies: [] });
const blank = (): DecodedMessage => ({ alarms: [], attributes: {} });

/** the bytes left in the data as text: ASCII, other bytes as U+FFFD (Java's US_ASCII decoding) */
function ascii(r: ByteReader): string {
  const b = r.bytes(r.remaining);
  let s = '';
  for (const c of b) s += c < 0x80 ? String.fromCharCode(c) : '\ufffd';
  return s;
}

/** 0x5000 login: answered 0x4000 with 01 */
export const login: Handler = (env) => nothing([meiligaoFrame(env.id, C.MSG_LOGIN_RESPONSE, Buffer.from([1]))]);

/** 0x0001 heartbeat: answered 0x0001 with 01 */
export const heartbeat: Handler = (env) => nothing([meiligaoFrame(env.id, C.MSG_HEARTBEAT, Buffer.from([1]))]);

/**
 * 0x0002 server request: answered with the `ip:port` devices should use. Traccar answers with its
 * `meiligao.server` setting or the listening socket's address; a decoder sees no socket, so here it
 * is the `server` setting, and without one the request is not answered.
 */
export const serverRequest: Handler = (env) => {
  const server = env.ctx.options?.[C.SETTING_SERVER];
  if (!server) return nothing([], ['server request (0x0002) not answered: no "server" setting']);
  return nothing([meiligaoFrame(env.id, C.MSG_SERVER, Buffer.from(server, 'latin1'))]);
};

interface PhotoState {
  image: number;
  /** bytes of each packet received, by packet index */
  packets: Record<string, number>;
}

/** 0x0800 photo upload start: a new photo, answered 0x8801 with the image index */
export const photoStart: Handler = (env) => {
  const image = env.data.u8();
  const state: PhotoState = { image, packets: {} };
  env.ctx.session[C.SESSION_PHOTO] = state;
  return nothing([meiligaoFrame(env.id, C.MSG_UPLOAD_PHOTO_RESPONSE, Buffer.from([image]))]);
};

/**
 * 0x9988 photo data: image index, u16 footage, total packets, packet index, image bytes. Nothing
 * is kept of the bytes (trackgate stores no media): only their count, by packet index, so a
 * packet decoded twice counts once and a connection holds at most 256 numbers.
 */
export const photoData: Handler = (env) => {
  const r = env.data;
  r.skip(1 + 2 + 1);
  const packet = r.u8();
  const state = env.ctx.session[C.SESSION_PHOTO] as PhotoState | undefined;
  if (!state) return nothing([], ['photo data (0x9988) without a photo upload start: dropped']);
  state.packets[String(packet)] = r.remaining;
  const total = Object.values(state.packets).reduce((a, b) => a + b, 0);
  if (total > C.MAX_PHOTO_BYTES)
    return nothing([], [`photo ${state.image} is over ${C.MAX_PHOTO_BYTES} bytes; trackgate keeps no images`]);
  return nothing();
};

/** 0x0F80 upload complete: answered 0x6688 with the image index and 00 00; the photo is let go */
export const photoComplete: Handler = (env) => {
  const image = env.data.u8();
  delete env.ctx.session[C.SESSION_PHOTO];
  return nothing([meiligaoFrame(env.id, C.MSG_RETRANSMISSION, Buffer.from([image, 0, 0]))]);
};

/** Alarm codes (manual §4.1.4); TK218 devices number some of them otherwise (Traccar decodeAlarm). */
const ALARMS: Readonly<Record<number, Alarm>> = {
  0x01: 'sos',
  0x10: 'lowBattery',
  0x11: 'overspeed',
  0x12: 'movement',
  0x13: 'geofenceEnter',
  0x14: 'accident',
  0x50: 'powerOff',
  0x53: 'gpsAntennaCut',
  0x72: 'hardBraking',
  0x73: 'hardAcceleration',
};
const TK218_ALARMS: Readonly<Record<number, Alarm>> = {
  0x01: 'sos',
  0x10: 'lowBattery',
  0x11: 'overspeed',
  0x12: 'movement',
  0x13: 'geofence',
  0x60: 'fatigueDriving',
  0x71: 'hardBraking',
  0x72: 'hardAcceleration',
  0x73: 'accident',
  0x74: 'idle',
};

const regular = (m: DecodedMessage, r: ByteReader): Outcome => one(readPosition(m, ascii(r)) ? m : undefined);

/** 0x9955 position */
export const position: Handler = (env) => regular(blank(), env.data);

/** 0x9016 logged position: 6 bytes, then the sentence */
export const loggedPosition: Handler = (env) => {
  env.data.skip(6);
  return regular(blank(), env.data);
};

/** 0x9999 alarm: the alarm code, then the sentence; codes 02-05 / 32-35 are inputs 2-5 going on / off */
export const alarm: Handler = (env) => {
  const code = env.data.u8();
  const m = blank();
  const table = env.ctx.model === 'TK218' ? TK218_ALARMS : ALARMS;
  if (Object.hasOwn(table, code)) m.alarms.push(table[code]);
  if (code >= 0x02 && code <= 0x05) m.attributes[`in${code}`] = 1;
  else if (code >= 0x32 && code <= 0x35) m.attributes[`in${code - 0x30}`] = 0;
  return regular(m, env.data);
};

/** 0x9977 position with image: image index, upload type, the sentence (the image itself is not kept) */
export const imagePosition: Handler = (env) => {
  env.data.skip(2);
  delete env.ctx.session[C.SESSION_PHOTO];
  return regular(blank(), env.data);
};

/** 0x9966 RFID: 15 card numbers (0: none), then `|time,date,lat,N,lon,E` */
export const rfid: Handler = (env) => {
  const m = blank();
  for (let i = 1; i <= C.RFID_CARDS; i++) {
    const card = env.data.u32();
    if (card === 0) continue;
    const text = String(card).padStart(10, '0');
    m.attributes[`card${i}`] = text;
    m.attributes.driverUniqueId = text;
  }
  return one(readRfidPosition(m, ascii(env.data)) ? m : undefined);
};

/** 0x6688 retransmission: a record count, then per record an alarm byte and a sentence, `\`-separated */
export const retransmission: Handler = (env) => {
  const r = env.data;
  const messages: DecodedMessage[] = [];
  const count = r.u8();
  for (let i = 0; i < count; i++) {
    r.u8(); // alarm code
    const at = r.buf.indexOf(C.RECORD_SEPARATOR, r.offset);
    const end = at < 0 || at >= r.offset + r.remaining ? r.offset + r.remaining : at;
    const m = blank();
    if (readPosition(m, ascii(r.sub(end - r.offset)))) messages.push(m);
    if (r.remaining > 0) r.u8(); // separator
  }
  return { messages, replies: [] };
};

/** 0x9901 / 0x9902 OBD: attributes at the last known location */
export const obd: Handler = (env) => {
  const m = blank();
  return one(readObd(m, ascii(env.data), env.command === C.MSG_OBD_RTA) ? m : undefined);
};

/** 0x9903 trouble codes, comma-separated, stored space-separated */
export const troubleCodes: Handler = (env) => {
  const m = blank();
  const codes = ascii(env.data).replaceAll(',', ' ');
  if (codes) m.attributes.dtcs = codes;
  return one(m);
};

/** any other command: nothing Traccar reads */
export const ignored: Handler = () => nothing();
