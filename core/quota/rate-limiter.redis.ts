/** Request accounting in Redis, shared by every process on the same prefix (same contract as rate-limiter.memory.ts). */
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { FailedLoginLimiter, LimitSettings, Limiters, RequestLimiter, RequestUsage } from './rate-limiter.js';

const UNLIMITED = Number.MAX_SAFE_INTEGER;

/** Minute and day windows are aligned to the clock (UTC), so `apiUsage` means "this minute". */
function minuteKey(userId: string, now: Date): string {
  return `${userId}:${Math.floor(now.getTime() / 60_000)}`;
}

function dayKey(userId: string, now: Date): string {
  return `${userId}:${now.toISOString().slice(0, 10)}`;
}

async function consume(limiter: RateLimiterAbstract, key: string): Promise<{ res: RateLimiterRes; rejected: boolean }> {
  try {
    return { res: await limiter.consume(key, 1), rejected: false };
  } catch (e) {
    if (e instanceof RateLimiterRes) return { res: e, rejected: true };
    throw e;
  }
}

/** One Redis limiter; while Redis is unreachable each instance counts in memory (see createRedisLimiters). */
function redisLimiter(redis: Redis, keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
  // useRedisPackage false: ioredis, whose multi().exec() replies are [err, value] pairs.
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration,
    useRedisPackage: false,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
  });
}

/**
 * Failed logins in Redis, shared by every instance on the same `keyPrefix` (the contract of
 * createMemoryFailedLogins): `limit` failures of a key within `windowSeconds` of its first block it.
 */
export function createRedisFailedLogins(
  redis: Redis,
  keyPrefix: string,
  limit: number,
  windowSeconds: number,
): FailedLoginLimiter {
  const failed = redisLimiter(redis, keyPrefix, limit, windowSeconds);
  return {
    async blockedFor(keys) {
      // All keys at once: a Redis that hangs costs one command timeout, not one per key.
      let wait = 0;
      for (const res of await Promise.all(keys.map((key) => failed.get(key)))) {
        if (res && res.consumedPoints >= limit) wait = Math.max(wait, Math.ceil(res.msBeforeNext / 1000));
      }
      return wait;
    },
    async recordFailure(keys) {
      await Promise.all(keys.map((k) => consume(failed, k)));
    },
  };
}

/** `prefix` namespaces every key (e.g. `trackgate:`); the client stays the caller's to close. */
export function createRedisLimiters(redis: Redis, prefix: string, s: LimitSettings): Limiters {
  // While Redis is unreachable each instance counts in memory, so the API keeps answering: at once
  // while it is disconnected (no offline queue), after the client's command timeout while it hangs.
  const perMinute = redisLimiter(redis, `${prefix}rl:min`, s.perMinute > 0 ? s.perMinute : UNLIMITED, 60);
  const perDay = redisLimiter(redis, `${prefix}rl:day`, UNLIMITED, 2 * 86400);
  // failed token requests: off with the request limit (TRACKGATE_RATE_LIMIT=0)
  const failedLogins: FailedLoginLimiter =
    s.perMinute === 0
      ? { blockedFor: async () => 0, recordFailure: async () => {} }
      : createRedisFailedLogins(redis, `${prefix}rl:fail`, s.failedTokenLimit, s.failedWindowSeconds ?? 900);

  const requests: RequestLimiter = {
    async hit(userId, now): Promise<RequestUsage> {
      const [m, d] = await Promise.all([
        consume(perMinute, minuteKey(userId, now)),
        consume(perDay, dayKey(userId, now)),
      ]);
      const secondsLeftInMinute = 60 - Math.floor((now.getTime() % 60_000) / 1000);
      return {
        allowed: !m.rejected,
        minute: m.res.consumedPoints,
        day: d.res.consumedPoints,
        retryAfterSeconds: m.rejected ? secondsLeftInMinute : 0,
      };
    },
  };
  return { requests, failedLogins };
}
