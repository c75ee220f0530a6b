import type { DecodeContext, DecodeResult, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { crc16Arc } from '../shared/crc.js';
import {
  CRC_FIELD,
  PACKET,
  PROTOCOL,
  REPLY_DATA,
  REPLY_LOGIN,
  REPLY_MESSAGE,
  REPLY_PING,
  SESSION_VERSION,
  TYPE_BLACK_BOX,
  TYPE_DATA,
  TYPE_LOGIN,
  TYPE_MESSAGE,
  TYPE_PING,
  TYPE_SHORT_DATA,
  replyBlackBox,
} from './wialon.constants.js';
import { decodeDataFields, javaSplit } from './wialon.fields.js';

/** One packet: `[<version>;][<IMEI>]#<type>#<data>`, read as latin1 so offsets are byte offsets. */
interface Packet {
  frame: Buffer;
  /** the version of a UDP datagram's prefix */
  version?: string;
  /** the IMEI of a UDP datagram's prefix */
  id?: string;
  type: string;
  data: string;
  /** where `data` starts in `frame` */
  dataStart: number;
}

type Handler = (p: Packet, ctx: DecodeContext) => DecodeResult;

const text = (s: string): Buffer => Buffer.from(s, 'latin1');

/**
 * The IPS 2.0/2.1 CRC16 (CRC-16/ARC) of the packet's message up to the separator before the CRC
 * field, inclusive; IPS 1.1 has none, so only packets of a 2.x login or datagram are checked.
 * Traccar checks none: under `accept` a mismatch is only reported.
 */
function checkCrc(p: Packet, ctx: DecodeContext, separator: string, version: unknown): string | undefined {
  if (typeof version !== 'string' || !version.startsWith('2')) return undefined;
  const end = p.data.lastIndexOf(separator) + 1;
  const field = CRC_FIELD.exec(p.data.substring(end));
  const crc = crc16Arc(p.frame, p.dataStart, p.dataStart + end);
  const error = !field
    ? 'no IPS 2.0 CRC16 field'
    : Number.parseInt(field[1], 16) !== crc
      ? `CRC16 ${field[1]} does not match ${crc.toString(16).toUpperCase().padStart(4, '0')}`
      : undefined;
  if (error && ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, error, p.frame);
  return error;
}

function withCrc(result: DecodeResult, error: string | undefined): DecodeResult {
  if (!error) return result;
  return { ...result, checksumError: error, warnings: [...(result.warnings ?? []), error] };
}

const sessionVersion = (p: Packet, ctx: DecodeContext): unknown => p.version ?? ctx.session[SESSION_VERSION];

/** `#L#[<version>;]<IMEI>;<password>[;<crc>]`: names the device; `#AL#1` (Traccar: only for a known device). */
const decodeLogin: Handler = (p, ctx) => {
  const values = javaSplit(p.data, ';');
  const versioned = values[0].includes('.');
  const identity = versioned ? values[1] : values[0];
  if (!identity) throw new ProtocolError(PROTOCOL, 'login without an IMEI', p.frame);
  const version = versioned ? values[0] : '1.1';
  ctx.session[SESSION_VERSION] = version;
  const error = checkCrc(p, ctx, ';', version);
  return withCrc({ identity, messages: [], replies: [text(REPLY_LOGIN)] }, error);
};

/** `#P#`: `#AP#` */
const decodePing: Handler = (p) => ({ ...(p.id && { identity: p.id }), messages: [], replies: [text(REPLY_PING)] });

/** Whom a data packet is from: its datagram's IMEI, or the connection's login. */
const deviceOf = (p: Packet, ctx: DecodeContext): string | undefined => p.id ?? ctx.deviceId;

/** Traccar reads nothing before a device is named: no message, no reply. */
const noDevice = (replies: Buffer[] = []): DecodeResult => ({
  messages: [],
  replies,
  warnings: ['data before a login: nothing to tie it to'],
});

/** `#SD#` and `#D#`: one message, `#AD#1` (Traccar answers SD with AD too, not ASD). */
const decodeData: Handler = (p, ctx) => {
  const identity = deviceOf(p, ctx);
  if (!identity) return noDevice();
  const error = checkCrc(p, ctx, ';', sessionVersion(p, ctx));
  const message = decodeDataFields(p.data, ctx.now);
  if (!message) throw new ProtocolError(PROTOCOL, `unreadable #${p.type}# fields`, p.frame, { identity });
  return withCrc({ identity, messages: [message], replies: [text(REPLY_DATA)] }, error);
};

/**
 * `#B#rec|rec|…`: stored records, each read as a D message and marked `archive`; records that do not
 * read are skipped. `#AB#<n>` counts every `|`-separated part, as Traccar does (the IPS 2.0 CRC part too).
 */
const decodeBlackBox: Handler = (p, ctx) => {
  const records = javaSplit(p.data, '|');
  const reply = [text(replyBlackBox(records.length))];
  const identity = deviceOf(p, ctx);
  if (!identity) return noDevice(reply);
  const error = checkCrc(p, ctx, '|', sessionVersion(p, ctx));
  const messages: DecodedMessage[] = [];
  for (const record of records) {
    const m = decodeDataFields(record, ctx.now);
    if (!m) continue;
    m.attributes.archive = true;
    messages.push(m);
  }
  return withCrc({ identity, messages, replies: reply }, error);
};

/**
 * `#M#<text>`: a message from the driver or a command's answer. Traccar stores it as a position
 * without a fix, with the text as `result`; here it is that message and also a command result.
 * `#AM#1`.
 */
const decodeMessage: Handler = (p, ctx) => {
  const identity = deviceOf(p, ctx);
  if (!identity) return noDevice();
  const error = checkCrc(p, ctx, ';', sessionVersion(p, ctx));
  const result = Buffer.from(p.data, 'latin1').toString('utf8');
  const message: DecodedMessage = { fixTime: ctx.now, alarms: [], attributes: { result } };
  return withCrc(
    { identity, messages: [message], replies: [text(REPLY_MESSAGE)], commandResults: [{ text: result }] },
    error,
  );
};

const HANDLERS: Readonly<Record<string, Handler>> = {
  [TYPE_LOGIN]: decodeLogin,
  [TYPE_PING]: decodePing,
  [TYPE_SHORT_DATA]: decodeData,
  [TYPE_DATA]: decodeData,
  [TYPE_BLACK_BOX]: decodeBlackBox,
  [TYPE_MESSAGE]: decodeMessage,
};

/** Reads the packet's envelope; its line ending, if any, is not part of it. */
function packetOf(frame: Buffer): Packet {
  const line = frame.toString('latin1').replace(/[\r\n]+$/, '');
  const g = PACKET.exec(line);
  if (!g) throw new ProtocolError(PROTOCOL, 'not a #TYPE# packet', frame);
  const [, version, id, type, data] = g;
  return {
    frame,
    ...(version !== undefined && { version }),
    ...(id !== undefined && { id }),
    type,
    data,
    dataStart: line.length - data.length,
  };
}

/**
 * One Wialon IPS packet: a TCP line as cut by the splitter, or one UDP datagram (which may name its
 * device in front). A type Traccar does not read (`#I#` images, `#US#` firmware) is nothing.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const p = packetOf(frame);
  const handler = HANDLERS[p.type];
  if (!handler) return { ...(p.id && { identity: p.id }), messages: [], replies: [] };
  return handler(p, ctx);
}
