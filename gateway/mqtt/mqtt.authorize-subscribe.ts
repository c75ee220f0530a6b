/**
 * aedes' authorizeSubscribe handler (node_modules/aedes/docs/Aedes.md "Handler: authorizeSubscribe"; also run for
 * the subscriptions a persistent session restores). A device gets its own topics, a wildcard in
 * the device level narrowed to its id (OwnTracks subscribes to `owntracks/+/+`); an API user gets
 * `live/…` filters, scoped per packet in authorizeForward. A device whose filter covers its
 * `devices/{id}/commands` takes its commands on this client (mqtt.commands.ts). Anything else is answered null, which
 * aedes turns into SUBACK return code 0x80, failure (MQTT 3.1.1 §3.9.3).
 */
import type { Client, Subscription } from 'aedes';
import type { MqttContext } from './mqtt.context.js';
import type { Identity } from './mqtt.auth.js';
import {
  commandsTopic,
  filterMatches,
  isLiveFilter,
  matchesFrames,
  namesUnknownFrames,
  narrowDeviceFilter,
} from './mqtt.topics.js';
import { seesUnknownFrames } from './live.feed.js';

export function authorizeSubscribe(
  gw: MqttContext,
  client: Client,
  sub: Subscription,
  done: (error: Error | null, sub?: Subscription | null) => void,
): void {
  const session = gw.sessions.get(client);
  const identity = session?.identity;
  const granted = identity ? grant(identity, sub) : null;
  if (!granted) gw.logger.info({ clientId: client.id, topic: sub.topic }, 'mqtt: subscription refused');
  // frames are built only for accounts whose users listen (frame-tap.ts); kept until the client goes
  else if (session && identity?.kind === 'user' && matchesFrames(granted.topic)) session.wantsFrames = true;
  // commands go once the subscription is in place (the 'subscribe' event, or clientReady for a restored one)
  else if (session && identity?.kind === 'device' && filterMatches(granted.topic, commandsTopic(identity.deviceId)))
    session.takesCommands = true;
  done(null, granted);
}

function grant(identity: Identity, sub: Subscription): Subscription | null {
  if (identity.kind === 'device') {
    const topic = narrowDeviceFilter(sub.topic, identity.deviceId);
    return topic ? { ...sub, topic } : null;
  }
  if (!isLiveFilter(sub.topic)) return null;
  // `live/unknown/frames` shows identifiers of no account: named, it is for admins only (a wildcard
  // is granted, and its unknown frames are filtered per packet in live.feed.ts)
  if (namesUnknownFrames(sub.topic) && !seesUnknownFrames(identity.principal)) return null;
  return sub;
}
