import { requestFromFrame } from '../osmand/osmand.request.js';
import {
  ProtocolError,
  type DecodeContext,
  type DecodeResult,
  type DecodedMessage,
  type DeviceMessages,
  type HttpDecodeResult,
  type HttpRequestLike,
} from '../types.js';
import {
  MAX_ATTRIBUTES,
  MAX_BODY_BYTES,
  MAX_MESSAGES,
  PROTOCOL,
  STATUS_BAD_REQUEST,
  STATUS_OK,
} from './flespi.constants.js';
import { PARAMS, type Draft } from './flespi.params.js';

/** `name#3` is parameter `name`, index 3; without a numeric index it is -1 */
function splitName(key: string): { name: string; index: number } {
  const hash = key.indexOf('#');
  if (hash < 0) return { name: key, index: -1 };
  const index = key.slice(hash + 1).split('#')[0];
  return /^-?\d{1,9}$/.test(index) ? { name: key.slice(0, hash), index: Number(index) } : { name: key, index: -1 };
}

/** a parameter the reference has no name for keeps its whole key: numbers, texts and booleans */
function unknownParam(m: DecodedMessage, key: string, value: unknown, kept: { count: number }): void {
  if (key === '__proto__' || kept.count >= MAX_ATTRIBUTES) return;
  if (
    (typeof value === 'number' && Number.isFinite(value)) ||
    typeof value === 'string' ||
    typeof value === 'boolean'
  ) {
    m.attributes[key] = value;
    kept.count++;
  }
}

/**
 * One flespi message as the reference reads it: valid unless `position.valid` says otherwise;
 * without coordinates (0, 0 included) it has no location, the device's last one standing in.
 */
export function decodeMessage(object: Record<string, unknown>): DecodedMessage {
  const d: Draft = { latitudeDeg: 0, longitudeDeg: 0, valid: true, message: { alarms: [], attributes: {} } };
  const kept = { count: 0 };
  for (const [key, value] of Object.entries(object)) {
    const { name, index } = splitName(key);
    const setter = Object.hasOwn(PARAMS, name) ? PARAMS[name] : undefined;
    if (!setter?.(d, value, index)) unknownParam(d.message, key, value, kept);
  }
  const m = d.message;
  if (d.fixTime) m.fixTime = d.fixTime;
  const inRange = Math.abs(d.latitudeDeg) <= 90 && Math.abs(d.longitudeDeg) <= 180;
  if ((d.latitudeDeg !== 0 || d.longitudeDeg !== 0) && inRange) {
    m.location = { latitudeDeg: d.latitudeDeg, longitudeDeg: d.longitudeDeg, valid: d.valid };
    if (d.speedKmh !== undefined && d.speedKmh >= 0) m.location.speedKmh = d.speedKmh;
    if (d.courseDeg !== undefined && d.courseDeg >= 0 && d.courseDeg <= 360) m.location.courseDeg = d.courseDeg;
    if (d.altitudeM !== undefined) m.location.altitudeM = d.altitudeM;
  }
  return m;
}

const bad = (warning: string): HttpDecodeResult => ({
  messages: [],
  replies: [],
  status: STATUS_BAD_REQUEST,
  warnings: [warning],
});

/** the messages of a body, grouped by their `ident` in the order each first appears */
function groupMessages(items: unknown[], warnings: string[]): DeviceMessages[] {
  const groups = new Map<string, { messages: DecodedMessage[]; objects: unknown[] }>();
  let skipped = 0;
  for (const item of items.slice(0, MAX_MESSAGES)) {
    const object =
      item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as Record<string, unknown>) : undefined;
    const ident = object?.ident;
    if (!object || typeof ident !== 'string' || ident === '') {
      skipped++;
      continue;
    }
    const group = groups.get(ident) ?? { messages: [], objects: [] };
    group.messages.push(decodeMessage(object));
    group.objects.push(object);
    groups.set(ident, group);
  }
  if (skipped) warnings.push(`${skipped} message(s) without an ident string skipped`);
  if (items.length > MAX_MESSAGES) warnings.push(`messages beyond ${MAX_MESSAGES} left out`);
  return [...groups].map(([identity, g]) => ({
    identity,
    messages: g.messages,
    part: () => Buffer.from(JSON.stringify(g.objects)),
  }));
}

/**
 * A flespi HTTP stream request: a JSON array of messages, each naming its device (`ident`).
 * 200 (empty body) once stored, as the reference answers; 400 for a body that is no JSON array.
 * Messages without an `ident` are skipped, as the reference skips them.
 */
export function decodeFlespiHttp(request: HttpRequestLike, _ctx: DecodeContext): HttpDecodeResult {
  if (request.body.length > MAX_BODY_BYTES) return bad('body too large');
  let items: unknown;
  try {
    items = JSON.parse(request.body.toString('utf8'));
  } catch {
    return bad('body is not JSON');
  }
  if (!Array.isArray(items)) return bad('body is not a JSON array of messages');
  const warnings: string[] = [];
  const devices = groupMessages(items, warnings);
  const result: HttpDecodeResult = {
    messages: devices.flatMap((g) => g.messages),
    replies: [],
    status: STATUS_OK,
    devices,
  };
  if (devices.length) result.identity = devices[0].identity;
  if (warnings.length) result.warnings = warnings;
  return result;
}

/**
 * One captured request as a FRAME (`trackgate decode --protocol flespi`): a raw HTTP request or the
 * JSON body alone. A body that is no JSON array throws ProtocolError.
 */
export function decodeFlespiFrame(frame: Buffer, ctx: DecodeContext): DecodeResult {
  let request: HttpRequestLike;
  try {
    request = requestFromFrame(frame);
  } catch {
    throw new ProtocolError(PROTOCOL, 'empty request', frame);
  }
  const result = decodeFlespiHttp(request, ctx);
  if (result.status !== STATUS_OK)
    throw new ProtocolError(
      PROTOCOL,
      `HTTP ${result.status}: ${result.warnings?.at(-1) ?? 'bad request'}`,
      frame.subarray(0, 32),
    );
  return result;
}
