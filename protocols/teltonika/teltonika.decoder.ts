import type { CommandResult, DecodeContext, DecodeResult, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { ByteReader } from '../shared/byte-reader.js';
import { crc16Arc } from '../shared/crc.js';
import {
  CODEC_8,
  CODEC_8_EXT,
  CODEC_12,
  CODEC_13,
  CODEC_16,
  CODEC_GH3000,
  PROTOCOL,
  SERIAL_TYPE_RESPONSE,
} from './teltonika.constants.js';
import {
  decodeAvlRecord,
  decodeCommandResponseRecord,
  decodeGh3000Record,
  decodeSerialRecord,
  type RecordDecoder,
  type RecordOptions,
} from './teltonika.messages.js';

/** Record layout by codec id, Teltonika "Codec" wiki page / TeltonikaProtocolDecoder.parseData */
const RECORD_DECODERS: Record<number, RecordDecoder> = {
  [CODEC_GH3000]: decodeGh3000Record,
  [CODEC_8]: decodeAvlRecord,
  [CODEC_8_EXT]: decodeAvlRecord,
  [CODEC_16]: decodeAvlRecord,
  [CODEC_12]: decodeSerialRecord,
  [CODEC_13]: decodeCommandResponseRecord,
};

/** Codec 12/13 are command traffic: Traccar sends no record-count ack for them */
const UNACKED_CODECS = new Set([CODEC_12, CODEC_13]);

const ACCEPTED = Buffer.from([0x01]);
const REJECTED = Buffer.from([0x00]);

interface AvlData {
  codec: number;
  count: number;
  messages: DecodedMessage[];
  warnings: string[];
  /** Codec 12 type 0x06 records: the device's answers to commands */
  commandResults: CommandResult[];
}

function recordOptions(codec: number, ctx: DecodeContext): RecordOptions {
  return { codec, model: ctx.model || undefined };
}

/** `codec u8 | N1 u8 | records | N2 u8` */
function decodeAvlData(r: ByteReader, ctx: DecodeContext): AvlData {
  const codec = r.u8();
  const count = r.u8();
  const decodeRecord = RECORD_DECODERS[codec];
  if (!decodeRecord) throw new ProtocolError(PROTOCOL, `unsupported codec 0x${codec.toString(16)}`, r.buf);
  const options = recordOptions(codec, ctx);
  const messages: DecodedMessage[] = [];
  for (let i = 0; i < count; i++) {
    const m = decodeRecord(r, options);
    if (m) messages.push(m);
  }
  const warnings: string[] = [];
  const n2 = r.u8();
  if (n2 !== count) warnings.push(`record count mismatch: N1=${count} N2=${n2}`);
  if (r.remaining > 0) warnings.push(`${r.remaining} unread bytes after the records`);
  return { codec, count, messages, warnings, commandResults: codec === CODEC_12 ? commandResultsOf(messages) : [] };
}

/** The text of each Codec 12 response (type 0x06); other serial types (camera, axle loads) answer no command. */
function commandResultsOf(messages: DecodedMessage[]): CommandResult[] {
  const results: CommandResult[] = [];
  for (const m of messages) {
    if (m.attributes.type === SERIAL_TYPE_RESPONSE && typeof m.attributes.result === 'string')
      results.push({ text: m.attributes.result });
  }
  return results;
}

function countAck(count: number): Buffer {
  const ack = Buffer.alloc(4);
  ack.writeUInt32BE(count);
  return ack;
}

type FrameKind = 'ping' | 'login' | 'avl';
type FrameHandler = (frame: Buffer, ctx: DecodeContext) => DecodeResult;

/** 0xFF keep-alive: consumed, nothing sent back (TeltonikaFrameDecoder) */
function decodePing(): DecodeResult {
  return { messages: [], replies: [] };
}

/** `u16 len | IMEI ascii`; ack 01 when the device is known, 00 otherwise (parseIdentification) */
function decodeLogin(frame: Buffer): DecodeResult {
  const r = new ByteReader(PROTOCOL, frame);
  const imeiBytes = r.bytes(r.u16(), 'IMEI');
  if (imeiBytes.some((c) => c < 0x20 || c > 0x7e))
    throw new ProtocolError(PROTOCOL, 'IMEI is not printable ASCII', frame);
  const imei = imeiBytes.toString('latin1').trim();
  if (!imei) throw new ProtocolError(PROTOCOL, 'empty IMEI', frame);
  const warnings = r.remaining > 0 ? [`${r.remaining} bytes after the IMEI`] : undefined;
  return { identity: imei, messages: [], replies: [ACCEPTED], rejection: REJECTED, ...(warnings && { warnings }) };
}

/**
 * Where the data and CRC sit. The declared length wins; like Traccar, a frame whose length field is 0
 * (data runs to the CRC) or whose CRC is cut short is still read, with a warning.
 */
function locateData(frame: Buffer, warnings: string[]): { end: number; crcAt?: number } {
  const dataLength = frame.readUInt32BE(4);
  if (dataLength === 0) {
    warnings.push('AVL data length is 0: reading up to the last 4 bytes');
    return { end: frame.length - 4, crcAt: frame.length - 4 };
  }
  const end = 8 + dataLength;
  if (end + 4 <= frame.length) {
    if (end + 4 < frame.length) warnings.push(`${frame.length - end - 4} bytes after the CRC`);
    return { end, crcAt: end };
  }
  warnings.push(`AVL frame is ${end + 4 - frame.length} bytes shorter than its length field says`);
  return { end: Math.min(end, frame.length) };
}

/** `00000000 | u32 dataLen | data | u32 CRC-16/IBM of data`; ack is the u32 record count */
function decodeAvlFrame(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < 12) throw new ProtocolError(PROTOCOL, 'AVL frame shorter than 12 bytes', frame);
  if (frame.readUInt32BE(0) !== 0) throw new ProtocolError(PROTOCOL, 'AVL preamble is not zero', frame);
  const warnings: string[] = [];
  const { end, crcAt } = locateData(frame, warnings);
  const crcProblem = crcAt === undefined ? 'CRC missing' : checkCrc(frame, end, crcAt);
  if (crcProblem) {
    if (ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, crcProblem, frame);
    warnings.push(crcProblem);
  }
  const data = decodeAvlData(new ByteReader(PROTOCOL, frame, 8, end), ctx);
  warnings.push(...data.warnings);
  return {
    messages: data.messages,
    replies: UNACKED_CODECS.has(data.codec) ? [] : [countAck(data.count)],
    ...(warnings.length > 0 && { warnings }),
    ...(crcProblem && { checksumError: crcProblem }),
    ...(data.commandResults.length > 0 && { commandResults: data.commandResults }),
  };
}

function checkCrc(frame: Buffer, end: number, crcAt: number): string | undefined {
  const expected = frame.readUInt32BE(crcAt) & 0xffff;
  const actual = crc16Arc(frame, 8, end);
  return expected === actual ? undefined : `CRC mismatch: frame ${hex4(expected)}, computed ${hex4(actual)}`;
}

const hex4 = (n: number): string => n.toString(16).padStart(4, '0');

const FRAME_HANDLERS: Record<FrameKind, FrameHandler> = {
  ping: decodePing,
  login: decodeLogin,
  avl: decodeAvlFrame,
};

function classify(frame: Buffer): FrameKind {
  if (frame.length === 1 && frame[0] === 0xff) return 'ping';
  if (frame.length < 2) throw new ProtocolError(PROTOCOL, 'frame too short', frame);
  return frame.readUInt16BE(0) > 0 ? 'login' : 'avl';
}

/** One TCP frame as cut by the Teltonika splitter: a ping, an IMEI login or an AVL packet. */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  return FRAME_HANDLERS[classify(frame)](frame, ctx);
}

/**
 * One UDP datagram: `u16 len | u16 packetId | u8 packetType | u8 avlPacketId | u16 imeiLen | IMEI | AVL data`
 * (no preamble, no CRC). Ack `00 05 | 00 00 | 01 | avlPacketId | N` (Traccar writes 0000 as packet id).
 */
export function decodeDatagram(datagram: Buffer, ctx: DecodeContext): DecodeResult {
  const r = new ByteReader(PROTOCOL, datagram);
  const length = r.u16();
  r.u16(); // packet id
  r.u8(); // packet type
  const avlPacketId = r.u8();
  const imeiBytes = r.bytes(r.u16(), 'IMEI');
  if (imeiBytes.some((c) => c < 0x20 || c > 0x7e))
    throw new ProtocolError(PROTOCOL, 'IMEI is not printable ASCII', datagram);
  const imei = imeiBytes.toString('latin1').trim();
  if (!imei) throw new ProtocolError(PROTOCOL, 'empty IMEI', datagram);
  const warnings: string[] = [];
  if (length !== datagram.length - 2) warnings.push(`UDP length ${length} but ${datagram.length - 2} bytes follow it`);
  const data = decodeAvlData(r, ctx);
  warnings.push(...data.warnings);
  const replies = UNACKED_CODECS.has(data.codec)
    ? []
    : [Buffer.from([0x00, 0x05, 0x00, 0x00, 0x01, avlPacketId, data.count])];
  return {
    identity: imei,
    messages: data.messages,
    replies,
    ...(warnings.length > 0 && { warnings }),
    ...(data.commandResults.length > 0 && { commandResults: data.commandResults }),
  };
}
