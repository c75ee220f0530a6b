/**
 * Real Redis for tests: every test gets its own key prefix (`tgtest:<pid>:<random>:`) and deletes
 * its keys afterwards, so runs never collide. In CI Redis must answer; elsewhere its suites skip
 * with a message when it does not.
 */
import { randomBytes } from 'node:crypto';
import { closeRedis, connectRedis, type RedisClient } from '../../core/redis/redis-client.redis.js';
import { PATIENCE_MS } from './wait.js';

export const redisUrl = process.env.TRACKGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let redisUp: Promise<boolean> | undefined;

export function redisAvailable(): Promise<boolean> {
  redisUp ??= (async () => {
    const c = connectRedis(redisUrl, {
      lazyConnect: true,
      connectTimeout: PATIENCE_MS,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    c.on('error', () => {});
    try {
      await c.connect();
      return (await c.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      c.disconnect();
    }
  })();
  return redisUp;
}

/** Whether `suite` runs: true when Redis answers; in CI a silent Redis fails the run instead. */
export async function useRedis(suite: string): Promise<boolean> {
  if (await redisAvailable()) return true;
  if (process.env.CI) throw new Error(`CI: Redis does not answer at ${redisUrl}; ${suite} must run`);
  console.warn(`[trackgate tests] Redis not reachable at ${redisUrl}: skipping ${suite}`);
  return false;
}

export function testPrefix(): string {
  return `tgtest:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

/** A client for one test; `cleanup()` deletes every key under `prefix` and closes what it opened. */
export interface TestRedis {
  prefix: string;
  client(): RedisClient;
  cleanup(): Promise<void>;
}

/**
 * A test's own clients wait as long as a test waits: the shared Redis of a busy machine (every
 * suite running on it) answered later than the product's 1 s default, and a test's clean-up
 * failed with 'Command timed out'.
 */
const PATIENT: Parameters<typeof connectRedis>[1] = { commandTimeout: PATIENCE_MS, connectTimeout: PATIENCE_MS };

export function testRedis(prefix = testPrefix()): TestRedis {
  const clients: RedisClient[] = [];
  return {
    prefix,
    client() {
      const c = connectRedis(redisUrl, PATIENT);
      clients.push(c);
      return c;
    },
    async cleanup() {
      const c = clients[0] ?? connectRedis(redisUrl, PATIENT);
      let cursor = '0';
      do {
        const [next, keys] = await c.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        if (keys.length > 0) await c.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      if (!clients.includes(c)) await closeRedis(c);
      await Promise.all(clients.map(closeRedis));
    },
  };
}
