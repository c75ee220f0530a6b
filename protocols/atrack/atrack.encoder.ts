import { commandBytes } from '../shared/command-text.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { PROTOCOL } from './atrack.constants.js';

/** AT commands are short; the device's command buffer takes a few hundred bytes */
const MAX_COMMAND_BYTES = 512;

/**
 * A Text command (`AT$INFO=?`, `AT$FORM=…`, `AT$REBOOT=…`) as the text and CR LF, exactly what the
 * reference writes for a custom command (AtrackProtocolEncoder). The device answers with a `$`
 * line (`$OK`, `$ERROR=<code>`, `$INFO=…`) that echoes nothing: it answers the oldest command waiting.
 */
export function encodeAtrackCommand(text: string, _ctx: CommandContext): EncodedCommand {
  const body = commandBytes(PROTOCOL, text, { delimiters: ['\r', '\n'], maxBytes: MAX_COMMAND_BYTES });
  return { bytes: Buffer.concat([body, Buffer.from('\r\n', 'latin1')]), match: {} };
}
