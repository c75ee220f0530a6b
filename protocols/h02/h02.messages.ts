import type { AttributeValue, CommandResult, DecodeContext, DecodedMessage, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { knotsToKmh } from '../shared/units.js';
import { bcdBytes, bcdNibbles, nibbleAt } from '../shared/bcd.js';
import { BINARY_LONG_ID, BINARY_SHORT, MARKER_BINARY, PROTOCOL } from './h02.constants.js';
import { decodeBattery, decodeStatus, isDigits, isHex8, textDate, utcDate, utcStamp } from './h02.fields.js';
import { parsePositionBlock, type TextPosition } from './h02.position.js';

/** A text frame `*<maker>,<id>,<type>,<fields...>#`, cut into fields. */
export interface TextFrame {
  frame: Buffer;
  /** `*HQ,<id>,<type>`: what a heartbeat reply echoes */
  header: string;
  id: string;
  type: string;
  /** the fields after the type */
  fields: string[];
  /** the raw text after `<type>,` (SMS text keeps its commas) */
  payload: string;
}

/** what a handler returns; the decoder adds the identity */
export type Decoded = Omit<DecodeResult, 'identity'>;
export type TextHandler = (t: TextFrame, ctx: DecodeContext) => Decoded;

function fail(reason: string, frame: Buffer): never {
  throw new ProtocolError(PROTOCOL, reason, frame);
}

const text = (s: string): Buffer => Buffer.from(s, 'latin1');

/** `*HQ,<id>,V4,<type>,<yyyyMMddHHmmss>#`, H02ProtocolDecoder.sendResponse */
const v4Reply = (id: string, type: string, now: Date): Buffer => text(`*HQ,${id},V4,${type},${utcStamp(now)}#`);

/** a report without a position: time from `ddmmyy`/`hhmmss`, alarms and attributes from the status word */
function statusReport(
  status: string,
  ddmmyy: string,
  hhmmss: string,
  attributes: Record<string, AttributeValue>,
): Decoded {
  const decoded = decodeStatus(parseInt(status, 16));
  const fixTime = textDate(ddmmyy, hhmmss);
  const message = { fixTime, alarms: decoded.alarms, attributes: { ...attributes, ...decoded.attributes } };
  return {
    messages: [message],
    replies: [],
    warnings: fixTime ? [] : ['h02: invalid date, fix time left to the gateway'],
  };
}

function positionMessage(p: TextPosition, extra: Record<string, AttributeValue> = {}): DecodedMessage {
  const decoded = p.status === undefined ? { alarms: [], attributes: {} } : decodeStatus(p.status);
  const courseOk = p.courseDeg !== undefined && p.courseDeg <= 360;
  return {
    fixTime: p.fixTime,
    location: {
      latitudeDeg: p.latitudeDeg,
      longitudeDeg: p.longitudeDeg,
      valid: p.valid,
      speedKmh: knotsToKmh(p.speedKnots),
      ...(courseOk ? { courseDeg: p.courseDeg } : {}),
      ...(p.altitudeM !== undefined ? { altitudeM: p.altitudeM } : {}),
    },
    alarms: decoded.alarms,
    attributes: { ...extra, ...p.attributes, ...decoded.attributes },
  };
}

function checkRange(p: TextPosition, frame: Buffer): void {
  if (Math.abs(p.latitudeDeg) > 90 || Math.abs(p.longitudeDeg) > 180) fail('coordinates out of range', frame);
}

function positionWarnings(p: TextPosition): string[] {
  const warnings: string[] = [];
  if (p.dateInvalid) warnings.push('h02: invalid date, fix time left to the gateway');
  if (p.courseDeg !== undefined && p.courseDeg > 360) warnings.push(`h02: course ${p.courseDeg} out of range, dropped`);
  return warnings;
}

/** V1, V2, V5, V6, V8, V19, VI1 ... position, H02ProtocolDecoder.decodeText */
export const decodeTextPosition: TextHandler = (t, ctx) => {
  const p = parsePositionBlock(t.fields, 0);
  if (p === 'nofix') return { messages: [], replies: [], warnings: [`h02: ${t.type} without a GPS position`] };
  if (p === 'layout') return fail(`unrecognised ${t.type} position layout`, t.frame);
  checkRange(p, t.frame);
  const replies: Buffer[] = [];
  if (t.id && t.type === 'V1') replies.push(v4Reply(t.id, 'V1', ctx.now));
  return { messages: [positionMessage(p)], replies, warnings: positionWarnings(p) };
};

/**
 * The confirmation `V4,<CMD>[,<answer...>],<the command's hhmmss>` (docs/protocols.md §5): the command
 * word and the time the server sent, echoed, tie it to its command; the text is the whole response.
 */
function v4Answer(response: string[]): CommandResult {
  const answer: CommandResult = { text: response.join(',') };
  if (response[0]) answer.command = response[0];
  const time = response.length > 1 ? response[response.length - 1] : undefined;
  if (time && isDigits(time, 6)) answer.commandTime = time;
  return answer;
}

/** V4: a command response `V4,<response...>,<position block>`, H02ProtocolDecoder PATTERN */
export const decodeResponse: TextHandler = (t) => {
  for (let k = t.fields.length - 1; k >= 1; k--) {
    const p = parsePositionBlock(t.fields, k);
    if (typeof p === 'string') continue;
    checkRange(p, t.frame);
    const response = t.fields.slice(0, k);
    const result = response.join(',');
    return {
      messages: [positionMessage(p, { result })],
      replies: [],
      warnings: positionWarnings(p),
      commandResults: [v4Answer(response)],
    };
  }
  return {
    messages: [{ alarms: [], attributes: { result: t.payload } }],
    replies: [],
    commandResults: [v4Answer(t.fields)],
  };
};

/** V0 / HTBT heartbeat: the header is echoed back; `HTBT,<battery %>` also reports the battery */
export const decodeHeartbeat: TextHandler = (t) => {
  const battery = t.type === 'HTBT' && isDigits(t.fields[0]) ? Number(t.fields[0]) : undefined;
  const messages: DecodedMessage[] =
    battery === undefined ? [] : [{ alarms: [], attributes: { batteryLevel: battery } }];
  return { messages, replies: [text(`${t.header}#`)] };
};

/** NBR: cell list `NBR,<hhmmss>,<mcc>,<mnc>,<delay>,<count>,(<lac>,<cid>,<rssi>)*,<ddmmyy>,<status>` */
export const decodeNbr: TextHandler = (t, ctx) => {
  const f = t.fields;
  if (!isDigits(f[0], 6) || !f.slice(1, 5).every((v) => isDigits(v))) fail('malformed NBR header', t.frame);
  let s = -1;
  for (let i = 8; i + 1 < f.length; i += 3) {
    if (isDigits(f[i], 6) && isHex8(f[i + 1])) s = i;
  }
  const cellsOk = s > 0 && f.slice(5, s).every((v, i) => (i % 3 === 2 ? /^-?\d+$/ : /^\d+$/).test(v));
  if (!cellsOk) fail('malformed NBR cell list', t.frame);
  const replies = t.id ? [v4Reply(t.id, 'NBR', ctx.now)] : [];
  return { ...statusReport(f[s + 1], f[s], f[0], {}), replies };
};

/** LINK: `LINK,<hhmmss>,<rssi>,<sat>,<battery %>,<steps>,<turnovers>,<ddmmyy>,<status>` */
export const decodeLink: TextHandler = (t) => {
  const f = t.fields;
  if (!isDigits(f[0], 6) || !f.slice(1, 6).every((v) => isDigits(v)) || f.length < 8) fail('malformed LINK', t.frame);
  if (!isDigits(f[6], 6) || !isHex8(f[7])) fail('malformed LINK date or status', t.frame);
  const attributes = {
    rssi: Number(f[1]),
    sat: Number(f[2]),
    batteryLevel: Number(f[3]),
    steps: Number(f[4]),
    turnovers: Number(f[5]),
  };
  return statusReport(f[7], f[6], f[0], attributes);
};

/** V3: cell report `V3,<hhmmss>,<mcc><mnc>,<count>,<cells...>,<battery hex>,<reboot>,X,<ddmmyy>,<status>` */
export const decodeV3: TextHandler = (t) => {
  const f = t.fields;
  const n = f.length;
  const ok =
    n >= 9 &&
    isDigits(f[0], 6) &&
    /^\d{4,}$/.test(f[1]) &&
    isDigits(f[2]) &&
    /^[0-9A-Fa-f]{4}$/.test(f[n - 5]) &&
    isDigits(f[n - 4]) &&
    f[n - 3] === 'X' &&
    isDigits(f[n - 2], 6) &&
    isHex8(f[n - 1]);
  if (!ok) fail('malformed V3', t.frame);
  // battery: a raw 16-bit value; Traccar stores it unscaled under `battery`
  const attributes = { battery: parseInt(f[n - 5], 16) };
  return statusReport(f[n - 1], f[n - 2], f[0], attributes);
};

/** VP1: `VP1,V,<mcc>,<mnc>,<cells>` (no fix: nothing to report) or `VP1,<A|B>,<lat>,<N|S>,<lon>,<E|W>,<speed>,<course>,<ddmmyy>` */
export const decodeVp1: TextHandler = (t) => {
  const f = t.fields;
  if (f[0] === 'V') return { messages: [], replies: [] };
  if (f[0] !== 'A' && f[0] !== 'B') return fail('malformed VP1', t.frame);
  const p = parsePositionBlock(['', '', ...f.slice(1, 7)], 0);
  if (typeof p === 'string' || !/^\d+\.\d+$/.test(f[5] ?? '') || !/^\d+\.\d+$/.test(f[6] ?? ''))
    return fail('malformed VP1 position', t.frame);
  checkRange(p, t.frame);
  const fixTime = textDate(f[7] ?? '', '');
  return { messages: [{ ...positionMessage({ ...p, valid: true }), fixTime }], replies: [] };
};

/** SMS: a device's text reply, kept whole as the command result */
export const decodeSms: TextHandler = (t) => ({
  messages: [{ alarms: [], attributes: { result: t.payload } }],
  replies: [],
  commandResults: [{ text: t.payload }],
});

/** types this decoder knows and reports nothing for (BS, BASE, XT ...) */
export const decodeNothing: TextHandler = () => ({ messages: [], replies: [] });

/**
 * Binary position (`$`, and `X` which has the same layout), H02ProtocolDecoder.decodeBinary:
 * id 5 bytes BCD (8 when the frame is 42 bytes), hhmmss, ddmmyy, lat DDMM.MMMM (4 bytes),
 * battery u8, lon DDDMM.MMMM + flags nibble (5 bytes), speed 3 digits (knots) + course 3 digits,
 * status u32.
 */
export function decodeBinaryPosition(frame: Buffer): DecodeResult {
  if (frame.length < BINARY_SHORT) fail(`binary frame of ${frame.length} bytes, need ${BINARY_SHORT}`, frame);
  const idBytes = frame[0] === MARKER_BINARY && frame.length === BINARY_LONG_ID ? 8 : 5;
  const id = frame
    .subarray(1, 1 + idBytes)
    .toString('hex')
    .slice(0, idBytes === 8 ? 15 : 10);
  if (!isDigits(id)) fail('binary id is not BCD', frame);
  const o = 1 + idBytes;

  const [hour, minute, second, day, month, year] = [0, 1, 2, 3, 4, 5].map((i) => bcdBytes(frame, o + i, 1));
  const dateIsZero = day === 0 && month === 0 && year === 0;
  const fixTime = dateIsZero ? undefined : utcDate(day, month, year, hour, minute, second);
  if (!dateIsZero && !fixTime) fail('invalid binary date/time', frame);

  const lat = bcdBytes(frame, o + 6, 1) + bcdNibbles(frame, (o + 7) * 2, 6) / 600_000;
  const lonNibble = (o + 11) * 2;
  const lon = bcdNibbles(frame, lonNibble, 3) + bcdNibbles(frame, lonNibble + 3, 6) / 600_000;
  const flags = nibbleAt(frame, lonNibble + 9);
  const speedKnots = bcdNibbles(frame, (o + 16) * 2, 3);
  const courseHundreds = nibbleAt(frame, (o + 17) * 2 + 1);
  const course = courseHundreds * 100 + bcdBytes(frame, o + 18, 1);
  if ([lat, lon, speedKnots, course].some(Number.isNaN) || courseHundreds > 9) fail('binary field is not BCD', frame);
  if (lat > 90 || lon > 180) fail('coordinates out of range', frame);

  const battery = decodeBattery(frame[o + 10]);
  const status = decodeStatus(frame.readUInt32BE(o + 19));
  const warnings: string[] = [];
  if (course > 360) warnings.push(`h02: course ${course} out of range, dropped`);
  const message: DecodedMessage = {
    fixTime,
    location: {
      latitudeDeg: flags & 0x04 ? lat : -lat,
      longitudeDeg: flags & 0x08 ? lon : -lon,
      valid: (flags & 0x02) !== 0,
      speedKmh: knotsToKmh(speedKnots),
      ...(course <= 360 ? { courseDeg: course } : {}),
    },
    alarms: status.alarms,
    attributes: { ...(battery === undefined ? {} : { batteryLevel: battery }), ...status.attributes },
  };
  return { identity: id, messages: [message], replies: [], ...(warnings.length ? { warnings } : {}) };
}
