import type { ProtocolModule } from '../types.js';
import { GPS103_MAX_FRAME_BYTES } from './gps103.constants.js';
import { decode } from './gps103.decoder.js';
import { encodeGps103Command } from './gps103.encoder.js';
import { createGps103Splitter } from './gps103.frame.js';

/**
 * Coban TK103/TK103B/GPS103 `imei:` ASCII protocol over TCP and UDP; docs/protocols.md §3.4. A UDP
 * datagram is one sentence, decoded exactly like a TCP frame. No session keys.
 *
 * Commands: a Text command goes as `**,imei:<imei>,<text>`; the devices answer unreliably and with
 * nothing to tie an answer to its command, so no answer is surfaced.
 */
export const gps103Protocol: ProtocolModule = {
  name: 'gps103',
  transports: ['tcp', 'udp'],
  maxFrameBytes: GPS103_MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = GPS103_MAX_FRAME_BYTES) => createGps103Splitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
  encodeCommand: encodeGps103Command,
};
