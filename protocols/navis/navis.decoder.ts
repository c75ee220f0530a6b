/**
 * Navtelecom frames as the splitter cuts them: a 0x7F keep-alive, an NTCB frame ("@NTC" header
 * and a body) or a FLEX packet ("~" and a type letter). The device names itself with *>S and
 * declares its FLEX layout with *>FLEX; telemetry is read only after both (docs/protocols/navis.md).
 */
import { crc8Egts, xor8 } from '../shared/crc.js';
import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import {
  FLEX_CRC_BYTES,
  FLEX_HEADER_BYTES,
  KEEP_ALIVE,
  NTCB_BODY_XOR_OFFSET,
  NTCB_HEADER_BYTES,
  NTCB_HEADER_XOR_OFFSET,
  NTCB_LENGTH_OFFSET,
  NTCB_START,
  OPTION_FLEX_DATA_SIZE,
  PROTOCOL,
  SESSION_FLEX,
  SESSION_IMEI,
} from './navis.constants.js';
import type { FlexLayout } from './navis.layout.js';
import { FLEX_HANDLERS, type FlexPacket } from './navis.flex.messages.js';
import { NTCB_HANDLERS, type NtcbFrame } from './navis.ntcb.messages.js';

const EMPTY_RESULT = (): DecodeResult => ({ messages: [], replies: [] });

/** A checksum that does not match: a warning (`accept`) or an unreadable frame (`strict`). */
function checksum(
  ctx: DecodeContext,
  frame: Buffer,
  problems: string[],
): Pick<DecodeResult, 'checksumError' | 'warnings'> {
  if (problems.length === 0) return {};
  const checksumError = problems.join('; ');
  if (ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, checksumError, frame);
  return { checksumError, warnings: [checksumError] };
}

const hex2 = (n: number): string => n.toString(16).padStart(2, '0');

function decodeNtcb(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < NTCB_HEADER_BYTES)
    throw new ProtocolError(PROTOCOL, `NTCB frame of ${frame.length} bytes is shorter than its header`, frame);
  const length = frame.readUInt16LE(NTCB_LENGTH_OFFSET);
  const body = frame.subarray(NTCB_HEADER_BYTES, NTCB_HEADER_BYTES + length);
  if (body.length < length)
    throw new ProtocolError(PROTOCOL, `NTCB body of ${body.length} bytes, its header says ${length}`, frame);
  const problems: string[] = [];
  const headerXor = xor8(frame, 0, NTCB_HEADER_XOR_OFFSET);
  if (headerXor !== frame[NTCB_HEADER_XOR_OFFSET])
    problems.push(`header XOR ${hex2(frame[NTCB_HEADER_XOR_OFFSET])} does not match ${hex2(headerXor)}`);
  const bodyXor = xor8(body);
  if (bodyXor !== frame[NTCB_BODY_XOR_OFFSET])
    problems.push(`body XOR ${hex2(frame[NTCB_BODY_XOR_OFFSET])} does not match ${hex2(bodyXor)}`);
  const checked = checksum(ctx, frame, problems);
  if (length === 0) return { ...EMPTY_RESULT(), ...checked }; // an NTCB keep-alive
  const f: NtcbFrame = {
    frame,
    prefix: frame.subarray(0, 4),
    receiver: frame.readUInt32LE(4),
    sender: frame.readUInt32LE(8),
    type: body.subarray(0, 3).toString('latin1'),
    body,
  };
  const handler = Object.hasOwn(NTCB_HANDLERS, f.type) ? NTCB_HANDLERS[f.type] : undefined;
  if (!handler) return { ...EMPTY_RESULT(), ...checked };
  if (!handler.beforeIdentity && identityOf(ctx) === undefined)
    return { ...EMPTY_RESULT(), ...checked, warnings: [...(checked.warnings ?? []), `${f.type} before *>S`] };
  return withChecks(handler.decode(f, ctx), checked.checksumError, checked.warnings ?? []);
}

/** A handler's result with the frame's checksum problem and other warnings added to its own. */
function withChecks(result: DecodeResult, checksumError: string | undefined, warnings: string[]): DecodeResult {
  const all = [...warnings, ...(result.warnings ?? [])];
  return { ...result, ...(checksumError && { checksumError }), ...(all.length && { warnings: all }) };
}

/** the device this connection proved: the gateway's, else the *>S this session saw */
export function identityOf(ctx: DecodeContext): string | undefined {
  const imei = ctx.session[SESSION_IMEI];
  return ctx.deviceId ?? (typeof imei === 'string' ? imei : undefined);
}

/** the negotiated layout, when *>FLEX was seen on this session */
export function layoutOf(ctx: DecodeContext): FlexLayout | undefined {
  const layout = ctx.session[SESSION_FLEX];
  return layout && typeof layout === 'object' ? (layout as FlexLayout) : undefined;
}

/** `flexDataSize`, when set: it must agree with the negotiated layout (the splitter cut with it). */
function optionWarnings(ctx: DecodeContext, layout: FlexLayout): string[] {
  const option = ctx.options?.[OPTION_FLEX_DATA_SIZE];
  if (option === undefined) return [];
  const size = Number(option);
  if (!Number.isInteger(size) || size <= 0) return [`${OPTION_FLEX_DATA_SIZE}=${option} is no record size; ignored`];
  return size === layout.dataSize
    ? []
    : [`${OPTION_FLEX_DATA_SIZE}=${size} differs from the negotiated ${layout.dataSize}-byte record`];
}

function decodeFlex(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < FLEX_HEADER_BYTES + FLEX_CRC_BYTES)
    throw new ProtocolError(PROTOCOL, `FLEX packet of ${frame.length} bytes`, frame);
  const type = frame.subarray(0, FLEX_HEADER_BYTES).toString('latin1');
  const handler = Object.hasOwn(FLEX_HANDLERS, type) ? FLEX_HANDLERS[type] : undefined;
  if (!handler) throw new ProtocolError(PROTOCOL, `unknown FLEX packet type ${JSON.stringify(type)}`, frame);
  const end = frame.length - FLEX_CRC_BYTES;
  const crc = crc8Egts(frame, 0, end);
  const checked = checksum(
    ctx,
    frame,
    crc === frame[end] ? [] : [`CRC-8 ${hex2(frame[end])} does not match ${hex2(crc)}`],
  );
  if (identityOf(ctx) === undefined) return { ...EMPTY_RESULT(), ...checked, warnings: [`${type} before *>S`] };
  const layout = layoutOf(ctx);
  if (!layout) throw new ProtocolError(PROTOCOL, `${type} packet before the *>FLEX negotiation`, frame);
  const p: FlexPacket = { frame, type, end, layout };
  return withChecks(handler(p), checked.checksumError, [...(checked.warnings ?? []), ...optionWarnings(ctx, layout)]);
}

/** Decodes one frame as navis.frame.ts cuts it. */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length === 0) throw new ProtocolError(PROTOCOL, 'empty frame');
  if (frame[0] === KEEP_ALIVE) return EMPTY_RESULT();
  if (frame[0] === NTCB_START) return decodeNtcb(frame, ctx);
  return decodeFlex(frame, ctx);
}
