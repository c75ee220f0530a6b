import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL } from './eelink.constants.js';
import { decode } from './eelink.decoder.js';
import { encodeEelinkCommand } from './eelink.encoder.js';
import { createEelinkSplitter } from './eelink.frame.js';

/**
 * Eelink trackers (TK115/TK116/TK121/GPT…, old and V2.x packets) over TCP and UDP;
 * docs/protocols/eelink.md. TCP packets name no device: a login packet (0x01) does, later packets
 * use the connection's. UDP datagrams carry the IMEI in their "EL" envelope. Every packet but
 * 0x02 and 0x81 is answered with its type and index. Session key: `eelink.envelopeImei` (UDP, for
 * the encoder).
 *
 * Commands: a Text command (`WHERE#`, `RELAY,1#`) goes as a downlink packet 0x80, EL-wrapped to a
 * UDP device; the 0x80 answer comes back in `commandResults`.
 */
export const eelinkProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp', 'udp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createEelinkSplitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
  encodeCommand: encodeEelinkCommand,
};
