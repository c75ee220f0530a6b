import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './wialon.constants.js';
import { decode } from './wialon.decoder.js';
import { encodeWialonCommand } from './wialon.encoder.js';
import { createWialonSplitter } from './wialon.frame.js';

/**
 * Wialon IPS 1.1, 2.0 and 2.1 (Gurtam) over TCP and UDP; docs/protocols/wialon.md. `#L#` names the
 * device for the data packets after it on the connection; a UDP datagram may name it in front
 * (`2.0;<IMEI>#D#…`). Session key: `wialon.version` (the login's version, for the IPS 2.0 CRC).
 *
 * Commands: a Text command goes as the text and CR LF; answers come as `#M#` (commandResults).
 */
export const wialonProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp', 'udp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createWialonSplitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
  encodeCommand: encodeWialonCommand,
};
