import { commandBytes } from '../shared/command-text.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './wialon.constants.js';

/**
 * A Text command (`reboot`, `VER?`, `USSD:*100#`, `L1=1`, as Traccar's encoder writes its command
 * types) as the text and CR LF, the line the device reads. CR and LF end the line, so neither may be
 * in the text. The device's answer comes as a `#M#` packet, which echoes nothing of the command.
 */
export function encodeWialonCommand(text: string, _ctx: CommandContext): EncodedCommand {
  const bytes = commandBytes(PROTOCOL, text, { delimiters: ['\r', '\n'], maxBytes: MAX_FRAME_BYTES - 2 });
  return { bytes: Buffer.concat([bytes, Buffer.from('\r\n', 'latin1')]), match: {} };
}
