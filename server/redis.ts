/** Redis at start, when configured (TRACKGATE_REDIS_URL). */
import { connectRedis, type RedisClient } from '../core/redis/redis-client.redis.js';
import type { Logger } from '../core/logger.js';
import type { Config } from '../config/config.js';

/** how long a start waits for Redis to be ready before it carries on without it */
const REDIS_READY_MS = 5000;

/** Redis when configured: waits a few seconds for it, then carries on (stores fail over as documented). */
export async function openRedis(config: Readonly<Config>, logger: Logger): Promise<RedisClient | undefined> {
  if (!config.redisUrl) return undefined;
  // No offline queue: while Redis is down a command fails at once and the caller's fallback applies;
  // while it hangs, after the command timeout.
  const redis = connectRedis(config.redisUrl, { enableOfflineQueue: false, commandTimeout: config.redisTimeoutMs });
  let lastError = '';
  redis.on('error', (e: Error) => {
    if (e.message !== lastError) logger.warn({ err: e.message }, 'redis');
    lastError = e.message;
  });
  redis.on('ready', () => {
    lastError = '';
  });
  const ready = await new Promise<boolean>((resolve) => {
    const t = setTimeout(() => resolve(false), REDIS_READY_MS);
    redis.once('ready', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
  if (!ready)
    logger.warn(
      { variable: 'TRACKGATE_REDIS_URL' },
      'redis does not answer yet; notifications wait in the outbox and licences cannot be claimed until it does',
    );
  return redis;
}
