import type { ProtocolModule } from '../types.js';
import { decodeGt06 } from './gt06.decoder.js';
import { encodeGt06Command } from './gt06.encoder.js';
import { createGt06Splitter, GT06_MAX_FRAME_BYTES } from './gt06.frame.js';

/**
 * GT06 / Concox / Jimi (docs/protocols.md 3.2), TCP. `ctx.model`, the device record's model, matters
 * where frames or alarm codes differ by model (LW*, SEEWORLD, NT20/XT40..., VL103/G18..., R11,
 * QH302R): the GT06 login names no model. The decoder keeps `gt06.tzOffsetMin` (the device clock's
 * offset, from the login packet) and `gt06.photos` (photo transfers in progress) in the session.
 *
 * Commands: a Text command goes as protocol 0x80 with a server flag (`ctx.serverFlag`, else the
 * serial); the device's 0x15 / 0x21 answer comes back in `commandResults` with that flag.
 */
export const gt06Protocol: ProtocolModule = {
  name: 'gt06',
  transports: ['tcp'],
  maxFrameBytes: GT06_MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes) => createGt06Splitter(maxFrameBytes),
  decode: decodeGt06,
  encodeCommand: (text, ctx) => encodeGt06Command(text, ctx),
};
