/** Request accounting in Redis, shared by every process on the same prefix (same contract as rate-limiter.memory.ts). */
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { createLimitersOn, type LimitSettings } from './rate-limiter.memory.js';

/** `prefix` namespaces every key (e.g. `trackgate:`); the client stays the caller's to close. */
export function createRedisLimiters(redis: Redis, prefix: string, settings: LimitSettings) {
  // useRedisPackage false: ioredis, whose multi().exec() replies are [err, value] pairs.
  return createLimitersOn(
    // While Redis is unreachable each instance counts in memory, so the API keeps answering.
    (o) => new RateLimiterRedis({
      storeClient: redis, keyPrefix: prefix + o.keyPrefix, points: o.points, duration: o.duration, useRedisPackage: false,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: o.keyPrefix, points: o.points, duration: o.duration }),
    }),
    settings,
  );
}
