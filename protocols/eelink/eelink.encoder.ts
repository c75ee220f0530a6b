import { commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import * as C from './eelink.constants.js';

/** The envelope checksum: per byte, the 16-bit sum rotated left by one, plus the byte (Traccar EelinkProtocolEncoder). */
export function envelopeChecksum(buf: Buffer, start = 0, end = buf.length): number {
  let sum = 0;
  for (let i = start; i < end; i++) sum = ((((sum << 1) | (sum >>> 15)) & 0xffff) + buf[i]) & 0xffff;
  return sum;
}

/** A packet: `67 67 | type | u16 length (2 + content) | u16 index | content`. */
export function eelinkPacket(type: number, index: number, content: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.alloc(C.PACKET_HEADER_BYTES + 2 + content.length);
  out[0] = C.MARK;
  out[1] = C.MARK;
  out[2] = type;
  out.writeUInt16BE(2 + content.length, 3);
  out.writeUInt16BE(index, 5);
  content.copy(out, 7);
  return out;
}

/** The IMEI as the envelope writes it: 8 BCD bytes, a 0 nibble first. */
function imeiBytes(imei: string): Buffer {
  if (!/^\d{1,15}$/.test(imei))
    throw new CommandError(C.PROTOCOL, 'DEVICE_ID', `device id "${imei}" is not the IMEI an Eelink device has`);
  return Buffer.from(imei.padStart(16, '0'), 'hex');
}

/**
 * A UDP datagram: `"EL" | u16 length | u16 checksum | IMEI | packet`, the checksum over the IMEI and
 * the packet. The IMEI as digits, or as the 8 bytes a device's envelope held (its answers repeat them).
 */
export function envelope(imei: string | Buffer, packet: Buffer): Buffer {
  const body = Buffer.concat([typeof imei === 'string' ? imeiBytes(imei) : imei, packet]);
  const head = Buffer.alloc(6);
  head.write('EL', 0, 'latin1');
  head.writeUInt16BE(2 + body.length, 2);
  head.writeUInt16BE(envelopeChecksum(body), 4);
  return Buffer.concat([head, body]);
}

/**
 * A Text command (the device's SMS commands: `WHERE#`, `RELAY,1#`, `RESET#`, …) as a downlink
 * packet 0x80, index 0: `01 | u32 server id 0 | text`. To a device heard over UDP (its session holds
 * the envelope's IMEI) the packet goes in an "EL" envelope. The device answers with a 0x80 packet
 * of its own, which echoes the server id (always 0 here), so the answer names no command.
 */
export function encodeEelinkCommand(text: string, ctx: CommandContext): EncodedCommand {
  const envelopeImei = ctx.session?.[C.SESSION_ENVELOPE_IMEI];
  if (typeof envelopeImei !== 'string') imeiBytes(ctx.deviceId);
  const maxBytes = C.MAX_FRAME_BYTES - C.PACKET_HEADER_BYTES - 2 - 5 - C.ENVELOPE_HEADER_BYTES;
  const data = commandBytes(C.PROTOCOL, text, { delimiters: [], maxBytes });
  const content = Buffer.alloc(5 + data.length);
  content[0] = C.DOWNLINK_COMMAND;
  content.writeUInt32BE(0, 1);
  data.copy(content, 5);
  const packet = eelinkPacket(C.MSG_DOWNLINK, 0, content);
  return { bytes: typeof envelopeImei === 'string' ? envelope(envelopeImei, packet) : packet, match: {} };
}
