/**
 * aedes' authorizeForward handler (node_modules/aedes/docs/Aedes.md "Handler: authorizeForward"): run for each
 * recipient of each packet, retained ones and a restored session's queue included; null writes
 * nothing to that recipient. Device topics reach only the same device's clients; live packets
 * only API users of the device's account (and group), through their bounded outboxes
 * (live.feed.ts, live.outbox.ts). A token login ends with its token: a live packet for a user
 * whose token expired closes its connection instead.
 */
import type { AedesPublishPacket, Client } from 'aedes';
import type { MqttContext } from './mqtt.context.js';
import { deviceOfTopic, LIVE_PREFIX } from './mqtt.topics.js';

export function authorizeForward(
  gw: MqttContext,
  client: Client,
  packet: AedesPublishPacket,
): AedesPublishPacket | null {
  const session = gw.sessions.get(client);
  const identity = session?.identity;
  if (!identity) return null;
  if (packet.topic.startsWith(LIVE_PREFIX)) {
    if (identity.kind !== 'user') return null;
    if (identity.expiresAtMs !== null && gw.clock.now().getTime() >= identity.expiresAtMs) {
      setImmediate(() => client.close());
      return null;
    }
    return session.live ? gw.live.forward(session.live, packet) : null;
  }
  if (identity.kind !== 'device' || deviceOfTopic(packet.topic) !== identity.deviceId) return null;
  // A device's own echoes go through aedes' emitter, where a write to a socket that does not drain
  // holds a delivery slot until drainTimeout (see live.outbox.ts): a backed-up socket gets none.
  if (gw.sessions.connection(client)?.stream.writableNeedDrain) return null;
  return packet;
}
