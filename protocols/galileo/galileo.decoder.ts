import { crc16Modbus } from '../shared/crc.js';
import type { CommandResult, DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import {
  ACK_DATA,
  ACK_PHOTO,
  CRC_BYTES,
  HEAD_BYTES,
  HEADER_COMPRESSED,
  HEADER_DATA,
  HEADER_PHOTO,
  IRIDIUM_MO_HEADER,
  LENGTH_MASK,
  PROTOCOL,
} from './galileo.constants.js';
import {
  decodeCompressedPacket,
  decodeIridium,
  decodeMainPacket,
  decodePhotoPacket,
  type PacketHandler,
  type PacketOutcome,
} from './galileo.messages.js';
import { ByteReader } from '../shared/byte-reader.js';

/**
 * Packets by header byte (GalileoProtocolDecoder.decode), each with the header of its
 * acknowledgement and whether it needs a device the connection already names (compressed packets
 * and photos carry no IMEI).
 */
const PACKETS: Readonly<Record<number, { handler: PacketHandler; ack: number }>> = {
  [HEADER_DATA]: { handler: decodeMainPacket, ack: ACK_DATA },
  [HEADER_PHOTO]: { handler: decodePhotoPacket, ack: ACK_PHOTO },
  [HEADER_COMPRESSED]: { handler: decodeCompressedPacket, ack: ACK_DATA },
};

/** An Iridium SBD message: header 0x01, then a big-endian length and the MO header `01 00 1C`. */
export const isIridium = (frame: Buffer, at = 0): boolean =>
  frame[at] === HEADER_DATA && frame.length >= at + 6 && frame.readUIntBE(at + 3, 3) === IRIDIUM_MO_HEADER;

/**
 * One packet as the splitter cuts it: `header | u16 LE length (15 bits) | data | CRC-16/MODBUS LE`
 * over the header to the data. A mismatch is a warning (`checksum: 'accept'`) or an error
 * (`strict`). Every packet that is read is acknowledged with its ack header and its checksum bytes
 * as received; a packet without an IMEI, on a connection that has named no device, is neither
 * read on nor acknowledged (as Traccar, which has no device to file it under). Iridium messages
 * carry no checksum and get no answer.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (isIridium(frame)) return result(decodeIridium(frame, ctx), []);
  const packet = PACKETS[frame[0]];
  if (!packet) throw new ProtocolError(PROTOCOL, `unknown packet header 0x${(frame[0] ?? 0).toString(16)}`, frame);
  if (frame.length < HEAD_BYTES + CRC_BYTES)
    throw new ProtocolError(PROTOCOL, `packet of ${frame.length} bytes is shorter than a header`, frame);
  const end = HEAD_BYTES + (frame.readUInt16LE(1) & LENGTH_MASK);
  if (frame.length < end + CRC_BYTES)
    throw new ProtocolError(PROTOCOL, `packet of ${frame.length} bytes is shorter than its length`, frame);
  const received = frame.subarray(end, end + CRC_BYTES);
  const crc = crc16Modbus(frame, 0, end);
  const warnings: string[] = [];
  let checksumError: string | undefined;
  if (crc !== received.readUInt16LE(0)) {
    checksumError = `CRC ${received.readUInt16LE(0).toString(16).padStart(4, '0')} does not match ${crc.toString(16).padStart(4, '0')}`;
    if (ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, checksumError, frame);
    warnings.push(checksumError);
  }
  const out = packet.handler(new ByteReader(PROTOCOL, frame, HEAD_BYTES, end), frame, ctx);
  const known = out.identity !== undefined || ctx.deviceId !== undefined || frame[0] === HEADER_PHOTO;
  const replies = known ? [Buffer.concat([Buffer.from([packet.ack]), received])] : [];
  return {
    ...result(known ? out : { messages: [] }, replies),
    ...((warnings.length || out.warnings) && { warnings: [...warnings, ...(out.warnings ?? [])] }),
    ...(checksumError && { checksumError }),
  };
}

function result(out: PacketOutcome, replies: Buffer[]): DecodeResult {
  const commandResults: CommandResult[] = out.messages
    .filter((m) => typeof m.attributes.result === 'string')
    .map((m) => ({ text: m.attributes.result as string }));
  return {
    ...(out.identity !== undefined && { identity: out.identity }),
    messages: out.messages,
    replies,
    ...(commandResults.length && { commandResults }),
  };
}
