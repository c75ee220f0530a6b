import type { ProtocolModule } from '../types.js';
import { TK103_MAX_FRAME_BYTES } from './tk103.constants.js';
import { decode } from './tk103.decoder.js';
import { encodeTk103Command } from './tk103.encoder.js';
import { createTk103Splitter } from './tk103.frame.js';

/**
 * The TK103 `(<12-char id><command>...)` dialect (and its `(<imei>,<command>,...)` comma form) over
 * TCP and UDP, docs/protocols.md §3.12. Not GPS103's `imei:` format. A UDP datagram is one sentence. No
 * session keys.
 *
 * Commands: a Text command goes as `(<id><text>)`; ZC03 free-text answers echo nothing.
 */
export const tk103Protocol: ProtocolModule = {
  name: 'tk103',
  transports: ['tcp', 'udp'],
  maxFrameBytes: TK103_MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = TK103_MAX_FRAME_BYTES) => createTk103Splitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
  encodeCommand: encodeTk103Command,
};
