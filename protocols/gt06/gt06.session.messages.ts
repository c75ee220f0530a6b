/**
 * The session family: what a tracker sends to log in and stay connected, and the requests it
 * answers itself with (0x01 login, 0x23 heartbeat, 0x2A address request, 0x8A time request).
 */
import type { ByteReader } from '../shared/byte-reader.js';
import { ack, hex, outcome, Pos, response, type Gt06Env, type Outcome } from './gt06.blocks.js';
import * as C from './gt06.constants.js';
import { SESSION_TZ } from './gt06.constants.js';

/** 0x01 login, GT06 protocol manual 5.1: BCD IMEI (8 bytes), type id u16, time zone/language u16. */
export function decodeLogin(r: ByteReader, env: Gt06Env): Outcome {
  const identity = hex(r.bytes(8, 'imei')).substring(1);
  const session = env.ctx.session;
  delete session[SESSION_TZ];
  if (env.dataLength > 10 && r.remaining >= 4 + 6) {
    r.u16(); // type identification code
    const bits = r.u16(); // bits 4-15: offset as hhmm, bit 3: west
    const hhmm = bits >> 4;
    const minutes = Math.trunc(hhmm / 100) * 60 + (hhmm % 100);
    session[SESSION_TZ] = bits & 0x08 ? -minutes : minutes;
  }
  return { identity, messages: [], replies: ack(env) };
}

/** 0x23 heartbeat (GK310): status, battery u16 (V x 100), rssi. */
export function decodeHeartbeat(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  const status = r.u8();
  pos.set('armed', (status & 0x01) !== 0);
  pos.set('ignition', (status & 0x02) !== 0);
  pos.set('charge', (status & 0x04) !== 0);
  if (r.remaining >= 2 + 6) pos.set('battery', r.u16() / 100);
  if (r.remaining >= 1 + 6) pos.set('rssi', r.u8());
  return outcome(pos, ack(env));
}

/** 0x2A address request (GK310): answered 0x97 with an empty address. */
export function decodeAddressRequest(): Outcome {
  const text = Buffer.from('NA&&NA&&0##', 'ascii');
  const content = Buffer.concat([Buffer.from([text.length, 0, 0, 0, 0]), text]);
  return { messages: [], replies: [response(true, C.MSG_ADDRESS_RESPONSE, 0, content)] };
}

/** 0x8A time request (GK310): answered with the UTC date and time. */
export function decodeTimeRequest(_r: ByteReader, env: Gt06Env): Outcome {
  const n = env.ctx.now;
  const content = Buffer.from([
    n.getUTCFullYear() - 2000,
    n.getUTCMonth() + 1,
    n.getUTCDate(),
    n.getUTCHours(),
    n.getUTCMinutes(),
    n.getUTCSeconds(),
  ]);
  return { messages: [], replies: [response(false, C.MSG_TIME_REQUEST, 0, content)] };
}
