import type { ProtocolModule } from '../types.js';
import { TOTEM_MAX_FRAME_BYTES } from './totem.constants.js';
import { decode } from './totem.decoder.js';
import { encodeTotemCommand } from './totem.encoder.js';
import { createTotemSplitter } from './totem.frame.js';

/**
 * Totem AT0x trackers over TCP (docs/protocols/totem.md): `$$` frames in the new format (4-digit
 * length, type, fixed-width fields, XOR) or the old one (2-hex length, RMC or `|` fields,
 * CRC-16/MODBUS). Every frame is acknowledged. No session keys.
 */
export const totemProtocol: ProtocolModule = {
  name: 'totem',
  transports: ['tcp'],
  maxFrameBytes: TOTEM_MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = TOTEM_MAX_FRAME_BYTES) => createTotemSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeTotemCommand,
};
