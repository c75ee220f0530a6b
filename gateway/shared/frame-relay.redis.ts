/**
 * The raw-frame feed across instances (live/{deviceId}/frames, frame-tap.ts): a technician on one
 * instance sees the frames of a tracker connected to another (docs/mqtt.md "Raw frames").
 * Frames are many and mostly unwatched, so they cross Redis only where someone listens: each
 * instance announces which accounts' frames its users want, and the others relay only those, until
 * the announcement's TTL runs out. Publishing is fire-and-forget with at most MAX_IN_FLIGHT at a
 * time (more are dropped), so a slow or absent Redis never slows ingest.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../core/logger.js';
import { closeRedis, connectRedis, type RedisClient } from '../../core/redis/redis-client.redis.js';
import type { FrameSink, FrameTap, LiveFrame } from './frame-tap.js';

export const INTEREST_EVERY_MS = 2000;
export const INTEREST_TTL_MS = 3 * INTEREST_EVERY_MS;
/** frames handed to Redis and not yet answered, beyond which frames are dropped */
export const MAX_IN_FLIGHT = 1000;

/** o: origin; interest: accounts wanted, u: unknown identifiers' frames wanted */
type Interest = { o: string; a: string[]; u: boolean };
/** o: origin; a: the account (null: an unknown identifier); d: the device; f: the frame */
type Relayed = { o: string; a: string | null; d: string | null; f: LiveFrame };

export interface FrameRelayOptions {
  /** longest wait for one Redis command */
  timeoutMs?: number;
  /** how often interest is announced (tests shorten it) */
  interestEveryMs?: number;
}

/** What other instances announced they want: accountId ('' for unknown identifiers) -> until when. */
function remoteInterest(ttl: number) {
  const wanted = new Map<string, number>();
  const key = (accountId: string | null) => accountId ?? '';
  return {
    wants(accountId: string | null): boolean {
      const until = wanted.get(key(accountId));
      if (until === undefined) return false;
      if (until > performance.now()) return true;
      wanted.delete(key(accountId));
      return false;
    },
    interest(): { accounts: string[]; unknown: boolean } {
      const now = performance.now();
      const live = [...wanted].filter(([, until]) => until > now).map(([a]) => a);
      return { accounts: live.filter((a) => a !== ''), unknown: live.includes('') };
    },
    /** another instance's announcement */
    note(m: Interest): void {
      const until = performance.now() + ttl;
      for (const a of m.a) wanted.set(a, until);
      if (m.u) wanted.set('', until);
    },
  };
}

/** Publishes frames fire-and-forget, at most MAX_IN_FLIGHT at a time; the rest are dropped and warned of once per episode. */
function boundedOffer(pub: RedisClient, channel: string, origin: string, logger: Logger): FrameSink['offer'] {
  let inFlight = 0;
  let dropped = 0;
  return (accountId, deviceId, frame) => {
    if (inFlight >= MAX_IN_FLIGHT) {
      if (dropped++ === 0) logger.warn('frames for other instances: Redis is slow; frames dropped until it catches up');
      return;
    }
    inFlight++;
    const message: Relayed = { o: origin, a: accountId, d: deviceId, f: frame };
    pub
      .publish(channel, JSON.stringify(message))
      .catch(() => undefined)
      .finally(() => {
        inFlight--;
        if (inFlight === 0 && dropped > 0) {
          logger.warn({ dropped }, 'frames for other instances: caught up');
          dropped = 0;
        }
      });
  };
}

export async function relayFrames(
  tap: FrameTap,
  url: string,
  prefix: string,
  logger: Logger,
  options: FrameRelayOptions = {},
): Promise<{ close(): Promise<void> }> {
  const origin = randomUUID();
  const framesChannel = `${prefix}frames`;
  const interestChannel = `${prefix}frames:interest`;
  const every = options.interestEveryMs ?? INTEREST_EVERY_MS;
  const timeouts = options.timeoutMs === undefined ? {} : { commandTimeout: options.timeoutMs };
  const pub = connectRedis(url, { enableOfflineQueue: false, ...timeouts });
  const sub = connectRedis(url, timeouts);
  for (const c of [pub, sub]) c.on('error', () => {});

  const remote = remoteInterest(3 * every);
  const detach = tap.attach(
    { wants: remote.wants, interest: remote.interest, offer: boundedOffer(pub, framesChannel, origin, logger) },
    { relay: true },
  );

  const announce = () => {
    const local = tap.localInterest();
    if (local.accounts.length === 0 && !local.unknown) return;
    const message: Interest = { o: origin, a: local.accounts, u: local.unknown };
    pub.publish(interestChannel, JSON.stringify(message)).catch(() => undefined);
  };
  const timer = setInterval(announce, every);
  timer.unref();

  sub.on('message', (channel: string, text: string) => {
    try {
      if (channel === interestChannel) {
        const m = JSON.parse(text) as Interest;
        if (m.o !== origin) remote.note(m);
      } else if (channel === framesChannel) {
        const m = JSON.parse(text) as Relayed;
        if (m.o !== origin) tap.offer(m.a, m.d, m.f, true);
      }
    } catch {
      /* not ours */
    }
  });
  await sub
    .subscribe(framesChannel, interestChannel)
    .catch((e: Error) =>
      logger.warn({ err: e.message }, 'frames of trackers connected to other instances are not received'),
    );
  announce();
  return {
    async close() {
      clearInterval(timer);
      detach();
      await Promise.all([closeRedis(pub), closeRedis(sub)]);
    },
  };
}
