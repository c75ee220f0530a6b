import type { ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, PROTOCOL, SETTING_ACK } from './t55.constants.js';
import { decode } from './t55.decoder.js';
import { createT55Splitter } from './t55.frame.js';

/**
 * The T55 family (Traccar's catch-all NMEA decoder) over TCP lines and UDP datagrams;
 * docs/protocols/t55.md. NMEA RMC/GGA/GLL/RMA sentences and vendor lines ($PUBX, $TRCCR, $GPIOP,
 * $GPTXT, QZE, WMCS `$ID`), after a line that names the device ($PGID, $DEVID, IMEI, ...). Session
 * keys `t55.identity`, `t55.pending`, `t55.released`. The setting `ack=true` answers each RMC with
 * `OK1` CR LF over TCP. No commands.
 */
export const t55Protocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp', 'udp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  settings: [SETTING_ACK],
  frameEncoding: 'text',
  createSplitter: (maxFrameBytes = MAX_FRAME_BYTES) => createT55Splitter(maxFrameBytes),
  decode,
  decodeDatagram: decode,
};
