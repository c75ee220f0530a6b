import type { ProtocolModule } from '../types.js';
import { decode, decodeDatagram } from './teltonika.decoder.js';
import { TELTONIKA_MAX_FRAME_BYTES, createTeltonikaSplitter } from './teltonika.frame.js';

/**
 * Teltonika FMB/FMC/FMM/GH (Codec 7, 8, 8E, 12, 13, 16) over TCP and UDP; PROTOCOLS.md §3.1.
 * Session keys read (set by the gateway when known): `teltonika.model` (e.g. "FMB130", enables the
 * FM-only IO meanings and alarms 175/246/247/249/251/252) and `teltonika.extended` (Traccar's
 * `protocol.extended`: 16-byte IO group present).
 */
export const teltonikaProtocol: ProtocolModule = {
  name: 'teltonika',
  transports: ['tcp', 'udp'],
  defaultPort: 5027,
  maxFrameBytes: TELTONIKA_MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = TELTONIKA_MAX_FRAME_BYTES) => createTeltonikaSplitter(maxFrameBytes),
  decode,
  decodeDatagram,
};
