import { ByteReader } from '../shared/byte-reader.js';
import { xor8 } from '../shared/crc.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../types.js';
import {
  ATTR_BODY_LENGTH_MASK,
  ATTR_SUBPACKAGE,
  ATTR_VERSION,
  DEFAULT_UTC_OFFSET_MINUTES,
  DELIMITER,
  DELIMITER_ALT,
  ESCAPE,
  MSG,
  SESSION_TERMINAL_ID,
  SESSION_VERSION,
} from './jt808.constants.js';
import { decodeTerminalId, type Jt808Context, type Jt808Header } from './jt808.fields.js';
import { unescapeFrame } from './jt808.frame.js';
import * as messages from './jt808.messages.js';
import { generalFailure, generalResponse, registerResponse } from './jt808.replies.js';
import { decodeTransparent } from './jt808.transparent.js';

const PROTOCOL = 'jt808';
const TEXT_START = 0x28; // '(' Jimi text result
const TEXT_END = 0x29;

/** Message id -> handler. Ids not listed decode to no message and no reply (as Traccar does). */
const HANDLERS: Readonly<Record<number, messages.Jt808Handler>> = {
  [MSG.TERMINAL_GENERAL_RESPONSE]: messages.terminalResponse,
  [MSG.TERMINAL_REGISTER]: messages.register,
  [MSG.TERMINAL_AUTH]: messages.acknowledgeOnly,
  [MSG.TERMINAL_LOGOUT]: messages.acknowledgeOnly,
  [MSG.HEARTBEAT_2]: messages.acknowledgeOnly,
  [MSG.PHOTO]: messages.acknowledgeOnly,
  [MSG.TIMEZONE_SYNC]: messages.acknowledgeOnly,
  [MSG.HEARTBEAT]: messages.heartbeat,
  [MSG.REPORT_TEXT_MESSAGE]: messages.textReport,
  [MSG.TEXT_MESSAGE_RESPONSE]: messages.textResponse,
  [MSG.TERMINAL_ATTRIBUTES]: messages.terminalAttributes,
  [MSG.LOCATION_REPORT]: messages.locationReport,
  [MSG.LOCATION_QUERY_RESPONSE]: messages.locationQueryResponse,
  [MSG.LOCATION_REPORT_2]: messages.locationReport2(false),
  [MSG.LOCATION_REPORT_BLIND]: messages.locationReport2(true),
  [MSG.LOCATION_BATCH]: messages.locationBatch,
  [MSG.LOCATION_BATCH_2]: messages.locationBatch2,
  [MSG.TIME_SYNC_REQUEST]: messages.timeSync,
  [MSG.ACCELERATION]: messages.acceleration,
  [MSG.TRANSPARENT]: (r, c) => {
    c.replies.push(generalResponse(c.header));
    return decodeTransparent(r, c);
  },
  [MSG.COMMAND_RESPONSE]: messages.commandResponse,
  [MSG.DRIVER_IDENTITY]: messages.driverIdentity,
  [MSG.PARAMETER_QUERY_RESPONSE]: messages.parameterQueryResponse,
};

const hex4 = (n: number): string => `0x${n.toString(16).padStart(4, '0')}`;

/** 4.4 header: id, attribute, [version], terminal id, serial (one byte for JT701), [packet total, index] */
function readHeader(r: ByteReader): Jt808Header {
  const delimiter = r.u8();
  const type = r.u16();
  const attribute = r.u16();
  const version = attribute & ATTR_VERSION ? r.u8() : undefined;
  const id = r.bytes(version !== undefined ? 10 : delimiter === DELIMITER_ALT ? 7 : 6, 'terminal id');
  const serial = type === MSG.LOCATION_REPORT_2 || type === MSG.LOCATION_REPORT_BLIND ? r.u8() : r.u16();
  const header: Jt808Header = { delimiter, type, attribute, id, terminalId: decodeTerminalId(id), serial };
  if (version !== undefined) header.version = version;
  if (attribute & ATTR_SUBPACKAGE) header.packet = { total: r.u16(), index: r.u16() };
  return header;
}

function headerLength(frame: Buffer): number {
  const attribute = frame.readUInt16BE(3);
  const type = frame.readUInt16BE(1);
  const versioned = (attribute & ATTR_VERSION) !== 0;
  return (
    5 +
    (versioned ? 11 : frame[0] === DELIMITER_ALT ? 7 : 6) +
    (type === MSG.LOCATION_REPORT_2 || type === MSG.LOCATION_REPORT_BLIND ? 1 : 2) +
    (attribute & ATTR_SUBPACKAGE ? 4 : 0)
  );
}

/** does the attribute's body length match this frame's bytes? */
function lengthMatches(frame: Buffer): boolean {
  if (frame.length < 8) return false;
  return frame.length - headerLength(frame) - 2 === (frame.readUInt16BE(3) & ATTR_BODY_LENGTH_MASK);
}

/**
 * Frames come from the splitter already unescaped. A frame captured raw off the wire (still
 * escaped, e.g. given to `trackgate decode`) is recognised by its body length and unescaped here.
 */
function normalise(frame: Buffer): Buffer {
  if (frame[0] !== DELIMITER || frame.length < 3) return frame;
  const interior = frame.subarray(1, frame.length - 1);
  if (interior.includes(DELIMITER) || !interior.includes(ESCAPE) || lengthMatches(frame)) return frame;
  const unescaped = unescapeFrame(frame);
  return lengthMatches(unescaped) ? unescaped : frame;
}

function formatUtc(now: Date): string {
  return now.toISOString().replace(/[-T:]/g, '').slice(0, 14);
}

/** Jimi `( … )` text: `BASE,2` asks for the time (answered with TIME replaced); anything else is a command result */
function decodeText(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const end = frame.indexOf(TEXT_END);
  if (end < 0) throw new ProtocolError(PROTOCOL, 'text frame without ")"', frame);
  const sentence = frame.subarray(0, end + 1).toString('latin1');
  if (sentence.includes('BASE,2')) {
    return { messages: [], replies: [Buffer.from(sentence.replaceAll('TIME', formatUtc(ctx.now)), 'latin1')] };
  }
  return {
    messages: [{ alarms: [], attributes: { result: sentence } }],
    replies: [],
    commandResults: [{ text: sentence }],
  };
}

function contextFor(header: Jt808Header, ctx: DecodeContext, warnings: string[]): Jt808Context {
  const c: Jt808Context = {
    ctx,
    header,
    utcOffsetMinutes: DEFAULT_UTC_OFFSET_MINUTES,
    replies: [],
    warnings,
    commandResults: [],
  };
  if (ctx.model) c.model = ctx.model;
  return c;
}

/** the 2013 header's 12 digits (JT/T 808-2013 4.4: the terminal's phone number, in 6 BCD bytes) */
const DIGITS_2013 = 12;

/**
 * The forms a device may be registered under besides the id as the frame writes it (its leading
 * zeros kept, as the terminal and its label print it): a 2019 id of 20 digits as the 12 of the
 * 2013 header when it only adds zeros, and the id without its leading zeros (what Traccar tries
 * first, and what trackgate named the terminal before).
 */
function alternativesOf(terminalId: string): string[] {
  const out: string[] = [];
  const padding = terminalId.length - DIGITS_2013;
  if (padding > 0 && /^0+$/.test(terminalId.slice(0, padding))) out.push(terminalId.slice(padding));
  const stripped = terminalId.replace(/^0+/, '');
  if (stripped && stripped !== terminalId && !out.includes(stripped)) out.push(stripped);
  return out;
}

/**
 * Decodes one JT/T 808 frame as cut by the splitter: `7E|E7 header body checksum 7E|E7`, or a
 * Jimi `( … )` text. Every binary frame names its terminal, so `identity` is always set.
 */
export function decodeJt808(input: Buffer, ctx: DecodeContext): DecodeResult {
  if (input.length > 0 && input[0] === TEXT_START) return decodeText(input, ctx);
  const frame = normalise(input);
  const delimiter = frame[0];
  if (delimiter !== DELIMITER && delimiter !== DELIMITER_ALT)
    throw new ProtocolError(PROTOCOL, 'frame does not start with 7E or E7', frame);
  if (frame.length < 3 || frame[frame.length - 1] !== delimiter)
    throw new ProtocolError(PROTOCOL, 'frame does not end with its delimiter', frame);

  const r = new ByteReader(PROTOCOL, frame, 0, frame.length - 2);
  const header = readHeader(r);
  const warnings: string[] = [];
  let checksumError: string | undefined;
  const checksum = xor8(frame, 1, frame.length - 2);
  if (checksum !== frame[frame.length - 2]) {
    const reason = `checksum ${frame[frame.length - 2].toString(16)} != computed ${checksum.toString(16)}`;
    if (ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, reason, frame);
    warnings.push(reason);
    checksumError = reason;
  }
  const declared = header.attribute & ATTR_BODY_LENGTH_MASK;
  if (declared !== r.remaining)
    warnings.push(`${hex4(header.type)}: body is ${r.remaining} bytes, header says ${declared}`);

  ctx.session[SESSION_TERMINAL_ID] = header.terminalId;
  // the encoder writes commands in the version the terminal speaks (jt808.encoder.ts)
  if (header.version !== undefined) ctx.session[SESSION_VERSION] = header.version;
  else delete ctx.session[SESSION_VERSION];
  const c = contextFor(header, ctx, warnings);
  const result: DecodeResult = { identity: header.terminalId, messages: [], replies: c.replies };
  const alternatives = alternativesOf(header.terminalId);
  if (alternatives.length) result.alternativeIdentities = alternatives;
  if (header.type === MSG.TERMINAL_REGISTER) result.rejection = registerResponse(header, false);
  else if (header.type === MSG.TERMINAL_AUTH) result.rejection = generalFailure(header);

  if (header.packet && header.packet.total > 1) {
    c.replies.push(generalResponse(header));
    warnings.push(`${hex4(header.type)}: packet ${header.packet.index} of ${header.packet.total} is not reassembled`);
  } else {
    const handler = HANDLERS[header.type];
    if (handler) result.messages = handler(r, c);
  }
  if (warnings.length) result.warnings = warnings;
  if (checksumError) result.checksumError = checksumError;
  if (c.commandResults.length) result.commandResults = c.commandResults;
  return result;
}
