import { commandBytes } from '../shared/command-text.js';
import { sum8 } from '../shared/crc.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { COMMAND_INDEX, MAX_FRAME_BYTES, PROTOCOL } from './startek.constants.js';

/**
 * A Text command (`900,1,1` cuts the engine through output 1, `900,1,0` restores it, `900,<n>,<0|1>`
 * switches output n) as `$$:<length>,<imei>,<text><checksum>` CR LF (StartekProtocolEncoder): the
 * length counts the comma before the IMEI through the end of the text, the checksum is the 8-bit
 * sum of everything before it in two upper-case hex digits. The answer (command code other than
 * 000/710) echoes nothing: it answers the oldest command waiting.
 */
export function encodeStartekCommand(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^\d{1,20}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the 1-20 digits an iStartek frame carries`,
    );
  }
  const room = MAX_FRAME_BYTES - 16 - ctx.deviceId.length;
  const body = commandBytes(PROTOCOL, text, { delimiters: ['\r', '\n'], maxBytes: room }).toString('latin1');
  const sentence = `$$${COMMAND_INDEX}${1 + ctx.deviceId.length + 1 + body.length},${ctx.deviceId},${body}`;
  const head = Buffer.from(sentence, 'latin1');
  const checksum = sum8(head).toString(16).toUpperCase().padStart(2, '0');
  return { bytes: Buffer.concat([head, Buffer.from(`${checksum}\r\n`, 'latin1')]), match: {} };
}
