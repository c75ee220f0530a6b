import type { CommandResult, DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL, SESSION_INDEXED, SESSION_MAKER } from './watch.constants.js';
import {
  decodeAlarm,
  decodeCommandAnswer,
  decodeEcho,
  decodeHeart,
  decodeInit,
  decodeLink,
  decodeNothing,
  decodeOxygen,
  decodeReport,
  decodeTemperature,
  decodeVoice,
  decodeVoiceChunk,
  type WatchFrame,
  type WatchHandler,
} from './watch.messages.js';

/** content types, as the watch writes them (WatchProtocolDecoder.decode; health types in any case) */
const TYPES: Record<string, WatchHandler> = {
  INIT: decodeInit, // first frame after power-on, answered INIT,1
  LK: decodeLink, // link keep-alive, answered LK
  TKQ: decodeEcho, // voice message request, echoed
  TKQ2: decodeEcho,
  JXTK: decodeVoiceChunk, // voice chunk, answered JXTKR,1
  TK: decodeVoice, // voice message
  img: decodeNothing, // picture
  PULSE: decodeHeart,
  HEART: decodeHeart,
  BLOOD: decodeHeart,
  BPHRT: decodeHeart,
  OXYGEN: decodeOxygen,
  BTEMP2: decodeTemperature,
  TEMP: decodeTemperature,
};
const HEALTH = new Set(['PULSE', 'HEART', 'BLOOD', 'BPHRT', 'OXYGEN', 'BTEMP2', 'TEMP']);

/** UD* positions and WT, AL* alarms (any suffix: UD2, UD_LTE, UD_WCDMA, AL_LTE ...) */
function handler(type: string): WatchHandler {
  if (Object.hasOwn(TYPES, type)) return TYPES[type];
  const upper = type.toUpperCase();
  if (HEALTH.has(upper)) return TYPES[upper];
  if (type.startsWith('UD') || type.startsWith('WT')) return decodeReport;
  if (type.startsWith('AL')) return decodeAlarm;
  return decodeCommandAnswer;
}

const STAR = 0x2a;
const COMMA = 0x2c;

/** Splits the envelope (WatchProtocolDecoder.decode); the length field is not checked, as Traccar does not. */
export function parseWatchFrame(frame: Buffer): WatchFrame {
  const fail = (reason: string): never => {
    throw new ProtocolError(PROTOCOL, reason, frame);
  };
  if (frame.length < 8 || frame[0] !== 0x5b || frame[frame.length - 1] !== 0x5d) fail('frame is not [...]');
  if (frame[3] !== STAR) fail('no 2-character maker before the first *');
  const maker = frame.toString('latin1', 1, 3);
  const idEnd = frame.indexOf(STAR, 4);
  if (idEnd < 0) fail('no * after the device id');
  const id = frame.toString('latin1', 4, idEnd);
  if (!/^[0-9A-Za-z]{1,32}$/.test(id)) fail(`device id "${id}" is not 1-32 letters or digits`);
  let at = idEnd + 1;
  let index: string | undefined;
  const hex4 = (from: number): boolean =>
    from + 5 <= frame.length &&
    frame[from + 4] === STAR &&
    /^[0-9A-Fa-f]{4}$/.test(frame.toString('latin1', from, from + 4));
  if (!hex4(at)) fail('no 4-hex-digit length');
  if (hex4(at + 5)) {
    index = frame.toString('latin1', at, at + 4);
    at += 5;
  }
  at += 5; // length and its *
  const end = frame.length - 1;
  if (at > end) fail('no content');
  let comma = frame.indexOf(COMMA, at);
  if (comma < 0 || comma > end) comma = end;
  const type = frame.toString('latin1', at, comma);
  return {
    frame,
    maker,
    id,
    ...(index !== undefined && { index }),
    type,
    payload: comma < end ? frame.toString('latin1', comma + 1, end) : '',
    hasPayload: comma < end,
  };
}

/** `[<maker>*<id>*[<index>*]<len %04x>*<content>]`, the way the watch frames its own (WatchProtocolDecoder.sendResponse) */
export function watchFrame(maker: string, id: string, index: string | undefined, content: Buffer): Buffer {
  const head = `[${maker}*${id}*${index !== undefined ? `${index}*` : ''}${content.length.toString(16).padStart(4, '0')}*`;
  return Buffer.concat([Buffer.from(head, 'latin1'), content, Buffer.from(']', 'latin1')]);
}

/**
 * One `[…]` frame as the splitter cuts it (escapes resolved). The maker and whether frames carry an
 * index are kept in the session, so that commands are framed the way this watch frames its own.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const f = parseWatchFrame(frame);
  ctx.session[SESSION_MAKER] = f.maker;
  ctx.session[SESSION_INDEXED] = f.index !== undefined;
  const out = handler(f.type)(f);
  const result: DecodeResult = {
    identity: f.id,
    messages: out.messages,
    replies: out.answers.map((a) => watchFrame(f.maker, f.id, f.index, Buffer.from(a, 'latin1'))),
  };
  if (out.commandAnswer) {
    const text = f.hasPayload ? `${f.type},${f.payload}` : f.type;
    const answer: CommandResult = { text, command: f.type };
    result.commandResults = [answer];
  }
  return result;
}
