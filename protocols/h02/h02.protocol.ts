import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './h02.constants.js';
import { decode } from './h02.decoder.js';
import { encodeH02Command } from './h02.encoder.js';
import { createH02Splitter } from './h02.frame.js';

/**
 * H02 (SinoTrack ST-90x and similar), docs/protocols.md §3.3. TCP and UDP: a UDP datagram is one frame,
 * decoded the same way.
 *
 * Positions other than V1 get no reply: Traccar's server-wide `h02.ack` (an `R12` reply after each
 * position, off by default) is not offered, as no device record or frame says a tracker wants it.
 * A fixed binary frame length (Traccar's `h02.messageLength`) is an option of
 * `createH02Splitter({ messageLength })`; `createSplitter` auto-detects 32 or 45 bytes.
 *
 * Commands: a Text command `<CMD>[,<params>]` goes as `*HQ,<id>,<CMD>,<hhmmss>[,<params>]#`; the
 * device's `V4` confirmation (and an `SMS` text reply) comes back in `commandResults`.
 */
export const h02Protocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp', 'udp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  // Text frames (`*HQ,…#`) are given as text. A binary frame is given as hex: a FRAME of hex digits
  // only, of even length, starting with `24` (`$`) or `58` (`X`) is binary (the CLI detects it).
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes?: number) => createH02Splitter({ maxFrameBytes: maxFrameBytes ?? MAX_FRAME_BYTES }),
  decode,
  decodeDatagram: decode,
  encodeCommand: encodeH02Command,
};
