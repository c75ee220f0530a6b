import { commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { watchFrame } from './watch.decoder.js';
import {
  COMMAND_INDEX,
  DEFAULT_MAKER,
  MAX_FRAME_BYTES,
  PROTOCOL,
  SESSION_INDEXED,
  SESSION_MAKER,
} from './watch.constants.js';

/**
 * A Text command (`CR` locate now, `UPLOAD,60` interval, `SOS1,<phone>`, `RESET`, `POWEROFF`,
 * `FACTORY`, `LZ,0,+1`) as `[<maker>*<id>*[0001*]<len %04x>*<text>]` (WatchProtocolEncoder): the
 * maker is the one the watch used on this connection (CommandContext.session; `CS` before it has
 * sent a frame), and an index goes in when its frames carry one. `[` and `]` delimit frames and
 * `}` starts an escape, so none may be in the text. The watch answers by echoing the command word
 * (`[SG*<id>*0002*CR]`): that word is the match.
 */
export function encodeWatchCommand(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^[0-9A-Za-z]{1,32}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the 1-32 letters or digits a watch frame carries`,
    );
  }
  const maker =
    typeof ctx.session?.[SESSION_MAKER] === 'string' ? (ctx.session[SESSION_MAKER] as string) : DEFAULT_MAKER;
  const index = ctx.session?.[SESSION_INDEXED] === true ? COMMAND_INDEX : undefined;
  const overhead = watchFrame(maker, ctx.deviceId, index, Buffer.alloc(0)).length;
  const bytes = commandBytes(PROTOCOL, text, {
    delimiters: ['[', ']', '}'],
    maxBytes: Math.min(0xffff, MAX_FRAME_BYTES - overhead),
  });
  const comma = text.indexOf(',');
  const command = comma < 0 ? text : text.slice(0, comma);
  if (!command) throw new CommandError(PROTOCOL, 'EMPTY', 'the command word before the first comma is empty');
  return { bytes: watchFrame(maker, ctx.deviceId, index, bytes), match: { command } };
}
