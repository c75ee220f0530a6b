/**
 * The one place a Redis connection is made, so the rule "ioredis only in *.redis.ts" holds for
 * server/redis.ts too: callers hold the client through the `RedisClient` type and close it with quit().
 */
import { Redis, type RedisOptions } from 'ioredis';

export type RedisClient = Redis;

/** Redis answers in well under a millisecond; a second means it is stuck (or frozen). */
export const DEFAULT_REDIS_TIMEOUT_MS = 1000;

export function connectRedis(url: string, overrides: RedisOptions = {}): RedisClient {
  // Fail a command after a few reconnect attempts instead of queueing it for ever, and one that
  // gets no answer within the timeout: a Redis that hangs (SIGSTOP, a full network buffer) keeps
  // the connection open but answers nothing, and a quota or licence check must answer; the
  // caller decides what an outage means. The ready check (INFO) obeys the same timeout.
  return new Redis(url, {
    connectTimeout: 5000,
    commandTimeout: DEFAULT_REDIS_TIMEOUT_MS,
    maxRetriesPerRequest: 3,
    ...overrides,
  });
}

/** quit() when connected (lets queued replies arrive; bounded by the command timeout), disconnect() otherwise. */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
