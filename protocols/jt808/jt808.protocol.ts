import type { ProtocolModule } from '../types.js';
import { decodeJt808 } from './jt808.decoder.js';
import { createJt808Splitter, MAX_FRAME_BYTES } from './jt808.frame.js';

/**
 * JT/T 808 (2013 and 2019), the Chinese national standard used by many 4G trackers and dashcams.
 *
 * Session keys (DecodeContext.session), all optional:
 * - `jt808.model` (string, set by the gateway from the device's model): models whose alarm bits or
 *   extras differ, e.g. `G-360P`, `GL100`, `JC371`, `MV710G`, `VL300` (Traccar's model override).
 * - `jt808.utcOffsetMinutes` (number): the device clock's offset; default 480 (GMT+8, as Traccar).
 * - `jt808.terminalId` (string, written by the decoder): the terminal id as sent, zero-padded;
 *   `identity` is the same id without leading zeros (Traccar tries both, stripped first).
 *
 * `decode` takes splitter output (delimiters kept, escaping reversed); a raw captured frame that is
 * still escaped is recognised by its body length, so `trackgate decode` accepts either.
 */
export const jt808Protocol: ProtocolModule = {
  name: 'jt808',
  transports: ['tcp'],
  defaultPort: 5015,
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createJt808Splitter(maxFrameBytes),
  decode: decodeJt808,
};
