import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './galileo.constants.js';
import { decode } from './galileo.decoder.js';
import { encodeGalileoCommand } from './galileo.encoder.js';
import { createGalileoSplitter } from './galileo.frame.js';

/**
 * Galileosky terminals over TCP; docs/protocols/galileo.md. The head packet names the IMEI, later
 * packets may not: those are the connection's device. Packets are answered `02` (photos `07`) and
 * their checksum as received, once stored.
 *
 * Setting `compressed=true`: Iridium payloads are compressed records (Traccar `setCompressed`).
 * Commands: a Text command goes as a command packet (tags 03, 04, E0, E1); the answer comes back
 * in `commandResults`.
 */
export const galileoProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  settings: ['compressed'],
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createGalileoSplitter(maxFrameBytes),
  decode,
  encodeCommand: encodeGalileoCommand,
};
