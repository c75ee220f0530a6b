/**
 * Several instances side by side: what one stores, the others announce too (the MQTT live feed
 * of a user connected to another instance), and a user, device or account changed on one (a new
 * API key, a device's expiry, a time zone) is forgotten by every instance's caches at once, and a
 * command queued on one is delivered at once by the instance holding the device's connection, whose
 * status changes reach the live feed of users connected to any instance; a tracker that connects
 * to one has its older connection on the others closed, so its commands follow it. Events
 * go out on one Redis pub/sub channel and come back into each other instance's EventBus marked
 * remote, so they are never relayed twice.
 */
import { randomUUID } from 'node:crypto';
import type { ChangedCommand, EventBus, StoredAlert, StoredLocation } from './event-bus.js';
import type { Logger } from '../logger.js';
import { connectRedis, closeRedis } from '../redis/redis-client.redis.js';

/** o: origin; l, a: stored locations, alert; u, d, c: changed user, device, account; q: commands queued for a device; k: a command's new status; r: an account's rules changed; w: an account's forwards changed; t: a tracker connected to the origin */
type Envelope = { o: string; l?: StoredLocation[]; a?: StoredAlert; u?: string; d?: string; c?: string; q?: string; k?: ChangedCommand; r?: string; w?: string; t?: string };

export interface RelayOptions {
  /** also relay stored locations, alerts and command changes (only the MQTT live feed needs them); default true */
  live?: boolean;
  /** longest wait for one Redis command: a Redis that hangs must not hold start or stop */
  timeoutMs?: number;
}

export async function relayEvents(bus: EventBus, url: string, prefix: string, logger: Logger, options: RelayOptions = {}): Promise<{ close(): Promise<void> }> {
  const live = options.live ?? true;
  const origin = randomUUID();
  const channel = `${prefix}events`;
  const timeouts = options.timeoutMs === undefined ? {} : { commandTimeout: options.timeoutMs };
  const pub = connectRedis(url, { enableOfflineQueue: false, ...timeouts });
  const sub = connectRedis(url, timeouts);
  for (const c of [pub, sub]) c.on('error', () => {});
  const send = (e: Envelope) => {
    pub.publish(channel, JSON.stringify(e)).catch((err: Error) => logger.debug({ err: err.message }, 'live event not relayed'));
  };
  const offLocations = bus.onLocations((items, remote) => {
    if (!remote && live) send({ o: origin, l: items });
  });
  const offAlert = bus.onAlert((item, remote) => {
    if (!remote && live) send({ o: origin, a: item });
  });
  const offUser = bus.onUserChanged((userId, remote) => {
    if (!remote) send({ o: origin, u: userId });
  });
  const offDevice = bus.onDeviceChanged((deviceId, remote) => {
    if (!remote) send({ o: origin, d: deviceId });
  });
  const offAccount = bus.onAccountChanged((accountId, remote) => {
    if (!remote) send({ o: origin, c: accountId });
  });
  const offQueued = bus.onCommandsQueued((deviceId, remote) => {
    if (!remote) send({ o: origin, q: deviceId });
  });
  const offRules = bus.onRulesChanged((accountId, remote) => {
    if (!remote) send({ o: origin, r: accountId });
  });
  const offForwards = bus.onForwardsChanged((accountId, remote) => {
    if (!remote) send({ o: origin, w: accountId });
  });
  const offTracker = bus.onTrackerOnline((deviceId, remote) => {
    if (!remote) send({ o: origin, t: deviceId });
  });
  const offCommand = bus.onCommandChanged((item, remote) => {
    if (!remote && live) send({ o: origin, k: item });
  });
  sub.on('message', (_channel: string, message: string) => {
    try {
      const e = JSON.parse(message) as Envelope;
      if (e.o === origin) return;
      if (e.l) bus.locationsStored(e.l, true);
      if (e.a) bus.alertStored(e.a, true);
      if (e.u) bus.userChanged(e.u, true);
      if (e.d) bus.deviceChanged(e.d, true);
      if (e.c) bus.accountChanged(e.c, true);
      if (e.q) bus.commandsQueued(e.q, true);
      if (e.k) bus.commandChanged(e.k, true);
      if (e.r) bus.rulesChanged(e.r, true);
      if (e.w) bus.forwardsChanged(e.w, true);
      if (e.t) bus.trackerOnline(e.t, true);
    } catch {
      /* not ours */
    }
  });
  await sub.subscribe(channel).catch((e: Error) => logger.warn({ err: e.message }, 'live events of other instances are not received'));
  return {
    async close() {
      offLocations();
      offAlert();
      offUser();
      offDevice();
      offAccount();
      offQueued();
      offCommand();
      offRules();
      offForwards();
      offTracker();
      await Promise.all([closeRedis(pub), closeRedis(sub)]);
    },
  };
}
