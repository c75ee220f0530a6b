import type { FrameSplitter, ProtocolModule } from '../types.js';
import { MAX_FRAME_BYTES, OPTION_FLEX_DATA_SIZE, PROTOCOL } from './navis.constants.js';
import { decode } from './navis.decoder.js';
import { encodeNavisCommand } from './navis.encoder.js';
import { createNavisSplitter } from './navis.frame.js';

/** The splitter, given the device's settings when they are known (`flexDataSize`). */
export function navisSplitter(
  maxFrameBytes = MAX_FRAME_BYTES,
  options: Readonly<Record<string, string>> = {},
): FrameSplitter {
  const size = Number(options[OPTION_FLEX_DATA_SIZE] ?? 0);
  return createNavisSplitter({ maxFrameBytes, flexDataSize: Number.isInteger(size) && size > 0 ? size : 0 });
}

/**
 * Navtelecom trackers (Navis, Signal, Smart) over TCP, NTCB and FLEX on one port;
 * docs/protocols/navis.md. *>S names the device, *>FLEX declares the record layout (session keys
 * `navis.imei`, `navis.flex`); every telemetry packet is answered once stored.
 *
 * Setting `flexDataSize`: the FLEX record size in bytes, for the splitter of a stream whose
 * negotiation it does not see (`navisSplitter(max, {flexDataSize})`); the decoder warns when it
 * differs from the negotiated one. Commands: NTCB-wrapped text.
 */
export const navisProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['tcp'],
  maxFrameBytes: MAX_FRAME_BYTES,
  frameEncoding: 'hex',
  settings: [OPTION_FLEX_DATA_SIZE],
  createSplitter: navisSplitter,
  decode,
  encodeCommand: encodeNavisCommand,
};
