import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { MARKER_ALT, MARKER_BINARY, MARKER_TEXT, PROTOCOL } from './h02.constants.js';
import {
  decodeBinaryPosition,
  decodeHeartbeat,
  decodeLink,
  decodeNbr,
  decodeNothing,
  decodeResponse,
  decodeSms,
  decodeTextPosition,
  decodeV3,
  decodeVp1,
  type TextFrame,
  type TextHandler,
} from './h02.messages.js';

/** text frame types, by the field after the id (H02ProtocolDecoder.decode) */
const TEXT_TYPES: Record<string, TextHandler> = {
  V0: decodeHeartbeat, // heartbeat, reply echoes the header
  HTBT: decodeHeartbeat, // heartbeat with battery level
  NBR: decodeNbr, // neighbouring cells (LBS), acked with V4,NBR
  LINK: decodeLink, // link keep-alive with rssi, satellites, battery, steps
  V3: decodeV3, // LBS report with battery
  VP1: decodeVp1, // position or cells, `*hq` devices
  V4: decodeResponse, // response to a server command, with a position
  SMS: decodeSms, // text reply to a command
};

/** any other `V…` type (V1, V2, V5, V6, V8, V19, VI1 …) is a position; the rest (XT, BS, BASE …) carry nothing */
const textHandler = (type: string): TextHandler =>
  Object.hasOwn(TEXT_TYPES, type) ? TEXT_TYPES[type] : type.startsWith('V') ? decodeTextPosition : decodeNothing;

/** frame kinds, by the first byte (H02FrameDecoder markers) */
const FRAME_KINDS: Record<number, (frame: Buffer, ctx: DecodeContext) => DecodeResult> = {
  [MARKER_TEXT]: decodeText, // `*…#`
  [MARKER_BINARY]: decodeBinaryPosition, // `$` 32/42/45 bytes BCD
  [MARKER_ALT]: decodeBinaryPosition, // `X` 32 bytes, same layout as `$`
};

export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const kind = frame.length ? FRAME_KINDS[frame[0]] : undefined;
  if (!kind) throw new ProtocolError(PROTOCOL, 'frame does not start with *, $ or X', frame);
  const result = kind(frame, ctx);
  if (result.warnings && result.warnings.length === 0) delete result.warnings;
  return result;
}

function decodeText(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const t = parseTextFrame(frame);
  return { ...(t.id ? { identity: t.id } : {}), ...textHandler(t.type)(t, ctx) };
}

/** bytes <= 0x20 at either end removed, as Java's String.trim (CR/LF after `#`) */
function trimmed(frame: Buffer): string {
  let start = 0;
  let end = frame.length;
  while (start < end && frame[start] <= 0x20) start++;
  while (end > start && frame[end - 1] <= 0x20) end--;
  return frame.toString('latin1', start, end);
}

/** `*<maker 2 chars>,<id digits or empty>,<type>[,<fields>]#` */
export function parseTextFrame(frame: Buffer): TextFrame {
  const sentence = trimmed(frame);
  if (sentence.length < 2 || sentence[0] !== '*' || !sentence.endsWith('#')) {
    throw new ProtocolError(PROTOCOL, 'text frame is not *…#', frame);
  }
  const inner = sentence.slice(1, -1);
  const c1 = inner.indexOf(',');
  const c2 = c1 < 0 ? -1 : inner.indexOf(',', c1 + 1);
  if (c1 !== 2 || c2 < 0) throw new ProtocolError(PROTOCOL, 'text frame has no maker, id and type', frame);
  const id = inner.slice(c1 + 1, c2);
  if (!/^\d{0,20}$/.test(id)) throw new ProtocolError(PROTOCOL, 'device id is not numeric', frame);
  const c3 = inner.indexOf(',', c2 + 1);
  const type = c3 < 0 ? inner.slice(c2 + 1) : inner.slice(c2 + 1, c3);
  const payload = c3 < 0 ? '' : inner.slice(c3 + 1);
  return {
    frame,
    header: `*${c3 < 0 ? inner : inner.slice(0, c3)}`,
    id,
    type,
    fields: c3 < 0 ? [] : payload.split(','),
    payload,
  };
}
