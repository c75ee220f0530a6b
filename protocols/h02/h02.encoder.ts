import { commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './h02.constants.js';

/** the maker field of server commands (Traccar's default `h02.marker`) */
const MARKER = 'HQ';

/** `hhmmss` of `time` in UTC */
function hhmmss(time: Date): string {
  return [time.getUTCHours(), time.getUTCMinutes(), time.getUTCSeconds()]
    .map((n) => String(n).padStart(2, '0'))
    .join('');
}

/**
 * A Text command `<CMD>[,<params>]` (`S20,1,1` engine stop, `SCF,0,0` arm, `S71,22,60` interval) as
 * `*HQ,<id>,<CMD>,<hhmmss>[,<params>]#` (docs/protocols.md §5): the encoder puts the send time (UTC,
 * from `ctx.now`) after the command word, as the device echoes it. `#` ends an H02 frame and `*`
 * starts one, so neither may be in the text; the whole frame stays within what the H02 splitter
 * takes. The device confirms with `V4,<CMD>,...,<hhmmss>`: command word and time are the match.
 */
export function encodeH02Command(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^\d{1,20}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the 1-20 digits an H02 frame carries`,
    );
  }
  const time = hhmmss(ctx.now);
  const overhead = `*${MARKER},${ctx.deviceId},,${time}#`.length;
  commandBytes(PROTOCOL, text, { delimiters: ['#', '*'], maxBytes: MAX_FRAME_BYTES - overhead });
  const comma = text.indexOf(',');
  const command = comma < 0 ? text : text.slice(0, comma);
  if (!command) throw new CommandError(PROTOCOL, 'EMPTY', 'the command word before the first comma is empty');
  const params = comma < 0 ? '' : text.slice(comma);
  const frame = `*${MARKER},${ctx.deviceId},${command},${time}${params}#`;
  return { bytes: Buffer.from(frame, 'latin1'), match: { command, commandTime: time } };
}
