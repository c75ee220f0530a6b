/**
 * Retention (docs/operations.md "Retention"): locations and alerts with a fix time older than the
 * account's retention (its own `retention_days`, else TRACKGATE_RETENTION_DAYS; 0 or neither keeps
 * everything) are deleted, and with them the account's commands created before that time that
 * can no longer be sent or answered. A device's last location (table last_locations) is never
 * deleted. The purge runs soon after start and then every `intervalMs`, one instance at a time.
 *
 * It never holds the writer long: each delete is one statement of at most about `batchRows` rows
 * (a range of the device's index), and after each the purge waits `pauseFactor` times as long as
 * the batch took, so the ingest's group commits run between batches and the purge takes at most
 * 1 / (1 + pauseFactor) of the writer's time. On SQLite the freed pages are then given back to the
 * file system in steps (incremental_vacuum), where the database was made with auto_vacuum =
 * INCREMENTAL (core/db/db.ts); elsewhere SQLite reuses them for new rows.
 */
import { performance } from 'node:perf_hooks';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import * as repo from './retention.repository.js';
import { dropBefore } from '../db/partitions/pg-partitions.js';

export const DAY_MS = 86_400_000;

export interface PurgerSettings {
  /** TRACKGATE_RETENTION_DAYS: days kept where an account sets none; undefined or 0 keeps everything */
  retentionDays?: number;
  /** the first purge this long after start (default 20 s: within a minute, once start-up's work is done) */
  firstDelayMs?: number;
  /** then one purge every this long (default an hour) */
  intervalMs?: number;
  /** rows per delete (default PURGE_BATCH_ROWS) */
  batchRows?: number;
  /** the wait after a batch, as a multiple of the time the batch took (default PURGE_PAUSE_FACTOR) */
  pauseFactor?: number;
  /** SQLite pages given back per incremental_vacuum step (default 1000: 4 MiB of 4 KiB pages) */
  vacuumPages?: number;
}

/** Rows per delete: a few milliseconds of the writer on either database. */
export const PURGE_BATCH_ROWS = 2000;
/** After a batch that took t, the purge waits PURGE_PAUSE_FACTOR × t: at most 5 % of the writer (bench/retention-ingest.bench.ts: 10 % cost ingest 15 % on SQLite, whose writes run on the main thread). */
export const PURGE_PAUSE_FACTOR = 19;
/** The shortest wait between batches: a batch never follows another in the same turn of the event loop. */
const MIN_PAUSE_MS = 2;

export interface Removed {
  accountId: string;
  table: 'locations' | 'alerts' | 'commands';
  rows: number;
}

export interface PurgeReport {
  /** rows deleted, per account and table (only those with rows) */
  removed: Removed[];
  /** PostgreSQL partitions dropped whole (dropWholePartitions) */
  droppedPartitions: string[];
  /** SQLite pages given back to the file system */
  vacuumedPages: number;
  /** deletes and vacuum steps that held the writer, and the longest of them */
  batches: number;
  longestBatchMs: number;
  tookMs: number;
  /** set when nothing was done: another instance is purging, or this one is stopping */
  skipped?: 'locked' | 'stopping';
}

export interface Purger {
  /** Purges now (after a purge in progress, if any) and resolves with what it removed. */
  purgeOnce(): Promise<PurgeReport>;
  /** Stops the timer and the purge in progress (between two batches). */
  stop(): Promise<void>;
}

export interface PurgerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  settings: PurgerSettings;
}

/**
 * PostgreSQL: drops the partitions of `table` that hold only fix times before `cutoffMs`
 * (core/db/partitions/pg-partitions.ts, migration 014), and returns their names; the batched
 * deletes then find nothing there. Called only when every account has a retention, with the
 * oldest cutoff of all (a partition holds every account's rows). Nothing on SQLite.
 */
function dropWholePartitions(db: Db, table: repo.TimedTable, cutoffMs: number): Promise<string[]> {
  return dropBefore(db, table, cutoffMs);
}

interface Plan {
  accountId: string;
  retentionDays: number;
  cutoffMs: number;
}

/** The accounts that keep less than everything, each with its cutoff; `oldestCutoffMs` when every account does. */
async function plan(db: Db, globalDays: number | undefined, nowMs: number) {
  const plans: Plan[] = [];
  let everyAccount = true;
  for (const a of await repo.accountRetentions(db)) {
    const days = a.retentionDays ?? globalDays ?? 0;
    if (days <= 0) everyAccount = false;
    else plans.push({ accountId: a.accountId, retentionDays: days, cutoffMs: nowMs - days * DAY_MS });
  }
  const oldestCutoffMs = everyAccount && plans.length ? Math.min(...plans.map((p) => p.cutoffMs)) : undefined;
  return { plans, oldestCutoffMs };
}

export function startPurger(deps: PurgerDeps): Purger {
  const { db, clock, logger, settings } = deps;
  const batchRows = settings.batchRows ?? PURGE_BATCH_ROWS;
  const pauseFactor = settings.pauseFactor ?? PURGE_PAUSE_FACTOR;
  const vacuumPages = settings.vacuumPages ?? 1000;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let last: Promise<unknown> = Promise.resolve();
  let batches = 0;
  let longestBatchMs = 0;

  /** Waits pauseFactor times what the step since `startedAt` took (cut short by stop). */
  async function pauseAfter(startedAt: number): Promise<void> {
    const tookMs = performance.now() - startedAt;
    batches++;
    longestBatchMs = Math.max(longestBatchMs, tookMs);
    const ms = Math.max(MIN_PAUSE_MS, tookMs * pauseFactor);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    wake = undefined;
  }

  /** Deletes the rows of one table for every device of the account, batch by batch. */
  async function purgeTable(p: Plan, table: repo.TimedTable, devices: string[]): Promise<number> {
    let rows = 0;
    for (const deviceId of devices) {
      for (let more = true; more && !stopping; ) {
        const startedAt = performance.now();
        const batch = await repo.deleteOldBatch(db, table, deviceId, p.cutoffMs, batchRows);
        rows += batch.deleted;
        more = batch.more;
        if (batch.deleted > 0) await pauseAfter(startedAt);
      }
    }
    return rows;
  }

  async function purgeCommands(p: Plan, nowMs: number): Promise<number> {
    let rows = 0;
    for (let n = batchRows; n === batchRows && !stopping; ) {
      const startedAt = performance.now();
      n = await repo.deleteOldCommands(db, p.accountId, p.cutoffMs, nowMs, batchRows);
      rows += n;
      if (n > 0) await pauseAfter(startedAt);
    }
    return rows;
  }

  async function purgeAccount(p: Plan, nowMs: number): Promise<Removed[]> {
    const devices = await repo.deviceIdsOf(db, p.accountId);
    const removed: Removed[] = [];
    const olderThan = new Date(p.cutoffMs).toISOString();
    for (const table of ['locations', 'alerts', 'commands'] as const) {
      const startedAt = performance.now();
      const rows = table === 'commands' ? await purgeCommands(p, nowMs) : await purgeTable(p, table, devices);
      if (rows === 0) continue;
      removed.push({ accountId: p.accountId, table, rows });
      logger.info(
        {
          accountId: p.accountId,
          table,
          removed: rows,
          olderThan,
          retentionDays: p.retentionDays,
          tookMs: Math.round(performance.now() - startedAt),
        },
        `retention: removed ${rows} ${table} older than ${p.retentionDays} days`,
      );
    }
    // the reports' cache of what was just removed (not counted: a cache, not history)
    if (!stopping) await repo.deleteOldReportCache(db, p.accountId, p.cutoffMs);
    return removed;
  }

  /** SQLite with auto_vacuum = INCREMENTAL: the free pages given back, a step at a time. */
  async function vacuum(): Promise<number> {
    if (!(await repo.incrementalVacuumOn(db))) return 0;
    let given = 0;
    for (let free = await repo.freePages(db); free > 0 && !stopping; ) {
      const startedAt = performance.now();
      await repo.incrementalVacuum(db, Math.min(free, vacuumPages));
      const left = await repo.freePages(db);
      if (left >= free) break;
      given += free - left;
      free = left;
      await pauseAfter(startedAt);
    }
    if (given > 0) logger.info({ pages: given }, `retention: gave ${given} free pages of the SQLite file back`);
    return given;
  }

  async function run(): Promise<PurgeReport> {
    const startedAt = performance.now();
    batches = 0;
    longestBatchMs = 0;
    const empty = { removed: [], droppedPartitions: [], vacuumedPages: 0, batches: 0, longestBatchMs: 0 };
    if (stopping) return { ...empty, tookMs: 0, skipped: 'stopping' };
    const done = await repo.whilePurgeLocked(db, async () => {
      const nowMs = clock.now().getTime();
      const { plans, oldestCutoffMs } = await plan(db, settings.retentionDays, nowMs);
      const droppedPartitions: string[] = [];
      if (oldestCutoffMs !== undefined) {
        for (const table of ['locations', 'alerts'] as const)
          droppedPartitions.push(...(await dropWholePartitions(db, table, oldestCutoffMs)));
        if (droppedPartitions.length)
          logger.info({ partitions: droppedPartitions }, 'retention: dropped whole partitions');
      }
      const removed: Removed[] = [];
      for (const p of plans) {
        if (stopping) break;
        removed.push(...(await purgeAccount(p, nowMs)));
      }
      const vacuumedPages = removed.length ? await vacuum() : 0;
      return { removed, droppedPartitions, vacuumedPages };
    });
    const tookMs = Math.round(performance.now() - startedAt);
    if (!done) return { ...empty, tookMs, skipped: 'locked' };
    return { ...done, batches, longestBatchMs: Math.round(longestBatchMs), tookMs };
  }

  function purgeOnce(): Promise<PurgeReport> {
    const next = last.then(run);
    last = next.catch(() => undefined);
    return next;
  }

  function schedule(ms: number): void {
    if (stopping) return;
    timer = setTimeout(() => {
      purgeOnce()
        .catch((e: Error) => logger.warn({ err: e.message }, 'retention: the purge failed; it runs again later'))
        .finally(() => schedule(settings.intervalMs ?? 3_600_000));
    }, ms);
    timer.unref();
  }
  schedule(settings.firstDelayMs ?? 20_000);

  return {
    purgeOnce,
    async stop() {
      stopping = true;
      clearTimeout(timer);
      wake?.();
      await last;
    },
  };
}
