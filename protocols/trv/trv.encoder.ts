import { commandBytes } from '../shared/command-text.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { DEFAULT_VENDOR, FRAME_DELIMITER, MAX_FRAME_BYTES, PROTOCOL, SESSION_VENDOR } from './trv.constants.js';

/**
 * A Text command as the server's own messages are framed: the watch's vendor prefix, the text (a
 * server command type and its fields, `BP16` or `BP33,...`) and `#`: `IWBP16#`. The reference has no
 * encoder; this is the framing of its answers. The vendor is the one the watch last wrote (`IW`
 * until it has written one). `#` ends a frame, so the text may not hold it. Answers echo nothing
 * that ties them to the command.
 */
export function encodeTrvCommand(text: string, ctx: CommandContext): EncodedCommand {
  const known = ctx.session?.[SESSION_VENDOR];
  const vendor = typeof known === 'string' ? known : DEFAULT_VENDOR;
  const bytes = commandBytes(PROTOCOL, text, {
    delimiters: [FRAME_DELIMITER],
    maxBytes: MAX_FRAME_BYTES - vendor.length,
  });
  return { bytes: Buffer.concat([Buffer.from(vendor, 'latin1'), bytes, Buffer.from(FRAME_DELIMITER)]), match: {} };
}
