/**
 * aedes' authorizePublish handler (node_modules/aedes/docs/Aedes.md "Handler: authorizePublish"), run for a client's
 * PUBLISH and for wills. An error closes the connection without an answer (MQTT-3.3.5-2: MQTT
 * 3.1.1 has no negative acknowledgement). A device's publish is stored before the callback, so the
 * PUBACK (QoS 1) or PUBREC (QoS 2) aedes writes after it follows the commit (mqtt.publish.ts).
 */
import type { Client, PublishPacket } from 'aedes';
import type { MqttContext } from './mqtt.context.js';

export function authorizePublish(
  gw: MqttContext,
  client: Client | null,
  packet: PublishPacket,
  done: (error?: Error | null) => void,
): void {
  if (!client) {
    // A will left by a client no longer connected (aedes passes null): it names nobody we can
    // check, so it is neither stored nor refused (a refused will would be retried for ever), not
    // retained, and authorizeForward keeps it from everyone but its own device's clients.
    packet.retain = false;
    return done(null);
  }
  const session = gw.sessions.get(client);
  if (!session) return done(new Error('not authenticated'));
  gw.publisher.authorize(client, session, packet, done);
}
