import type { ProtocolModule } from '../types.js';
import { GL200_MAX_FRAME_BYTES } from './gl200.constants.js';
import { decodeGl200 } from './gl200.decoder.js';
import { encodeGl200Command } from './gl200.encoder.js';
import { createGl200Splitter } from './gl200.frame.js';

/**
 * Queclink @Track (GL/GV/GB/GMT trackers, `+RESP:GTFRI,...$`), TCP and UDP; docs/protocols.md §3.6. A
 * UDP datagram is one report, decoded like a TCP frame. The model that decides some layouts comes
 * from the device record (`ctx.model`), else from the report's protocol version. No session keys.
 *
 * Replies: `+SACK:<count>$` for every text report (the heartbeat gets `+SACK:GTHBD,<version>,<count>$`),
 * sent once stored. Commands: a Text command goes as written (`AT+GTxxx=...`) with `$` added; the
 * device's `+ACK:GTxxx,...` comes back in `commandResults` with the command word and serial.
 */
export const gl200Protocol: ProtocolModule = {
  name: 'gl200',
  transports: ['tcp', 'udp'],
  maxFrameBytes: GL200_MAX_FRAME_BYTES,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = GL200_MAX_FRAME_BYTES) => createGl200Splitter(maxFrameBytes),
  decode: decodeGl200,
  decodeDatagram: decodeGl200,
  encodeCommand: encodeGl200Command,
};
