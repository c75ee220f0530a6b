import { NetworkInfo } from '../shared/network.js';
import type { DecodedMessage } from '../types.js';
import { readFix } from './castel.blocks.js';
import {
  MPIP_HISTORY_FIXES,
  MPIP_HISTORY_GAP_BYTES,
  MSG_CC_HEARTBEAT,
  MSG_CC_HEARTBEAT_RESPONSE,
  MSG_CC_LOGIN,
  MSG_CC_LOGIN_RESPONSE,
  MSG_MPIP_ALARM,
  MSG_MPIP_HEARTBEAT,
  MSG_MPIP_HISTORY,
  MSG_MPIP_LOGIN,
  MSG_MPIP_POSITION,
  MSG_MPIP_REGISTER,
  MSG_MPIP_REGISTER_RESPONSE,
} from './castel.constants.js';
import type { ByteReader } from '../shared/byte-reader.js';
import { mpipRegisterReply, replyTo, type MessageHandler } from './castel.replies.js';

/**
 * A CC fix: the GPS block, state u32, battery u8, odometer u32, then geofence id, geofence flags and
 * additional flags (not read).
 */
function readCcFix(r: ByteReader): DecodedMessage {
  const m = readFix(r);
  m.attributes.status = r.u32le();
  m.attributes.battery = r.u8();
  m.attributes.odometer = r.u32le();
  r.skip(3);
  return m;
}

/** CC 0x4001 login: one fix (firmware and hardware versions follow, not read). Answered 0x8001. */
const ccLogin: MessageHandler = (r, env) => ({
  messages: [readCcFix(r)],
  replies: [replyTo(env, MSG_CC_LOGIN_RESPONSE)],
});

/** CC 0x4206 heartbeat: a history flag, count u8, count × (CC fix, LAC u16, cell id u16). Answered 0x8206. */
const ccHeartbeat: MessageHandler = (r, env) => {
  r.skip(1);
  const count = r.u8();
  const messages: DecodedMessage[] = [];
  for (let i = 0; i < count; i++) {
    const m = readCcFix(r);
    const network = new NetworkInfo();
    network.addCell(undefined, undefined, r.u16le(), r.u16le());
    network.applyTo(m.attributes);
    messages.push(m);
  }
  return { messages, replies: [replyTo(env, MSG_CC_HEARTBEAT_RESPONSE)] };
};

/** CC handlers by type; other CC types report nothing */
export const CC_HANDLERS: Readonly<Record<number, MessageHandler>> = {
  [MSG_CC_LOGIN]: ccLogin,
  [MSG_CC_HEARTBEAT]: ccHeartbeat,
};

/** MPIP 0x4001 login: one fix; answered with an `@@` frame of the same type and no body */
const mpipLogin: MessageHandler = (r, env) => ({
  messages: [readFix(r)],
  replies: [replyTo(env, env.type)],
});

/** MPIP 0x2001 registration: index u32, UNIX time u32, a byte, one fix; answered 0x1001 */
const mpipRegister: MessageHandler = (r, env) => {
  r.skip(4 + 4 + 1);
  return { messages: [readFix(r)], replies: [mpipRegisterReply(env.id, MSG_MPIP_REGISTER_RESPONSE)] };
};

/** MPIP 0x4201 position, 0x4202 alarm, 0x4206 heartbeat: one fix, no answer */
const mpipFix: MessageHandler = (r) => ({ messages: [readFix(r)], replies: [] });

/** MPIP 0x4204 history: eight fixes, each followed by 31 bytes (the last ones may end at the CRC) */
const mpipHistory: MessageHandler = (r) => {
  const messages: DecodedMessage[] = [];
  for (let i = 0; i < MPIP_HISTORY_FIXES; i++) {
    messages.push(readFix(r));
    r.skip(i < MPIP_HISTORY_FIXES - 1 ? MPIP_HISTORY_GAP_BYTES : Math.min(MPIP_HISTORY_GAP_BYTES, r.remaining));
  }
  return { messages, replies: [] };
};

/** MPIP handlers by type; other MPIP types report nothing */
export const MPIP_HANDLERS: Readonly<Record<number, MessageHandler>> = {
  [MSG_MPIP_LOGIN]: mpipLogin,
  [MSG_MPIP_REGISTER]: mpipRegister,
  [MSG_MPIP_POSITION]: mpipFix,
  [MSG_MPIP_ALARM]: mpipFix,
  [MSG_MPIP_HEARTBEAT]: mpipFix,
  [MSG_MPIP_HISTORY]: mpipHistory,
};
