/**
 * The one place a Redis connection is made, so the rule "ioredis only in *.redis.ts" holds for
 * main.ts too: callers hold the client through the `RedisClient` type and close it with quit().
 */
import { Redis, type RedisOptions } from 'ioredis';

export type RedisClient = Redis;

export function connectRedis(url: string, overrides: RedisOptions = {}): RedisClient {
  // Fail a command after a few reconnect attempts instead of queueing it for ever: a quota or
  // licence check must answer, and the caller decides what an outage means.
  return new Redis(url, { connectTimeout: 5000, maxRetriesPerRequest: 3, ...overrides });
}

/** quit() when connected (lets queued replies arrive), disconnect() otherwise. */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
