import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './castel.constants.js';
import { decode, decodeDatagram } from './castel.decoder.js';
import { encodeCastelCommand } from './castel.encoder.js';
import { createCastelSplitter } from './castel.frame.js';

/**
 * SinoCastel OBD trackers (IDD-213 and kin) over TCP and UDP; docs/protocols/castel.md. Binary
 * `@@` frames of the SC (versions 3, 4) and CC protocols and `$$` MPIP frames, each naming its
 * device; logins, heartbeats and alarms are answered in the same envelope.
 *
 * Commands: the Text commands `engineStop` and `engineResume` (CC petrol control 0x4583).
 */
export const castelProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp', 'udp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createCastelSplitter(maxFrameBytes),
  decode,
  decodeDatagram,
  encodeCommand: encodeCastelCommand,
};
