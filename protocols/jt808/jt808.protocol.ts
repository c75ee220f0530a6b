import type { ProtocolModule } from '../types.js';
import { decodeJt808 } from './jt808.decoder.js';
import { encodeJt808Command } from './jt808.encoder.js';
import { createJt808Splitter, MAX_FRAME_BYTES } from './jt808.frame.js';

/**
 * JT/T 808 (2013 and 2019), the Chinese national standard used by many 4G trackers and dashcams.
 *
 * `ctx.model`, the device record's model, names models whose alarm bits or extras differ, e.g.
 * `G-360P`, `GL100`, `JC371`, `MV710G`, `VL300` (Traccar's model override); the registration's own
 * model field is the maker's free text, not these names. Device clocks are read as GMT+8 (Beijing
 * time, Traccar's default). The decoder writes the session keys `jt808.terminalId`: the terminal
 * id as sent, zero-padded; and `jt808.version`: the 2019 version byte, which commands repeat.
 * `identity` is the id as sent (12 digits, 20 in 2019, leading zeros kept, as the label prints
 * it); `alternativeIdentities` the same id without its leading zeros (and a 2019 id as its 12
 * 2013 digits), tried in turn when no device has it (Traccar tries both, stripped first).
 *
 * `decode` takes splitter output (delimiters kept, escaping reversed); a raw captured frame that is
 * still escaped is recognised by its body length, so `trackgate decode` accepts either.
 *
 * Commands: a Text command goes as 0x8300 text message (Jimi JC371: 0x8900 pass-through) with the
 * connection's serial; the terminal's 0x0001 general response (and its text replies 0x6006, 0x1300,
 * 0x0701, Jimi `( … )`) come back in `commandResults`.
 */
export const jt808Protocol: ProtocolModule = {
  name: 'jt808',
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createJt808Splitter(maxFrameBytes),
  decode: decodeJt808,
  encodeCommand: encodeJt808Command,
};
