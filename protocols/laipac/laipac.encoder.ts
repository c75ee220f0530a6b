import { commandBytes } from '../shared/command-text.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './laipac.constants.js';
import { sentence } from './laipac.messages.js';

/**
 * A Text command (`AVREQ,00000000,1` one position, `AVRESET,<id>,00000000` reboot, as Traccar's
 * encoder writes them with the device password) as a sentence: `$`, the text, `*`, its XOR, CR LF.
 * A `$` the text starts with is the sentence's own. `*`, CR and LF end a sentence, so none may be
 * in the text. Answers echo nothing of the command.
 */
export function encodeLaipacCommand(text: string, _ctx: CommandContext): EncodedCommand {
  const body = text.startsWith('$') ? text.substring(1) : text;
  commandBytes(PROTOCOL, body, { delimiters: ['*', '\r', '\n', '$'], maxBytes: MAX_FRAME_BYTES - 4 });
  return { bytes: sentence(body), match: {} };
}
