import { commandBytes } from '../shared/command-text.js';
import { crc16Kermit } from '../shared/crc.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import {
  CRC_BYTES,
  LENGTH_BYTES,
  MAX_FRAME_BYTES,
  MSG_SMS_VIA_GPRS,
  PROTOCOL,
  SERVER_COMMAND_OFFSET,
} from './ruptela.constants.js';

/**
 * A server packet (RuptelaProtocolEncoder.encodeContent): `u16 length (1 + content) | 100 + command
 * | content | CRC-16/KERMIT` over the command byte and content. Server packets carry no IMEI. Also
 * the answers to identification and heartbeat packets (`00 02 | 100 + command | 01 | CRC`).
 */
export function ruptelaPacket(command: number, content: Buffer): Buffer {
  const packet = Buffer.alloc(LENGTH_BYTES + 1 + content.length + CRC_BYTES);
  packet.writeUInt16BE(1 + content.length, 0);
  packet[2] = SERVER_COMMAND_OFFSET + command;
  content.copy(packet, 3);
  packet.writeUInt16BE(crc16Kermit(packet, 2, 3 + content.length), 3 + content.length);
  return packet;
}

/**
 * A Text command (the device's SMS commands: `getver`, `setio 1,1`, `coords`, a configuration
 * line …) as an "SMS via GPRS" packet: command 8, sent as 108 (0x6C), the text as ASCII
 * (RuptelaProtocolEncoder, custom command). The device answers with command 7 (SMS via GPRS
 * response), which echoes nothing of the command: it answers the oldest one waiting.
 */
export function encodeRuptelaCommand(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^\d{1,20}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the IMEI digits a Ruptela device has`,
    );
  }
  const content = commandBytes(PROTOCOL, text, {
    delimiters: [],
    maxBytes: MAX_FRAME_BYTES - LENGTH_BYTES - 1 - CRC_BYTES,
  });
  return { bytes: ruptelaPacket(MSG_SMS_VIA_GPRS, content), match: {} };
}
