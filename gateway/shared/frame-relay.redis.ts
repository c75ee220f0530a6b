/**
 * The raw-frame feed across instances (live/{deviceId}/frames, frame-tap.ts): a technician
 * subscribed on one instance sees the frames of a tracker connected to another.
 *
 * Frames are many and mostly unwatched, so they cross Redis only where someone listens: every
 * INTEREST_EVERY_MS each instance with listeners announces which accounts' frames (and whether
 * unknown identifiers' frames) its users want; the others keep that for INTEREST_TTL_MS and relay
 * a frame only for an account someone elsewhere wants. An instance that stops announcing (it died,
 * or its listener left) stops receiving within the TTL. A frame is published fire-and-forget, at
 * most MAX_IN_FLIGHT at a time (more are dropped and counted in one warning per episode): a slow
 * or absent Redis never slows ingest.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../core/logger.js';
import { closeRedis, connectRedis } from '../../core/redis/redis-client.redis.js';
import type { FrameTap, LiveFrame } from './frame-tap.js';

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

export async function relayFrames(tap: FrameTap, url: string, prefix: string, logger: Logger, options: FrameRelayOptions = {}): Promise<{ close(): Promise<void> }> {
  const origin = randomUUID();
  const framesChannel = `${prefix}frames`;
  const interestChannel = `${prefix}frames:interest`;
  const every = options.interestEveryMs ?? INTEREST_EVERY_MS;
  const ttl = 3 * every;
  const timeouts = options.timeoutMs === undefined ? {} : { commandTimeout: options.timeoutMs };
  const pub = connectRedis(url, { enableOfflineQueue: false, ...timeouts });
  const sub = connectRedis(url, timeouts);
  for (const c of [pub, sub]) c.on('error', () => {});

  /** accountId ('' for unknown identifiers) -> until when another instance wants its frames */
  const wanted = new Map<string, number>();
  const key = (accountId: string | null) => accountId ?? '';
  let inFlight = 0;
  let dropped = 0;

  const detach = tap.attach(
    {
      wants(accountId) {
        const until = wanted.get(key(accountId));
        if (until === undefined) return false;
        if (until > Date.now()) return true;
        wanted.delete(key(accountId));
        return false;
      },
      interest() {
        const now = Date.now();
        const live = [...wanted].filter(([, until]) => until > now).map(([a]) => a);
        return { accounts: live.filter((a) => a !== ''), unknown: live.includes('') };
      },
      offer(accountId, deviceId, frame) {
        if (inFlight >= MAX_IN_FLIGHT) {
          if (dropped++ === 0) logger.warn('frames for other instances: Redis is slow; frames dropped until it catches up');
          return;
        }
        inFlight++;
        const message: Relayed = { o: origin, a: accountId, d: deviceId, f: frame };
        pub
          .publish(framesChannel, JSON.stringify(message))
          .catch(() => undefined)
          .finally(() => {
            inFlight--;
            if (inFlight === 0 && dropped > 0) {
              logger.warn({ dropped }, 'frames for other instances: caught up');
              dropped = 0;
            }
          });
      },
    },
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
        if (m.o === origin) return;
        const until = Date.now() + ttl;
        for (const a of m.a) wanted.set(a, until);
        if (m.u) wanted.set('', until);
      } else if (channel === framesChannel) {
        const m = JSON.parse(text) as Relayed;
        if (m.o === origin) return;
        tap.offer(m.a, m.d, m.f, true);
      }
    } catch {
      /* not ours */
    }
  });
  await sub.subscribe(framesChannel, interestChannel).catch((e: Error) => logger.warn({ err: e.message }, 'frames of trackers connected to other instances are not received'));
  announce();
  return {
    async close() {
      clearInterval(timer);
      detach();
      await Promise.all([closeRedis(pub), closeRedis(sub)]);
    },
  };
}
