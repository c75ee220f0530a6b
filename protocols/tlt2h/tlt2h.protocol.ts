import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './tlt2h.constants.js';
import { decode } from './tlt2h.decoder.js';
import { createTlt2hSplitter } from './tlt2h.frame.js';

/**
 * TLT-2H and the Xexun MT/V-series trackers over TCP and UDP (docs/protocols/tlt2h.md): every
 * message names its IMEI in the header line and carries one or more records; nothing is answered.
 * A UDP datagram is one message without the `##\r\n` end. No session keys.
 *
 * Commands: none (the reference has no encoder; no command syntax over this link is known).
 */
export const tlt2hProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp', 'udp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createTlt2hSplitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
};
