import type { ProtocolModule } from '../types.js';
import { MAX_BODY_BYTES, PROTOCOL } from './flespi.constants.js';
import { decodeFlespiFrame, decodeFlespiHttp } from './flespi.decoder.js';

/**
 * flespi HTTP streams (and anything posting flespi messages) over HTTP; docs/protocols/flespi.md.
 * A POST body is a JSON array of flespi messages, each with its own `ident`, so one request may
 * carry several devices: `decodeHttp` returns them grouped (`devices`), and the HTTP endpoint
 * answers 200 once every known device's messages are stored. No commands, no session.
 */
export const flespiProtocol: ProtocolModule = {
  name: PROTOCOL,
  transports: ['http'],
  maxFrameBytes: MAX_BODY_BYTES,
  frameEncoding: 'http',
  decodeHttp: decodeFlespiHttp,
  decode: decodeFlespiFrame,
};
