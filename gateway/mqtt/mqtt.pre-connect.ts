/**
 * aedes' preConnect handler (node_modules/aedes/docs/Aedes.md "Handler: preConnect": a valid CONNECT, before
 * authenticate; the packet may be changed). MQTT 3.1.1 [MQTT-3.1.3-6]: a client may send an empty
 * client id with a clean session, and the server assigns one. We assign `<user name>_<random>`, so
 * that the client id rule of mqtt.auth.ts (a client id starts with its user name) holds for
 * server-assigned ids too.
 */
import { randomBytes } from 'node:crypto';
import type { Client, ConnectPacket } from 'aedes';

export function assignClientId(
  _client: Client,
  packet: ConnectPacket,
  done: (error: Error | null, ok: boolean) => void,
): void {
  if (!packet.clientId && packet.clean && packet.username) {
    packet.clientId = `${packet.username}_${randomBytes(6).toString('hex')}`;
  }
  done(null, true);
}
