/**
 * trackgate set-ups that outage and scale-out tests share: one instance on a PostgreSQL of the
 * test's own (to kill and restart), and two instances side by side on one database and one Redis.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { startOwnPostgres, type OwnServer } from './own-services.js';
import { redisUrl, testPrefix, testRedis } from './redis.js';
import { startServer, type TestServer } from './server.js';

/** the Redis timeout of instances whose Redis does not fail: the longest trackgate takes (TRACKGATE_REDIS_TIMEOUT_MS) */
export const REDIS_PATIENCE_MS = 60_000;

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** One trackgate on a PostgreSQL of its own; both are stopped when the test ends. */
export async function startOnOwnPostgres(
  t: Teardown,
  options: { env?: Record<string, string>; clock?: Clock; logger?: Logger } = {},
): Promise<{ s: TestServer; pg: OwnServer }> {
  const pg = await startOwnPostgres();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-own-pg-'));
  t.teardown(async () => {
    await pg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const s = await startServer('postgres', {
    ...options,
    storageEnv: { TRACKGATE_DATA_DIR: dataDir, TRACKGATE_DATABASE_URL: pg.url },
  });
  t.teardown(() => s.stop());
  return { s, pg };
}

/** Two instances on one fresh PostgreSQL database and one Redis key prefix. */
export async function startPair(
  t: Teardown,
  env: Record<string, string> = {},
  clock?: Clock,
): Promise<[TestServer, TestServer]> {
  const prefix = testPrefix();
  const r = testRedis(prefix);
  t.teardown(() => r.cleanup());
  // Redis answers within its timeout here (no outage): a busy machine's scheduling is no outage
  const shared = {
    TRACKGATE_REDIS_URL: redisUrl,
    TRACKGATE_REDIS_PREFIX: prefix,
    TRACKGATE_REDIS_TIMEOUT_MS: String(REDIS_PATIENCE_MS),
    ...env,
  };
  const a = await startServer('postgres', { env: shared, clock });
  const b = await startServer('postgres', { env: shared, storageEnv: a.storageEnv, clock });
  t.teardown(async () => {
    await b.running.stop();
    await a.stop();
  });
  return [a, b];
}
