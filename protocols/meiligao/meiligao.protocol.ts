import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL, SETTING_SERVER } from './meiligao.constants.js';
import { decode } from './meiligao.decoder.js';
import { encodeMeiligaoCommand } from './meiligao.encoder.js';
import { createMeiligaoSplitter } from './meiligao.frame.js';

/**
 * Meiligao GT30i/GT60/VT300/VT310/VT400 and their clones, over TCP and UDP; docs/protocols/meiligao.md.
 * Every frame names its device (BCD id). Login, heartbeat, server request and photo upload frames
 * are answered with `@@` frames; positions and alarms are not. Session key: `meiligao.photo`.
 * Setting: `server` (the `ip:port` a server request is answered with).
 *
 * Commands: a Text command is a 4-hex-digit command word with optional data (`4101`,
 * `4102#000a`, `4132,480`), sent in an `@@` frame.
 */
export const meiligaoProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp', 'udp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  settings: [SETTING_SERVER],
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createMeiligaoSplitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
  encodeCommand: encodeMeiligaoCommand,
};
