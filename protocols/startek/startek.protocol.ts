import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './startek.constants.js';
import { decode } from './startek.decoder.js';
import { encodeStartekCommand } from './startek.encoder.js';
import { createStartekSplitter } from './startek.frame.js';

/**
 * iStartek VT100/VT200/PT60 trackers over TCP; docs/protocols/startek.md. Frames
 * `&&<index><length>,<imei>,<command>,<content><checksum>` CR LF, cut by their decimal length. 000
 * reports positions and events, 710 extended engine data; other codes answer commands. No login
 * and no acknowledgement. No session keys.
 *
 * Commands: a Text command goes as `$$:<length>,<imei>,<text><checksum>` CR LF; the device's answer
 * comes back in `commandResults`.
 */
export const startekProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createStartekSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeStartekCommand,
};
