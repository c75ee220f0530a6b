import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import {
  CONTACTS_REPLY_TAIL,
  NO_REPLY_TYPES,
  POSITION_TYPES,
  PROTOCOL,
  SESSION_VENDOR,
  TYPE_BLOOD_PRESSURE,
  TYPE_CONTACTS,
  TYPE_HEALTH,
  TYPE_HEARTBEAT,
  TYPE_HEART_RATE,
  TYPE_LBS,
  TYPE_LOGIN,
  TYPE_STATUS,
  TYPE_TEMPERATURE,
  VENDOR_IW,
  VENDOR_TRV,
} from './trv.constants.js';
import {
  decodeHealth,
  decodeHeartbeat,
  decodeLbs,
  decodePosition,
  decodeStatus,
  type TrvHandler,
} from './trv.messages.js';

/** Message types with something to report; every other type is only answered. */
const HANDLERS: Readonly<Record<string, TrvHandler>> = {
  ...Object.fromEntries([...POSITION_TYPES].map((type) => [type, decodePosition])),
  [TYPE_STATUS]: decodeStatus,
  [TYPE_LBS]: decodeLbs,
  [TYPE_HEARTBEAT]: decodeHeartbeat,
  [TYPE_HEART_RATE]: decodeHealth,
  [TYPE_BLOOD_PRESSURE]: decodeHealth,
  [TYPE_HEALTH]: decodeHealth,
  [TYPE_TEMPERATURE]: decodeHealth,
};

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** `yyyyMMddHHmmss` in UTC, the server time an IW login is answered with. */
export function serverTime(now: Date): string {
  const date = `${now.getUTCFullYear()}${pad2(now.getUTCMonth() + 1)}${pad2(now.getUTCDate())}`;
  return `${date}${pad2(now.getUTCHours())}${pad2(now.getUTCMinutes())}${pad2(now.getUTCSeconds())}`;
}

/**
 * The answer: vendor and type with its first letter moved on by one (`IWAP01` -> `IWBP01#`), the IW
 * login with the server time, a non-IW contact list with two zero coordinates; none for the types
 * the reference leaves unanswered, nor for messages that are only a six-digit time (`IWAPXL,080835`).
 */
function reply(sentence: string, vendor: string, type: string, now: Date): string | undefined {
  const header = vendor + String.fromCharCode(type.charCodeAt(0) + 1) + type.substring(1);
  if (type === TYPE_LOGIN && vendor === VENDOR_IW) return `${header},${serverTime(now)},0#`;
  if (type === TYPE_CONTACTS && vendor !== VENDOR_IW) return `${header}${CONTACTS_REPLY_TAIL}#`;
  if (NO_REPLY_TYPES.has(type)) return undefined;
  if (sentence.length <= header.length) fail(sentence, 'nothing after the message type');
  return /^\d{6}$/.test(sentence.substring(header.length + 1)) ? undefined : `${header}#`;
}

function fail(sentence: string, reason: string): never {
  throw new ProtocolError(PROTOCOL, reason, Buffer.from(sentence, 'latin1'));
}

/** One `#`-terminated message as the splitter cuts it (the `#` removed), or with a stray `#` left on. */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const sentence = frame.toString('latin1');
  const vendor = sentence.startsWith(VENDOR_TRV) ? VENDOR_TRV : sentence.substring(0, 2);
  const type = sentence.substring(vendor.length, vendor.length + 4);
  if (!/^[A-Z0-9]{2,3}$/.test(vendor) || !/^[A-Z][A-Z0-9]{3}$/.test(type))
    fail(sentence, 'no vendor prefix and four-character type');
  ctx.session[SESSION_VENDOR] = vendor;
  const answer = reply(sentence, vendor, type, ctx.now);
  const replies = answer === undefined ? [] : [Buffer.from(answer, 'latin1')];
  if (type === TYPE_LOGIN) {
    const identity = sentence.split(',')[0].substring(vendor.length + type.length);
    if (!/^[0-9A-Za-z]{1,32}$/.test(identity)) fail(sentence, `login names no device ("${identity}")`);
    return { identity, messages: [], replies };
  }
  // the reference reports nothing for a connection that has not logged in
  const handler = ctx.deviceId === undefined ? undefined : HANDLERS[type];
  return { messages: handler ? handler(sentence, type) : [], replies };
}
