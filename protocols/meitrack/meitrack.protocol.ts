import type { ProtocolModule } from '../types.js';
import { MEITRACK_MAX_FRAME_BYTES } from './meitrack.constants.js';
import { decode } from './meitrack.decoder.js';
import { encodeMeitrackCommand } from './meitrack.encoder.js';
import { createMeitrackSplitter } from './meitrack.frame.js';

/**
 * Meitrack T1/T3/T366/MVT/P99 `$$` protocol over TCP and UDP (docs/protocols.md §3.7): AAA text reports,
 * CCC and CCE binary batches (CCC acknowledged so the tracker deletes them), AAC answered. No
 * login: every frame names its IMEI. A UDP datagram is one frame. No session keys.
 *
 * Commands: a Text command goes as `@@<flag><len>,<imei>,<text>*XX\r\n`; the answer repeats the
 * data identifier and command word.
 */
export const meitrackProtocol: ProtocolModule = {
  name: 'meitrack',
  transports: ['tcp', 'udp'],
  maxFrameBytes: MEITRACK_MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MEITRACK_MAX_FRAME_BYTES) => createMeitrackSplitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
  encodeCommand: encodeMeitrackCommand,
};
