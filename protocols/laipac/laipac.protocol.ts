import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL, SETTING_DEVICE_PASSWORD } from './laipac.constants.js';
import { decode } from './laipac.decoder.js';
import { encodeLaipacCommand } from './laipac.encoder.js';
import { createLaipacSplitter } from './laipac.frame.js';

/**
 * Laipac S911/AVL sentences over TCP; docs/protocols/laipac.md. Every sentence names its device; no
 * session keys. Setting: `devicePassword` (for `$AVCFG`; default `00000000`).
 *
 * Commands: a Text command goes as `$<text>*XX` CR LF.
 */
export const laipacProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  settings: [SETTING_DEVICE_PASSWORD],
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createLaipacSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeLaipacCommand,
};
