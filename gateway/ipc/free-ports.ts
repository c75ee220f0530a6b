/**
 * Port 0 ("a free port") for gateway processes: the core picks the number before any of them
 * listens, free for TCP and, where the protocol also takes datagrams, for UDP on the same number.
 * Every gateway process (and one started again later) then listens on that same port through the
 * core's handle; with port 0 itself, cluster would share one handle between every trackgate
 * started in one process (tests), as it keys handles by address and port.
 */
import type { ProtocolModule } from '../../protocols/types.js';
import { freeTcpPort } from '../shared/stream-server.js';
import { udpPortFree } from '../udp/udp-listener.js';

export async function concretePorts(
  ports: Readonly<Record<string, number | 'off'>>,
  protocols: Record<string, ProtocolModule>,
  host: string,
  /** numbers already picked (a protocol's plain and TLS ports both 0 get two) */
  taken = new Set<number>(),
  /** 'tcp': TLS ports, TCP only */
  only?: 'tcp',
): Promise<Record<string, number | 'off'>> {
  const out: Record<string, number | 'off'> = { ...ports };
  for (const [name, port] of Object.entries(ports)) {
    if (port !== 0 || !protocols[name]) continue;
    const udp =
      only !== 'tcp' && protocols[name].transports.includes('udp') && protocols[name].decodeDatagram !== undefined;
    for (let attempt = 0; ; attempt++) {
      const candidate = await freeTcpPort(host);
      if (!taken.has(candidate) && (!udp || (await udpPortFree(candidate, host)))) {
        taken.add(candidate);
        out[name] = candidate;
        break;
      }
      if (attempt >= 20) throw new Error(`no port free for both TCP and UDP for ${name}`);
    }
  }
  return out;
}
