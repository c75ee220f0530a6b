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
import type { EventBus, EventMap, EventName } from './event-bus.js';
import type { Logger } from '../logger.js';
import { connectRedis, closeRedis } from '../redis/redis-client.redis.js';

/** Each event's key in the relayed message (the message's format: instances of other versions read it). */
const KEYS = {
  locations: 'l',
  alert: 'a',
  user: 'u',
  device: 'd',
  account: 'c',
  commandsQueued: 'q',
  command: 'k',
  rules: 'r',
  forwards: 'w',
  trackerOnline: 't',
} as const satisfies Record<EventName, string>;

/** what only the MQTT live feed needs (RelayOptions.live) */
const LIVE: ReadonlySet<EventName> = new Set(['locations', 'alert', 'command']);

/** o: origin; one event under its key */
type Envelope = { o: string } & { [E in EventName as (typeof KEYS)[E]]?: EventMap[E] };

const EVENTS = Object.keys(KEYS) as EventName[];

export interface RelayOptions {
  /** also relay stored locations, alerts and command changes (only the MQTT live feed needs them); default true */
  live?: boolean;
  /** longest wait for one Redis command: a Redis that hangs must not hold start or stop */
  timeoutMs?: number;
}

export async function relayEvents(
  bus: EventBus,
  url: string,
  prefix: string,
  logger: Logger,
  options: RelayOptions = {},
): Promise<{ close(): Promise<void> }> {
  const live = options.live ?? true;
  const origin = randomUUID();
  const channel = `${prefix}events`;
  const timeouts = options.timeoutMs === undefined ? {} : { commandTimeout: options.timeoutMs };
  const pub = connectRedis(url, { enableOfflineQueue: false, ...timeouts });
  const sub = connectRedis(url, timeouts);
  for (const c of [pub, sub]) c.on('error', () => {});
  const send = (e: Envelope) => {
    pub
      .publish(channel, JSON.stringify(e))
      .catch((err: Error) => logger.debug({ err: err.message }, 'live event not relayed'));
  };
  const offs = EVENTS.filter((event) => live || !LIVE.has(event)).map((event) =>
    bus.on(event, (payload, remote) => {
      if (!remote) send({ o: origin, [KEYS[event]]: payload });
    }),
  );
  sub.on('message', (_channel: string, message: string) => {
    try {
      const e = JSON.parse(message) as Envelope;
      if (e.o === origin) return;
      for (const event of EVENTS) {
        const payload = e[KEYS[event]];
        if (payload) bus.emit(event, payload as EventMap[typeof event], true);
      }
    } catch {
      /* not ours */
    }
  });
  await sub
    .subscribe(channel)
    .catch((e: Error) => logger.warn({ err: e.message }, 'live events of other instances are not received'));
  return {
    async close() {
      offs.forEach((off) => off());
      await Promise.all([closeRedis(pub), closeRedis(sub)]);
    },
  };
}
