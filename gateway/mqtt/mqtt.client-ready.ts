/**
 * aedes' `clientReady` and `clientDisconnect` / `clientError` events (node_modules/aedes/docs/Aedes.md "Event:
 * clientReady": the CONNACK was sent and the session is set up). A device is marked connected in
 * the directory; an API user joins the live feed with its own bounded outbox (live.outbox.ts),
 * and leaves it when its client goes. A device whose subscription covers its commands topic gets
 * its queued commands (mqtt.commands.ts) from then on, until its client goes.
 */
import type { Client } from 'aedes';
import type { MqttContext } from './mqtt.context.js';
import type { LiveSubscriber } from './live.feed.js';
import { LiveOutbox } from './live.outbox.js';
import { PROTOCOL } from './mqtt.auth.js';

export function clientReady(gw: MqttContext, client: Client): void {
  const session = gw.sessions.get(client);
  if (!session) return;
  const identity = session.identity;
  if (identity.kind === 'device') {
    gw.logger.debug({ clientId: client.id, deviceId: identity.deviceId }, 'mqtt: device connected');
    void touchDevice(gw, identity.deviceId, session.remoteAddress);
    // a persistent session's restored subscription to its commands topic
    if (session.takesCommands) gw.commands?.ready(client, identity.deviceId);
    return;
  }
  const outbox = new LiveOutbox(
    (packet, done) => client.publish(packet, done),
    () => client.closed,
    gw.liveOutbox,
    (dropped) =>
      gw.logger.warn({ clientId: client.id, dropped }, 'mqtt: live subscriber too slow; dropping its oldest packets'),
  );
  const subscriber: LiveSubscriber = {
    principal: identity.principal,
    get closed() {
      return client.closed;
    },
    get wantsFrames() {
      return session.wantsFrames === true;
    },
    outbox,
  };
  gw.sessions.addLive(client, session, subscriber);
  gw.live.add(subscriber);
}

/** aedes' 'subscribe' event: the subscriptions are in place, so a device's commands can go to it now. */
export function clientSubscribed(gw: MqttContext, client: Client): void {
  const session = gw.sessions.get(client);
  if (session?.identity.kind === 'device' && session.takesCommands)
    gw.commands?.ready(client, session.identity.deviceId);
}

export function clientGone(gw: MqttContext, client: Client): void {
  gw.commands?.gone(client);
  const subscriber = gw.sessions.dropLive(client);
  if (subscriber) gw.live.remove(subscriber);
}

/** The device's last connection, as for a tracker's; a failure here only loses that mark. */
async function touchDevice(gw: MqttContext, deviceId: string, remoteAddress: string | null): Promise<void> {
  try {
    const r = await gw.directory.resolve(deviceId, PROTOCOL, remoteAddress);
    if (r.status === 'ok') await gw.directory.touch(r.device, PROTOCOL);
  } catch {
    // the next publish touches it again
  }
}
