import type { ProtocolModule } from './types.js';
import { teltonikaProtocol } from './teltonika/teltonika.protocol.js';
import { gps103Protocol } from './gps103/gps103.protocol.js';
import { h02Protocol } from './h02/h02.protocol.js';

/** Every protocol trackgate speaks, by name. Adding a protocol is one folder and one line here. */
export const protocols: Record<string, ProtocolModule> = {
  teltonika: teltonikaProtocol,
  gps103: gps103Protocol,
  h02: h02Protocol,
};

export function getProtocol(name: string): ProtocolModule | undefined {
  return Object.hasOwn(protocols, name) ? protocols[name] : undefined;
}
