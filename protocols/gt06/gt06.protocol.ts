import type { ProtocolModule } from '../types.js';
import { decodeGt06 } from './gt06.decoder.js';
import { createGt06Splitter, GT06_MAX_FRAME_BYTES } from './gt06.frame.js';

/**
 * GT06 / Concox / Jimi (PROTOCOLS.md 3.2), TCP. Session keys the gateway may rely on:
 * `gt06.tzOffsetMin` (device clock offset from the login packet), `gt06.model` (set by the gateway
 * to the device model when frames differ by model: LW*, SEEWORLD, NT20/XT40..., VL103/G18..., R11,
 * QH302R), `gt06.photos` (photo transfers in progress).
 */
export const gt06Protocol: ProtocolModule = {
  name: 'gt06',
  transports: ['tcp'],
  defaultPort: 5023,
  maxFrameBytes: GT06_MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes) => createGt06Splitter(maxFrameBytes),
  decode: decodeGt06,
};
