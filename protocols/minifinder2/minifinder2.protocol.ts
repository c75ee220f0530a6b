import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './minifinder2.constants.js';
import { decode } from './minifinder2.decoder.js';
import { encodeMinifinder2Command } from './minifinder2.encoder.js';
import { createMinifinder2Splitter } from './minifinder2.frame.js';

/**
 * MiniFinder Pico / Nano (and other devices of the same binary protocol) over TCP;
 * docs/protocols/minifinder2.md. Frames of key-length-value records; a data frame names its IMEI
 * (key 0x01) and may hold several positions. A frame whose flags ask for it is answered with the
 * same sequence id (`7F 01 00`, or the services asked for, the time from ctx.now). No session keys.
 * Commands: `firmwareUpdate URL` and `configuration [HEX]`.
 */
export const minifinder2Protocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createMinifinder2Splitter(maxFrameBytes),
  decode,
  encodeCommand: encodeMinifinder2Command,
};
