import { crc16X25 } from '../shared/crc.js';
import { ProtocolError, type DecodeContext, type DecodeResult } from '../types.js';
import { CC_HANDLERS, MPIP_HANDLERS } from './castel.cc.messages.js';
import {
  HEADER_AT,
  HEADER_DOLLAR,
  ID_BYTES,
  MIN_FRAME_BYTES,
  PROTOCOL,
  SC_VERSIONS,
  TRAILER_BYTES,
} from './castel.constants.js';
import { ByteReader } from '../shared/byte-reader.js';
import { isDeviceId } from './castel.reader.js';
import type { Envelope, MessageHandler } from './castel.replies.js';
import { SC_HANDLERS } from './castel.sc.messages.js';

/**
 * The device id as Traccar reads it: the 20 bytes as ASCII, NUL padding and spaces trimmed. Bytes
 * other than ASCII and NUL mean the frame is not what it seems (the splitter skips such frames too).
 */
function identityOf(id: Buffer, frame: Buffer): string {
  if (!isDeviceId(id, 0)) throw new ProtocolError(PROTOCOL, 'device id is not ASCII', frame);
  const text = id.toString('latin1').replace(/^[\0 ]+|[\0 ]+$/g, '');
  if (text.length === 0 || text.includes('\0'))
    throw new ProtocolError(PROTOCOL, 'device id is empty or has NUL inside', frame);
  return text;
}

/**
 * Where the body ends: before the CRC the length field places. A datagram or a decoded argument may
 * hold more than one frame (the first is read, as Traccar reads it) or a length field that does not
 * fit; then the last 4 bytes are taken for CRC and CR LF.
 */
function bodyEnd(frame: Buffer, warnings: string[]): number {
  const declared = frame.readUInt16LE(2);
  if (declared >= MIN_FRAME_BYTES && declared <= frame.length) {
    if (declared < frame.length) warnings.push(`${frame.length - declared} bytes after the frame's length`);
    return declared - TRAILER_BYTES;
  }
  warnings.push(`length field ${declared} does not match the ${frame.length} bytes received`);
  return frame.length - TRAILER_BYTES;
}

function checkCrc(frame: Buffer, end: number, ctx: DecodeContext, warnings: string[]): string | undefined {
  const sent = frame.readUInt16LE(end);
  const computed = crc16X25(frame, 0, end);
  if (sent === computed) return undefined;
  const problem = `CRC-16/X-25 ${sent.toString(16).padStart(4, '0')}, computed ${computed.toString(16).padStart(4, '0')}`;
  if (ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, problem, frame);
  warnings.push(problem);
  return problem;
}

/** SC (versions 3, 4), CC (any other version after `@@`) or MPIP (`$$`): each has its table of types */
function handlersOf(version: number | undefined): Readonly<Record<number, MessageHandler>> {
  if (version === undefined) return MPIP_HANDLERS;
  return SC_VERSIONS.has(version) ? SC_HANDLERS : CC_HANDLERS;
}

/** runs the type's handler; a body it cannot read is a ProtocolError naming the device */
function readBody(handler: MessageHandler, r: ByteReader, env: Envelope, now: Date, identity: string) {
  try {
    return handler(r, env, now);
  } catch (e) {
    if (!(e instanceof ProtocolError)) throw e;
    throw new ProtocolError(PROTOCOL, e.message.replace(`${PROTOCOL}: `, ''), r.buf, { identity });
  }
}

/**
 * One Castel frame: `@@ | length u16 LE | version | id (20) | type u16 BE | body | CRC-16/X-25 LE |
 * CR LF`, or `$$` without the version. Every frame names its device, so nothing is kept in the
 * session. A type the reference does not read reports nothing and is not answered.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < MIN_FRAME_BYTES) throw new ProtocolError(PROTOCOL, 'frame too short', frame);
  const header = frame.readUInt16BE(0);
  if (header !== HEADER_AT && header !== HEADER_DOLLAR)
    throw new ProtocolError(PROTOCOL, 'frame does not start with @@ or $$', frame);
  const warnings: string[] = [];
  const end = bodyEnd(frame, warnings);
  const r = new ByteReader(PROTOCOL, frame, 4, end);
  const version = header === HEADER_AT ? r.u8() : undefined;
  const id = Buffer.from(r.bytes(ID_BYTES, 'device id'));
  const identity = identityOf(id, frame);
  const env: Envelope = { version, id, type: r.u16() };
  const checksumError = checkCrc(frame, end, ctx, warnings);
  const handler = handlersOf(version)[env.type];
  const outcome = handler ? readBody(handler, r, env, ctx.now, identity) : { messages: [], replies: [] };
  return {
    identity,
    ...outcome,
    ...(warnings.length > 0 && { warnings }),
    ...(checksumError !== undefined && { checksumError }),
  };
}

/** A UDP datagram holds one frame, as a TCP frame is read. */
export function decodeDatagram(datagram: Buffer, ctx: DecodeContext): DecodeResult {
  return decode(datagram, ctx);
}
