import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL, SETTINGS } from './atrack.constants.js';
import { decode } from './atrack.decoder.js';
import { encodeAtrackCommand } from './atrack.encoder.js';
import { createAtrackSplitter } from './atrack.frame.js';

/**
 * ATrack AK/AX/AT trackers over TCP and UDP (docs/protocols/atrack.md): binary `@P` reports,
 * `@R` photo chunks, text `@P,…` reports, `$` command answers and the FE 02 keep-alive, all on
 * one port. Every report is acknowledged with FE 02 + unit id + sequence; the keep-alive is
 * echoed. Device settings (`custom`, `form`, `longDate`, `frameMask`, `decimalFuel`,
 * `alarmMap`) say how the custom-format fields of a device's reports are laid out. Session key:
 * `atrack.photo`. Commands: the text and CR LF.
 */
export const atrackProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp', 'udp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  settings: SETTINGS,
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createAtrackSplitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
  encodeCommand: encodeAtrackCommand,
};
