import { commandBytes } from '../shared/command-text.js';
import { CommandError, type CommandContext, type EncodedCommand } from '../types.js';
import {
  COMMAND_SEQUENCE,
  KEY_CONFIG_REQUEST_ALL,
  KEY_FIRMWARE_URL,
  MSG_CONFIGURATION,
  MSG_SYSTEM_CONTROL,
  PROTOCOL,
} from './minifinder2.constants.js';
import { minifinder2Frame } from './minifinder2.decoder.js';

/** a record's length byte counts the key and the value */
const MAX_RECORD_VALUE = 0xff - 1;
const USAGE = 'a minifinder2 command is "firmwareUpdate URL", "configuration" or "configuration HEX"';

/**
 * A Text command as the reference's encoder writes its two command types, in a frame with flags 0
 * and sequence id 1:
 * - `firmwareUpdate URL`: system control (0x04), record 0x30 holding the URL;
 * - `configuration`: a configuration message (0x02) asking for every setting (record F0);
 * - `configuration HEX`: a configuration message whose records are the given bytes (spaces allowed).
 * The device answers with a response (0x7F) or a system control 0x1F record, which echo nothing.
 */
export function encodeMinifinder2Command(text: string, _ctx: CommandContext): EncodedCommand {
  const [word, ...rest] = text.trim().split(/\s+/);
  const argument = rest.join(' ');
  if (word === 'firmwareUpdate' && argument) {
    const url = commandBytes(PROTOCOL, argument, { delimiters: [], maxBytes: MAX_RECORD_VALUE });
    const content = Buffer.concat([Buffer.from([MSG_SYSTEM_CONTROL, 1 + url.length, KEY_FIRMWARE_URL]), url]);
    return { bytes: minifinder2Frame(COMMAND_SEQUENCE, content), match: {} };
  }
  if (word === 'configuration' && !argument) {
    const content = Buffer.from([MSG_CONFIGURATION, 1, KEY_CONFIG_REQUEST_ALL]);
    return { bytes: minifinder2Frame(COMMAND_SEQUENCE, content), match: {} };
  }
  const records = argument.replace(/\s+/g, '');
  if (word === 'configuration' && /^(?:[0-9a-fA-F]{2})+$/.test(records)) {
    const content = Buffer.concat([Buffer.from([MSG_CONFIGURATION]), Buffer.from(records, 'hex')]);
    if (content.length > 0xffff) throw new CommandError(PROTOCOL, 'TOO_LONG', 'the configuration is over 65535 bytes');
    return { bytes: minifinder2Frame(COMMAND_SEQUENCE, content), match: {} };
  }
  if (text.trim() === '') throw new CommandError(PROTOCOL, 'EMPTY', 'the command is empty');
  throw new CommandError(PROTOCOL, 'CHARSET', USAGE);
}
