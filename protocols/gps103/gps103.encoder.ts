import { commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { GPS103_MAX_FRAME_BYTES, PROTOCOL } from './gps103.constants.js';

/**
 * A Text command (`B` one position, `C,30s` periodic, `J` cut fuel, `K` resume, `H,080` overspeed)
 * as `**,imei:<imei>,<text>` (docs/protocols.md §5), with no terminator, as Traccar's encoder writes it
 * and its captured frame shows. `;`, CR and LF end GPS103 frames, so none may be in the text; the
 * frame stays within what the GPS103 splitter takes. Coban devices do not reliably answer: there is
 * nothing to match (a command counts as sent once written).
 */
export function encodeGps103Command(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^\d{1,20}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the IMEI digits a GPS103 command carries`,
    );
  }
  const prefix = `**,imei:${ctx.deviceId},`;
  commandBytes(PROTOCOL, text, { delimiters: [';', '\r', '\n'], maxBytes: GPS103_MAX_FRAME_BYTES - prefix.length });
  return { bytes: Buffer.from(prefix + text, 'latin1'), match: {} };
}
