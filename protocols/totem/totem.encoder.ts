import { commandBytes } from '../shared/command-text.js';
import { xor8 } from '../shared/crc.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { PROTOCOL, TOTEM_MAX_FRAME_BYTES } from './totem.constants.js';

/** `$$`, the 4-digit length, `CF`, and the 2-hex XOR after the text */
const FRAMING_BYTES = 10;

/**
 * A Text command, `<password>,<code>[,<parameters>]` as the Totem manual writes its commands
 * (`000000,006` reboots, `000000,007` factory reset, `000000,012` one position, `000000,025,C,1`
 * output C on), framed as Traccar's TotemProtocolEncoder frames it: `$$<length>CF<text>` and the
 * XOR of all that as 2 hex digits; the length counts the whole frame. Answers match nothing.
 */
export function encodeTotemCommand(text: string, _ctx: CommandContext): EncodedCommand {
  commandBytes(PROTOCOL, text, { delimiters: ['$$'], maxBytes: TOTEM_MAX_FRAME_BYTES - FRAMING_BYTES });
  const framed = `$$${String(FRAMING_BYTES + text.length).padStart(4, '0')}CF${text}`;
  const sum = xor8(Buffer.from(framed, 'latin1')).toString(16).toUpperCase().padStart(2, '0');
  return { bytes: Buffer.from(framed + sum, 'latin1'), match: {} };
}
