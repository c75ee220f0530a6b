import { commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import {
  DEFAULT_COMMAND_PREFIX,
  MAX_FRAME_BYTES,
  PROTOCOL,
  SESSION_PREFIX,
  SESSION_UNIVERSAL,
} from './suntech.constants.js';

/**
 * A Text command (`Reboot`, `Enable1` cut the engine, `Disable1` resume, `Enable2` arm, `StatusReq`)
 * as `<model>CMD;<id>;02;<text>` CR (SuntechProtocolEncoder): the model prefix the device reports
 * with (CommandContext.session; `SA200` before it has reported), or `CMD;<id>;02;<text>` CR for a
 * device that speaks the universal format. CR and LF end Suntech frames, so neither may be in the
 * text. The answer (`…CMD;Res;<id>;…`, universal `RES;<id>;…`) echoes nothing: it answers the
 * oldest command waiting.
 */
export function encodeSuntechCommand(text: string, ctx: CommandContext): EncodedCommand {
  if (!/^[0-9A-Za-z]{1,20}$/.test(ctx.deviceId)) {
    throw new CommandError(
      PROTOCOL,
      'DEVICE_ID',
      `device id "${ctx.deviceId}" is not the 1-20 letters or digits a Suntech frame carries`,
    );
  }
  const universal = ctx.session?.[SESSION_UNIVERSAL] === true;
  const model =
    typeof ctx.session?.[SESSION_PREFIX] === 'string'
      ? (ctx.session[SESSION_PREFIX] as string)
      : DEFAULT_COMMAND_PREFIX;
  const head = `${universal ? '' : model}CMD;${ctx.deviceId};02;`;
  const body = commandBytes(PROTOCOL, text, { delimiters: ['\r', '\n'], maxBytes: MAX_FRAME_BYTES - head.length - 1 });
  return { bytes: Buffer.concat([Buffer.from(head, 'latin1'), body, Buffer.from('\r', 'latin1')]), match: {} };
}
