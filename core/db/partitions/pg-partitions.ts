/**
 * PostgreSQL time partitions of locations and alerts (migration 014): each table is partitioned by
 * fix time (`date_time`, epoch ms) in UTC months or days, with a DEFAULT partition so no fix time
 * is ever refused. Partitions are made ahead (the current interval and the next ones) by one
 * maintainer among the instances on a database (a session advisory lock), and retention drops
 * whole partitions (dropBefore) instead of deleting rows. SQLite has none of this.
 */
import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { dbKind } from '../db.js';
import {
  createPartition,
  defaultIntervals,
  detachAndDrop,
  detachedLeftovers,
  dropTable,
  listPartitions,
  PARTITIONED_TABLES,
  tableKind,
  type Partition,
  type PartitionedTable,
} from './pg-partitions.repository.js';

export { listPartitions, PARTITIONED_TABLES, type Partition, type PartitionedTable };

export type PartitionInterval = 'month' | 'day';

/** Intervals made ahead beyond the current one. */
export const AHEAD = 2;
/** The maintainers' advisory lock key ('tgpa'): one per database. */
export const MAINTENANCE_LOCK_KEY = 0x74677061;
/** How often the maintainer makes partitions ahead. */
export const MAINTENANCE_EVERY_MS = 3_600_000;
/** At most this many intervals of DEFAULT rows get their partition per run (the rest, the next run). */
const DEFAULT_INTERVALS_PER_RUN = 24;
/** DEFAULT rows more than this far ahead of now (a tracker's broken clock) stay there: no partition for year 2099. */
const FUTURE_LIMIT_MS = 366 * 86_400_000;

/** The start (UTC) of the interval holding `ms`. */
export function intervalStart(ms: number, interval: PartitionInterval): number {
  const d = new Date(ms);
  return interval === 'day'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The start of the interval after the one starting at `startMs`. */
export function nextStart(startMs: number, interval: PartitionInterval): number {
  const d = new Date(startMs);
  return interval === 'day'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** `<table>_pYYYYMM` (month) or `<table>_pYYYYMMDD` (day); a piece not starting at the interval's start gets `_<fromMs>`. */
export function partitionName(table: string, startMs: number, interval: PartitionInterval, fromMs = startMs): string {
  const iso = new Date(startMs).toISOString();
  const stamp = interval === 'day' ? iso.slice(0, 10).replace(/-/g, '') : iso.slice(0, 7).replace('-', '');
  return `${table}_p${stamp}${fromMs === startMs ? '' : `_${fromMs}`}`;
}

/** The parts of [fromMs, toMs) no partition covers (a legacy partition can cover part of an interval). */
export function freeRanges(existing: Partition[], fromMs: number, toMs: number): [number, number][] {
  const free: [number, number][] = [];
  let at = fromMs;
  for (const p of existing) {
    if (p.isDefault || p.toMs <= at) continue;
    if (p.fromMs >= toMs) break;
    if (p.fromMs > at) free.push([at, p.fromMs]);
    at = Math.max(at, p.toMs);
    if (at >= toMs) break;
  }
  if (at < toMs) free.push([at, toMs]);
  return free;
}

async function makeInterval(db: Knex, table: string, startMs: number, interval: PartitionInterval): Promise<string[]> {
  const made: string[] = [];
  const end = nextStart(startMs, interval);
  for (const [from, to] of freeRanges(await listPartitions(db, table), startMs, end)) {
    const name = partitionName(table, startMs, interval, from);
    await createPartition(db, table, name, from, to);
    made.push(name);
  }
  return made;
}

/**
 * Makes the partitions `table` lacks: the interval holding `nowMs` and the AHEAD next ones, and
 * those of the rows that went to the DEFAULT partition (moved into them, so retention can drop
 * them too). Returns the names made; none when the table is not partitioned (SQLite, or before 014).
 */
export async function makeAhead(
  db: Knex,
  table: PartitionedTable,
  nowMs: number,
  interval: PartitionInterval,
): Promise<string[]> {
  if (dbKind(db) !== 'postgres' || (await tableKind(db, table)) !== 'p') return [];
  const made: string[] = [];
  let start = intervalStart(nowMs, interval);
  for (let i = 0; i <= AHEAD; i++, start = nextStart(start, interval))
    made.push(...(await makeInterval(db, table, start, interval)));
  for (const s of await defaultIntervals(db, table, interval, DEFAULT_INTERVALS_PER_RUN)) {
    if (s > nowMs + FUTURE_LIMIT_MS) break;
    made.push(...(await makeInterval(db, table, s, interval)));
  }
  return made;
}

/** makeAhead for every partitioned table. */
export async function makePartitionsAhead(db: Knex, nowMs: number, interval: PartitionInterval): Promise<string[]> {
  const made: string[] = [];
  for (const table of Object.keys(PARTITIONED_TABLES) as PartitionedTable[])
    made.push(...(await makeAhead(db, table, nowMs, interval)));
  return made;
}

const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Drops the partitions of `table` whose upper bound is at or before `cutoffMs` (whole tables: no
 * row is deleted one by one), never the DEFAULT one; returns their names. Each is detached first,
 * so the parent is locked for milliseconds whatever its size; one whose lock is not had within
 * LOCK_TIMEOUT (a long read of it) is left for the next call, and one detached by a call that
 * stopped before its drop is dropped by the next. Nothing on SQLite or on a table not partitioned.
 */
export async function dropBefore(db: Knex, table: PartitionedTable, cutoffMs: number): Promise<string[]> {
  if (dbKind(db) !== 'postgres' || (await tableKind(db, table)) !== 'p') return [];
  const dropped: string[] = [];
  for (const name of await detachedLeftovers(db, table)) {
    await dropTable(db, name);
    dropped.push(name);
  }
  for (const p of await listPartitions(db, table)) {
    if (p.isDefault || p.toMs > cutoffMs) continue;
    try {
      await detachAndDrop(db, table, p.name);
      dropped.push(p.name);
    } catch (e) {
      if ((e as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw e;
    }
  }
  return dropped;
}

export interface MaintenanceLogger {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
}

export interface PartitionMaintenance {
  /** One run now: takes the maintainer's lock if free, and if held makes partitions ahead. */
  run(): Promise<{ maintainer: boolean; made: string[] }>;
  /** Whether this instance holds the maintainer's lock. */
  isMaintainer(): boolean;
  /** Stops the timer, waits for a run under way, and lets the lock go (another instance takes over). */
  stop(): Promise<void>;
}

interface PgConnection {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * The partitions' maintenance on PostgreSQL: a run at start and then every `everyMs`. The
 * instance whose session holds `pg_try_advisory_lock(MAINTENANCE_LOCK_KEY)` (one connection kept
 * out of the pool) maintains; the others try again at each run, so one takes over when the
 * maintainer stops or its connection dies. On SQLite: nothing.
 */
export function startPartitionMaintenance(o: {
  db: Knex;
  clock: Clock;
  logger: MaintenanceLogger;
  interval: PartitionInterval;
  everyMs?: number;
}): PartitionMaintenance {
  const { db, clock, logger, interval } = o;
  const client = db.client as {
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(c: PgConnection): Promise<void>;
  };
  let held: PgConnection | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<{ maintainer: boolean; made: string[] }> | undefined;

  async function letGo(): Promise<void> {
    const c = held;
    held = undefined;
    if (!c) return;
    await c.query('select pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]).catch(() => {});
    await client.releaseConnection(c).catch(() => {});
  }

  async function lock(): Promise<boolean> {
    if (held) {
      try {
        await held.query('select 1');
        return true;
      } catch {
        await letGo(); // its session (and so the lock) is gone: try anew
      }
    }
    const c = await client.acquireConnection();
    try {
      const { rows } = await c.query('select pg_try_advisory_lock($1) as ok', [MAINTENANCE_LOCK_KEY]);
      if (rows[0]?.ok === true && !stopped) {
        held = c;
        return true;
      }
      if (rows[0]?.ok === true) await c.query('select pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
    } catch (e) {
      await client.releaseConnection(c).catch(() => {});
      throw e;
    }
    await client.releaseConnection(c);
    return false;
  }

  async function once(): Promise<{ maintainer: boolean; made: string[] }> {
    if (stopped || dbKind(db) !== 'postgres') return { maintainer: false, made: [] };
    if (!(await lock())) return { maintainer: false, made: [] };
    const made = await makePartitionsAhead(db, clock.now().getTime(), interval);
    if (made.length) logger.info({ partitions: made }, 'made PostgreSQL partitions');
    return { maintainer: true, made };
  }

  function run(): Promise<{ maintainer: boolean; made: string[] }> {
    running ??= once().finally(() => {
      running = undefined;
    });
    return running;
  }

  function schedule(ms: number): void {
    if (stopped || dbKind(db) !== 'postgres') return;
    timer = setTimeout(() => {
      run()
        .catch((e) => logger.warn({ err: e }, 'PostgreSQL partitions: maintenance failed; retried at the next run'))
        .finally(() => schedule(o.everyMs ?? MAINTENANCE_EVERY_MS));
    }, ms);
    timer.unref();
  }
  schedule(0);

  return {
    run,
    isMaintainer: () => held !== undefined,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => {});
      await letGo();
    },
  };
}
