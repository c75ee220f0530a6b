import type { ProtocolModule } from '../types.js';
import { decode, decodeDatagram } from './teltonika.decoder.js';
import { encodeTeltonikaCommand } from './teltonika.encoder.js';
import { TELTONIKA_MAX_FRAME_BYTES, createTeltonikaSplitter } from './teltonika.frame.js';

/**
 * Teltonika FMB/FMC/FMM/GH (Codec 7, 8, 8E, 12, 13, 16) over TCP and UDP; docs/protocols.md §3.1.
 * `ctx.model` (the device record's model, e.g. "FMB130") enables the FM-only IO meanings and the
 * alarms 175/246/247/249/251/252: other models use those IO ids for other things. Traccar's
 * server-wide `teltonika.extended` (a group of 16-byte IO values after the 8-byte group, a firmware
 * variant no device announces) is not supported: such a frame is malformed here.
 *
 * Commands: a Text command goes as a Codec 12 frame (TCP framing); the device's Codec 12 type 0x06
 * answer comes back in `commandResults`.
 */
export const teltonikaProtocol: ProtocolModule = {
  name: 'teltonika',
  transports: ['tcp', 'udp'],
  maxFrameBytes: TELTONIKA_MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = TELTONIKA_MAX_FRAME_BYTES) => createTeltonikaSplitter(maxFrameBytes),
  decode,
  decodeDatagram,
  encodeCommand: encodeTeltonikaCommand,
};
