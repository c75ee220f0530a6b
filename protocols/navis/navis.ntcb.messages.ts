/**
 * NTCB messages by type (manual "NTCB commands"): the handshake, the FLEX negotiation,
 * telemetry (*>T one record, *>A several) and a device's answer to a command (*@C). Each is
 * answered in an NTCB frame of its own, the header's receiver and sender swapped.
 */
import { xor8 } from '../shared/crc.js';
import type { DecodeContext, DecodeResult, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import {
  NTCB_ARRAY,
  NTCB_COMMAND_ANSWER,
  NTCB_FLEX,
  NTCB_FLEX_TAIL_BYTES,
  NTCB_HANDSHAKE,
  NTCB_HEADER_BYTES,
  NTCB_SINGLE,
  PROTOCOL,
  SESSION_FLEX,
  SESSION_IMEI,
} from './navis.constants.js';
import { toMessage } from './navis.fields.js';
import { readFlexNegotiation } from './navis.layout.js';
import { readNtcbRecord } from './navis.ntcb.js';
import { ByteReader } from '../shared/byte-reader.js';

/** An NTCB frame, its header read. */
export interface NtcbFrame {
  frame: Buffer;
  /** the 4-byte prefix ("@NTC"), repeated in the answer */
  prefix: Buffer;
  receiver: number;
  sender: number;
  /** the body's first 3 bytes */
  type: string;
  body: Buffer;
}

export interface NtcbHandler {
  /** *>S may come first; everything else needs the device named */
  beforeIdentity?: boolean;
  decode(f: NtcbFrame, ctx: DecodeContext): DecodeResult;
}

/**
 * An NTCB frame: `prefix | receiver u32 LE | sender u32 LE | length u16 LE | XOR(data) |
 * XOR(the 15 bytes before) | data`. Also the command encoder's frame.
 */
export function ntcbFrame(prefix: Buffer, receiver: number, sender: number, data: Buffer): Buffer {
  const out = Buffer.alloc(NTCB_HEADER_BYTES + data.length);
  prefix.copy(out, 0, 0, 4);
  out.writeUInt32LE(receiver >>> 0, 4);
  out.writeUInt32LE(sender >>> 0, 8);
  out.writeUInt16LE(data.length, 12);
  out[14] = xor8(data);
  out[15] = xor8(out, 0, 15);
  data.copy(out, NTCB_HEADER_BYTES);
  return out;
}

/** the answer to `f`: its prefix, addressed back to its sender */
const answer = (f: NtcbFrame, data: Buffer): Buffer => ntcbFrame(f.prefix, f.sender, f.receiver, data);

const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');

/** *>S:<IMEI>: the device names itself; answered *<S */
function handshake(f: NtcbFrame, ctx: DecodeContext): DecodeResult {
  const imei = f.body.subarray(4).toString('latin1'); // after "*>S" and its colon
  if (!/^[\x21-\x7e]{1,32}$/.test(imei))
    throw new ProtocolError(PROTOCOL, `*>S names no device (${JSON.stringify(imei)})`, f.frame);
  ctx.session[SESSION_IMEI] = imei;
  return { identity: imei, messages: [], replies: [answer(f, ascii('*<S'))] };
}

/** *>FLEX: the record layout from now on; echoed as *<FLEX 0xB0 <protocol version> <struct version> */
function negotiation(f: NtcbFrame, ctx: DecodeContext): DecodeResult {
  const layout = readFlexNegotiation(f.body.subarray(3 + NTCB_FLEX_TAIL_BYTES));
  if (!layout) return { messages: [], replies: [], warnings: ['*>FLEX that is no FLEX negotiation: not answered'] };
  ctx.session[SESSION_FLEX] = layout;
  const echo = Buffer.concat([ascii('*<FLEX'), Buffer.from([0xb0, layout.protocolVersion, layout.structVersion])]);
  return { messages: [], replies: [answer(f, echo)] };
}

/** *>T: one record; answered *<T and the record's index (u32 LE) */
function single(f: NtcbFrame): DecodeResult {
  const s = readNtcbRecord(new ByteReader(PROTOCOL, f.body, 3));
  const index = Buffer.alloc(4);
  index.writeUInt32LE(Number(s.attributes.index) >>> 0);
  const message = toMessage(s, f.frame);
  return { messages: message ? [message] : [], replies: [answer(f, Buffer.concat([ascii('*<T'), index]))] };
}

/** *>A: a count, then that many records; answered *<A and the count */
function array(f: NtcbFrame): DecodeResult {
  const r = new ByteReader(PROTOCOL, f.body, 3);
  const count = r.u8();
  const messages: DecodedMessage[] = [];
  for (let i = 0; i < count; i++) {
    const message = toMessage(readNtcbRecord(r), f.frame);
    if (message) messages.push(message);
  }
  return { messages, replies: [answer(f, Buffer.concat([ascii('*<A'), Buffer.from([count])]))] };
}

/** *@C...: what the device answers to a command, kept whole as Traccar's `result` */
function commandAnswer(f: NtcbFrame): DecodeResult {
  const text = f.body.toString('latin1');
  return { messages: [{ alarms: [], attributes: { result: text } }], replies: [], commandResults: [{ text }] };
}

export const NTCB_HANDLERS: Readonly<Record<string, NtcbHandler>> = {
  [NTCB_HANDSHAKE]: { beforeIdentity: true, decode: handshake },
  [NTCB_FLEX]: { decode: negotiation },
  [NTCB_SINGLE]: { decode: single },
  [NTCB_ARRAY]: { decode: array },
  [NTCB_COMMAND_ANSWER]: { decode: commandAnswer },
};
