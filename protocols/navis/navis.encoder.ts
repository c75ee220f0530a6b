/**
 * Commands: the text (`*!SETOUT 1Y`, any NTCB text command of the manual) as the body of an NTCB
 * frame from the server (sender 1) to the device (receiver 0), as Traccar's NavisProtocolEncoder
 * writes a custom command. The device answers `*@C...` (commandResults), which echoes nothing.
 */
import { commandBytes } from '../shared/command-text.js';
import type { CommandContext, EncodedCommand } from '../types.js';
import { NTCB_HEADER_BYTES, NTCB_MAX_FRAME_BYTES, PROTOCOL } from './navis.constants.js';
import { ntcbFrame } from './navis.ntcb.messages.js';

const PREFIX = Buffer.from('@NTC', 'latin1');
const DEVICE = 0;
const SERVER = 1;

export function encodeNavisCommand(text: string, _ctx: CommandContext): EncodedCommand {
  const body = commandBytes(PROTOCOL, text, { delimiters: [], maxBytes: NTCB_MAX_FRAME_BYTES - NTCB_HEADER_BYTES });
  return { bytes: ntcbFrame(PREFIX, DEVICE, SERVER, body), match: {} };
}
