import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './ruptela.constants.js';
import { decode } from './ruptela.decoder.js';
import { encodeRuptelaCommand } from './ruptela.encoder.js';
import { createRuptelaSplitter } from './ruptela.frame.js';

/**
 * Ruptela FM-Eco/Pro/Tco trackers over TCP; docs/protocols.md §3.11. Every packet names its IMEI;
 * records are answered `0002 6401 13bc` once stored, identification and heartbeat packets get
 * their own answers. No session keys.
 *
 * Commands: a Text command goes as an "SMS via GPRS" packet (0x6C); the device's answer (command
 * 7) comes back in `commandResults`.
 */
export const ruptelaProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createRuptelaSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeRuptelaCommand,
};
