/**
 * Keeps `apiDailyUsage` of the in-process request limiter across restarts (with Redis the counts
 * live there already). Today's per-user counts are saved in the settings table every few seconds
 * when they changed, and at stop, never on the request path; a start on the same UTC day picks
 * them up. A crash loses at most the counts of the last interval (5 s by default). Instances that
 * share a PostgreSQL database without Redis each count their own requests; the last to save wins.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import * as settings from '../settings/settings.repository.js';
import type { DailyUsage, MemoryLimiters } from './rate-limiter.memory.js';

const KEY = 'api_daily_usage';
const DAY_MS = 86_400_000;

export interface DailyUsageKeeper {
  /** saves today's counts now, if they changed */
  save(): Promise<void>;
  /** stops saving by itself after one last save */
  close(): Promise<void>;
}

export async function keepDailyUsage(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  limiters: MemoryLimiters;
  everyMs?: number;
}): Promise<DailyUsageKeeper> {
  const { db, clock, logger, limiters } = deps;
  const raw = await settings.get(db, KEY);
  if (raw) {
    try {
      const saved = JSON.parse(raw) as DailyUsage;
      if (saved.day === Math.floor(clock.now().getTime() / DAY_MS) && saved.users && typeof saved.users === 'object')
        limiters.restoreDailyUsage(saved);
    } catch {
      logger.warn({ key: KEY }, 'saved daily API usage unreadable; today is counted from 0');
    }
  }

  let unsaved: DailyUsage | undefined;
  let saving = Promise.resolve();
  function save(): Promise<void> {
    // One save at a time, in order; a snapshot that failed to save goes again unless a newer one exists.
    saving = saving.then(async () => {
      const usage = limiters.takeDailyUsage() ?? unsaved;
      if (!usage) return;
      try {
        await settings.put(db, KEY, JSON.stringify(usage));
        unsaved = undefined;
      } catch (e) {
        unsaved = usage;
        logger.warn({ err: (e as Error).message }, 'daily API usage not saved; trying again');
      }
    });
    return saving;
  }

  const timer = setInterval(() => void save(), deps.everyMs ?? 5000);
  timer.unref();
  return {
    save,
    async close() {
      clearInterval(timer);
      await save();
    },
  };
}
