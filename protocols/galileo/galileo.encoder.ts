import { commandBytes } from '../shared/command-text.js';
import { crc16Modbus } from '../shared/crc.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import {
  CRC_BYTES,
  HEAD_BYTES,
  HEADER_DATA,
  IMEI_BYTES,
  MAX_COMMAND_BYTES,
  PROTOCOL,
  TAG_COMMAND_INDEX,
  TAG_COMMAND_TEXT,
  TAG_DEVICE_ID,
  TAG_IMEI,
} from './galileo.constants.js';

/**
 * A command packet (GalileoProtocolEncoder.encodeText): header 0x01, u16 LE length, then tags
 * 0x03 IMEI, 0x04 device id 0 (the IMEI is enough), 0xE0 command number 0 and 0xE1 the text with
 * its length byte, then CRC-16/MODBUS LE over all before it.
 */
export function galileoCommandPacket(imei: string, text: Buffer): Buffer {
  const dataBytes = 1 + IMEI_BYTES + 3 + 5 + 2 + text.length;
  const packet = Buffer.alloc(HEAD_BYTES + dataBytes + CRC_BYTES);
  let o = packet.writeUInt8(HEADER_DATA, 0);
  o = packet.writeUInt16LE(dataBytes, o);
  o = packet.writeUInt8(TAG_IMEI, o);
  o += packet.write(imei, o, 'latin1');
  o = packet.writeUInt8(TAG_DEVICE_ID, o);
  o = packet.writeUInt16LE(0, o);
  o = packet.writeUInt8(TAG_COMMAND_INDEX, o);
  o = packet.writeUInt32LE(0, o);
  o = packet.writeUInt8(TAG_COMMAND_TEXT, o);
  o = packet.writeUInt8(text.length, o);
  o += text.copy(packet, o);
  packet.writeUInt16LE(crc16Modbus(packet, 0, o), o);
  return packet;
}

/**
 * A Text command (the terminal's own commands: `status`, `Out 0,1`, ...) as a command packet. The
 * device answers with a packet holding tags 0xE0 and 0xE1 (the answer's text), which echoes the
 * command number, always 0 here: it answers the oldest command waiting.
 */
export function encodeGalileoCommand(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^\d{15}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the 15-digit IMEI a Galileo command packet carries`,
    );
  }
  const bytes = commandBytes(PROTOCOL, text, { delimiters: [], maxBytes: MAX_COMMAND_BYTES });
  return { bytes: galileoCommandPacket(ctx.deviceId, bytes), match: {} };
}
