import { commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { PROTOCOL, TK103_MAX_FRAME_BYTES } from './tk103.constants.js';

/**
 * A Text command, the command word and its data (`AV001` output 1 on, `AV010` engine stop,
 * `AR00003C0000` report every 60 s, `AT00` restart, `AP00` one position, `AX01` odometer), as
 * `(<id><text>)` (Traccar Tk103ProtocolEncoder's custom command). `(` and `)` delimit frames, so
 * neither may be in the text. Answers come as ZC03 free text echoing nothing of the command: the
 * oldest command waiting is the one answered.
 */
export function encodeTk103Command(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^[0-9A-Za-z]{1,20}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the letters and digits a TK103 frame carries`,
    );
  }
  commandBytes(PROTOCOL, text, { delimiters: ['(', ')'], maxBytes: TK103_MAX_FRAME_BYTES - ctx.deviceId.length - 2 });
  return { bytes: Buffer.from(`(${ctx.deviceId}${text})`, 'latin1'), match: {} };
}
