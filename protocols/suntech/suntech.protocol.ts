import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './suntech.constants.js';
import { decode } from './suntech.decoder.js';
import { encodeSuntechCommand } from './suntech.encoder.js';
import { createSuntechSplitter } from './suntech.frame.js';

/**
 * Suntech ST300/ST340/ST4xx/ST500/ST600/ST9xx and SA200 over TCP; docs/protocols.md §3.8. Legacy
 * reports `ST300STT;<id>;…`, universal ones `STT;<id>;<mask>;…` (CR-terminated), and binary
 * universal reports. No login and no acknowledgement: Suntech devices expect none. Session keys:
 * `suntech.prefix` and `suntech.universal` (for the encoder).
 *
 * Commands: a Text command goes as `<model>CMD;<id>;02;<text>` CR (universal devices: `CMD;…`);
 * the device's `CMD;Res` / `RES` answer comes back in `commandResults`.
 */
export const suntechProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createSuntechSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeSuntechCommand,
};
