/** The in-process limiter's daily counts, saved in a real SQLite database and read back at start. */
import test from 'ava';
import { ManualClock } from '../../../core/clock.js';
import { silentLogger } from '../../../core/logger.js';
import { closeDb, migrate, openDb, type Db } from '../../../core/db/db.js';
import * as settings from '../../../core/settings/settings.repository.js';
import { createMemoryLimiters } from '../../../core/quota/rate-limiter.memory.js';
import { keepDailyUsage } from '../../../core/quota/daily-usage.keeper.js';
import { createStorage } from '../../helpers/backends.js';
import { until } from '../../helpers/wait.js';

const limits = { perMinute: 600, failedTokenLimit: 10 };

async function fresh(t: { teardown(fn: () => unknown): void }): Promise<Db> {
  const storage = await createStorage('sqlite');
  const db = openDb({ dataDir: storage.env.TRACKGATE_DATA_DIR });
  t.teardown(async () => {
    await closeDb(db);
    await storage.cleanup();
  });
  await migrate(db);
  return db;
}

test('daily-usage.keeper: counts are saved every interval without a stop, and a start on the same day goes on from them', async (t) => {
  const db = await fresh(t);
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const first = createMemoryLimiters(limits);
  const keeper = await keepDailyUsage({ db, clock, logger: silentLogger, limiters: first, everyMs: 50 });
  for (let i = 0; i < 3; i++) await first.requests.hit('u1', clock.now());
  await first.requests.hit('u2', clock.now());
  const saved = async () =>
    JSON.parse((await settings.get(db, 'api_daily_usage')) ?? '{}').users as Record<string, number> | undefined;
  await until('saved by the timer', async () => (await saved())?.u2 === 1);
  t.deepEqual(await saved(), { u1: 3, u2: 1 }, 'saved by the timer alone, as before a crash');

  // No close(): the process "crashed"; a new one starts on the same data.
  const second = createMemoryLimiters(limits);
  const next = await keepDailyUsage({ db, clock, logger: silentLogger, limiters: second });
  t.teardown(async () => {
    await keeper.close();
    await next.close();
  });
  t.like(await second.requests.hit('u1', clock.now()), { day: 4, minute: 1 });
  t.like(await second.requests.hit('u3', clock.now()), { day: 1 });
});

test('daily-usage.keeper: close() saves the last counts; counts of an earlier day are not restored', async (t) => {
  const db = await fresh(t);
  const clock = new ManualClock('2026-03-01T23:59:00Z');
  const first = createMemoryLimiters(limits);
  const keeper = await keepDailyUsage({ db, clock, logger: silentLogger, limiters: first, everyMs: 60_000 });
  for (let i = 0; i < 5; i++) await first.requests.hit('u1', clock.now());
  await keeper.close();

  const sameDay = createMemoryLimiters(limits);
  const k2 = await keepDailyUsage({ db, clock, logger: silentLogger, limiters: sameDay });
  t.like(await sameDay.requests.hit('u1', clock.now()), { day: 6 });
  await k2.close();

  clock.set('2026-03-02T00:00:01Z');
  const nextDay = createMemoryLimiters(limits);
  const k3 = await keepDailyUsage({ db, clock, logger: silentLogger, limiters: nextDay });
  t.teardown(() => k3.close());
  t.like(await nextDay.requests.hit('u1', clock.now()), { day: 1 }, 'a new UTC day starts at 1');
});
