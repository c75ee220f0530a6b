import { commandBytes } from '../shared/command-text.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { PROTOCOL, XEXUN_MAX_FRAME_BYTES } from './xexun.constants.js';

/**
 * A Text command goes as it is, with no framing or terminator, as Traccar's XexunProtocolEncoder
 * writes its two commands: `powercar<password> 11` stops the engine, `powercar<password> 00`
 * resumes it (default password 123456). The device's answers carry nothing to match.
 */
export function encodeXexunCommand(text: string, _ctx: CommandContext): EncodedCommand {
  return { bytes: commandBytes(PROTOCOL, text, { delimiters: [], maxBytes: XEXUN_MAX_FRAME_BYTES }), match: {} };
}
