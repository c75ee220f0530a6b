import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './trv.constants.js';
import { decode } from './trv.decoder.js';
import { encodeTrvCommand } from './trv.encoder.js';
import { createTrvSplitter } from './trv.frame.js';

/**
 * TRV / IW kids' and elderly watches over TCP, `<vendor><type>…#` (docs/protocols/trv.md). The AP00
 * login names the device for the messages after it; every message but a few is answered with its
 * type moved on a letter (`IWBP01#`). Session key: `trv.vendor` (the prefix, for commands).
 *
 * Commands: a Text command goes as `<vendor><text>#`; answers are not matched.
 */
export const trvProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createTrvSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeTrvCommand,
};
