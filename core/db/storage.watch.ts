/**
 * Whether storage takes writes, beside what the last write of locations said (core/ingest), for
 * GET /api/health: a write probe at start (one row of `settings`), and every WRITE_PROBE_MS while
 * it is refused, so a start on a full disk serves reads, says `degraded`, and finds out by itself
 * when space is freed.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import * as settings from '../settings/settings.repository.js';
import type { Db } from './db.js';
import { describeStorageError, isStorageUnavailable } from './storage-errors.js';

/** how often a refused write probe is tried again */
export const WRITE_PROBE_MS = 5_000;
/** how long the start waits for the first probe (a PostgreSQL commit may hang: a synchronous standby gone) */
const FIRST_PROBE_WAIT_MS = 1_000;

const PROBE_KEY = 'storage_write_probe';

export interface StorageWatch {
  /** Why storage refuses writes now (the last probe refused), else undefined. */
  problem(): string | undefined;
  /** Stops the checks (after the probe running, if one is). */
  stop(): Promise<void>;
}

export interface StorageWatchDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  probeMs?: number;
}

export async function watchStorage(deps: StorageWatchDeps): Promise<StorageWatch> {
  const { db, clock, logger } = deps;
  const probeMs = deps.probeMs ?? WRITE_PROBE_MS;

  let refused: string | undefined;
  let probing: Promise<void> | undefined;
  function probe(): Promise<void> {
    probing ??= tryWrite().finally(() => {
      probing = undefined;
    });
    return probing;
  }
  async function tryWrite(): Promise<void> {
    try {
      await settings.put(db, PROBE_KEY, String(clock.now().getTime()));
      if (refused) logger.info({}, 'storage takes writes again');
      refused = undefined;
    } catch (e) {
      if (!isStorageUnavailable(e)) {
        logger.warn({ err: e }, 'storage write probe failed');
        return;
      }
      if (!refused) logger.error({ err: describeStorageError(e) }, `storage refuses writes: reads are served, trackers are not acknowledged (they resend) until it takes them again, tried every ${probeMs / 1000} s`);
      refused = describeStorageError(e);
    }
  }

  const first = probe();
  const timer = setInterval(() => {
    if (refused) void probe();
  }, probeMs);
  timer.unref();
  await Promise.race([first, new Promise((resolve) => setTimeout(resolve, FIRST_PROBE_WAIT_MS).unref())]);

  return {
    problem: () => refused,
    async stop() {
      clearInterval(timer);
      await probing;
    },
  };
}
