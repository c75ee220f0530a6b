import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import { COMMAND_VERSION, ID_BYTES, MSG_CC_PETROL_CONTROL, PROTOCOL } from './castel.constants.js';
import { frameOf } from './castel.replies.js';

/**
 * The commands Traccar's encoder writes (CastelProtocolEncoder): both are the CC petrol control
 * message 0x4583 with one byte, 1 to cut the fuel pump, 0 to restore it.
 */
const COMMANDS: Readonly<Record<string, number>> = {
  enginestop: 1,
  engineresume: 0,
};

/**
 * A Text command `engineStop` or `engineResume` (case does not matter) as a version-1 `@@` frame
 * with the device id (NUL-padded to 20 bytes) and CRC-16/X-25. The protocol carries no free text:
 * any other command is sent as Hex. The device's answer echoes nothing.
 */
export function encodeCastelCommand(text: string, ctx: CommandContext): EncodedCommand {
  const word = text.trim();
  if (word.length === 0) throw new CommandError(PROTOCOL, 'EMPTY', 'the command is empty');
  if (!/^[\x20-\x7e]+$/.test(word))
    throw new CommandError(PROTOCOL, 'CHARSET', 'the command holds a control or non-ASCII character');
  const value = COMMANDS[word.toLowerCase()];
  if (value === undefined) {
    throw new CommandError(
      PROTOCOL,
      'UNKNOWN_COMMAND',
      `castel takes the Text commands engineStop and engineResume; send other commands as Hex`,
    );
  }
  if (!/^[\x21-\x7e]{1,20}$/.test(ctx.deviceId)) {
    throw new CommandError(PROTOCOL, 'DEVICE_ID', `device id "${ctx.deviceId}" is not 1-20 ASCII characters`);
  }
  const id = Buffer.alloc(ID_BYTES);
  id.write(ctx.deviceId, 'latin1');
  return { bytes: frameOf(COMMAND_VERSION, id, MSG_CC_PETROL_CONTROL, Buffer.from([value])), match: {} };
}
