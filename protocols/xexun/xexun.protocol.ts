import type { ProtocolModule } from '../types.js';
import { SETTING_EXTENDED, XEXUN_MAX_FRAME_BYTES } from './xexun.constants.js';
import { decode } from './xexun.decoder.js';
import { encodeXexunCommand } from './xexun.encoder.js';
import { createXexunSplitter } from './xexun.frame.js';

/**
 * Xexun TK102/TK103 text records over TCP (docs/protocols/xexun.md): the basic record
 * `G?RMC,…,imei:<id>,`, or with the device setting `extended=true` the full line around it. No
 * acknowledgement, no session keys.
 */
export const xexunProtocol: ProtocolModule = {
  name: 'xexun',
  transports: ['tcp'],
  maxFrameBytes: XEXUN_MAX_FRAME_BYTES,
  settings: [SETTING_EXTENDED],
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = XEXUN_MAX_FRAME_BYTES) => createXexunSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeXexunCommand,
};
