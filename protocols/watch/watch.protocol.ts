import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './watch.constants.js';
import { decode } from './watch.decoder.js';
import { encodeWatchCommand } from './watch.encoder.js';
import { createWatchSplitter } from './watch.frame.js';

/**
 * The SeTracker family of 3G/4G kids' and elderly watches, `[SG*<id>*<len>*<TYPE>,…]` over TCP;
 * docs/protocols.md §3.9. The device is the id field; the 2-letter maker (SG, 3G, CS, ZJ …) varies
 * and is repeated in every answer. LK and AL frames are answered (`[SG*<id>*0002*LK]`), UD
 * positions are not. Session keys: `watch.maker`, `watch.indexed` (for the encoder).
 *
 * Commands: a Text command goes as `[<maker>*<id>*<len>*<text>]`; the watch's echo of the command
 * word comes back in `commandResults`, matched on that word.
 */
export const watchProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createWatchSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeWatchCommand,
};
