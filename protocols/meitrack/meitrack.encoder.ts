import { commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { FLAG_COUNT, FLAG_FIRST, MEITRACK_MAX_FRAME_BYTES, PROTOCOL } from './meitrack.constants.js';
import { serverFrame } from './meitrack.messages.js';

/**
 * A Text command `<CMD>[,<params>]` (`A10` position now, `C01,0,12222` output 1 on, `B21,1` arm,
 * `C02,0,<phone>,<text>` SMS) as `@@<flag><len>,<imei>,<CMD>[,<params>]*XX\r\n` (Meitrack GPRS
 * protocol 1.1; Traccar MeitrackProtocolEncoder). The data identifier is `A`.. `z` from the
 * connection's serial, so commands in flight differ; the device answers with the same identifier
 * and command word, which tie the answer to its command. `*` ends the content and CR/LF the frame,
 * so none may be in the text.
 */
export function encodeMeitrackCommand(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^\d{1,20}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the IMEI digits a Meitrack frame carries`,
    );
  }
  const overhead = serverFrame('A', ctx.deviceId, '').length;
  commandBytes(PROTOCOL, text, {
    delimiters: ['*', '\r', '\n'],
    maxBytes: Math.min(1024, MEITRACK_MAX_FRAME_BYTES - overhead),
  });
  const command = text.split(',')[0];
  if (!command) throw new CommandError(PROTOCOL, 'EMPTY', 'the command word before the first comma is empty');
  const flag = String.fromCharCode(FLAG_FIRST + (ctx.serial % FLAG_COUNT));
  return { bytes: serverFrame(flag, ctx.deviceId, text), match: { command, flag } };
}
