/**
 * The only SQL of retention (retention.purger.ts): which accounts keep how long, and deletes of
 * old locations, alerts and finished commands in small batches, each its own short statement, by
 * ranges of the (device_id, date_time) keys. The same statements on SQLite and PostgreSQL, on
 * plain and partitioned tables alike. last_locations is never touched: a device's last location
 * is kept whatever its age.
 */

import { dbKind, type Db } from '../db/db.js';
import { MARK_BUCKET_MS } from '../locations/fix-marks.repository.js';

/** The tables retention trims by fix time, each with the (device_id, date_time) index it walks. */
export type TimedTable = 'locations' | 'alerts';

/** Every account with its own retention (null: the global one). */
export async function accountRetentions(db: Db): Promise<{ accountId: string; retentionDays: number | null }[]> {
  const rows = (await db('accounts').select('id', 'retention_days').orderBy('id')) as {
    id: string;
    retention_days: number | null;
  }[];
  return rows.map((r) => ({
    accountId: r.id,
    retentionDays: r.retention_days === null ? null : Number(r.retention_days),
  }));
}

/** The ids of the account's devices. */
export async function deviceIdsOf(db: Db, accountId: string): Promise<string[]> {
  return (await db('devices').where({ account_id: accountId }).orderBy('id').pluck('id')) as string[];
}

/**
 * Deletes at most about `batchRows` of the device's rows of `table` with a fix time before
 * `cutoffMs`, the oldest first; returns how many it deleted and whether rows before the cutoff may
 * remain. The batch ends at the fix time of the batchRows-th oldest row (rows of alerts sharing
 * that time go with it), so the delete is one range of the index.
 */
export async function deleteOldBatch(
  db: Db,
  table: TimedTable,
  deviceId: string,
  cutoffMs: number,
  batchRows: number,
): Promise<{ deleted: number; more: boolean }> {
  const edge = (await db(table)
    .where('device_id', deviceId)
    .andWhere('date_time', '<', cutoffMs)
    .orderBy('date_time')
    .offset(batchRows - 1)
    .first('date_time')) as { date_time: number } | undefined;
  const deleted = await db(table)
    .where('device_id', deviceId)
    .andWhere('date_time', edge ? '<=' : '<', edge ? Number(edge.date_time) : cutoffMs)
    .delete();
  return { deleted, more: edge !== undefined };
}

/**
 * Deletes at most `batchRows` of the account's commands created before `cutoffMs` that expired
 * before `nowMs` (a command that can still be sent or answered is kept); returns how many.
 */
export async function deleteOldCommands(
  db: Db,
  accountId: string,
  cutoffMs: number,
  nowMs: number,
  batchRows: number,
): Promise<number> {
  const ids = db('commands')
    .select('id')
    .where('account_id', accountId)
    .andWhere('created_at', '<', cutoffMs)
    .andWhere('expires_at', '<', nowMs)
    .limit(batchRows);
  return db('commands').whereIn('id', ids).delete();
}

/**
 * The trip and stop reports' cache (core/reports/, migration 016) of the account's devices before
 * `cutoffMs`: cached days that end at or before it and late-fix marks of quarter hours before it.
 * They describe locations retention removed; kept, they would answer a report over a range whose
 * rows are gone. Small tables (a row per device-day, a row per quarter hour with late fixes): one
 * statement each. Returns the rows removed.
 */
export async function deleteOldReportCache(db: Db, accountId: string, cutoffMs: number): Promise<number> {
  const devices = db('devices').select('id').where('account_id', accountId);
  const days = await db('report_days').whereIn('device_id', devices).andWhere('day_end_ms', '<=', cutoffMs).delete();
  const marks = await db('report_marks')
    .whereIn('device_id', db('devices').select('id').where('account_id', accountId))
    .andWhere('bucket_ms', '<=', cutoffMs - MARK_BUCKET_MS)
    .delete();
  return days + marks;
}

/** SQLite: pages on the free list (0 on PostgreSQL). */
export async function freePages(db: Db): Promise<number> {
  if (dbKind(db) !== 'sqlite') return 0;
  const rows = (await db.raw('PRAGMA freelist_count')) as { freelist_count: number }[];
  return Number(rows[0]?.freelist_count ?? 0);
}

/** SQLite: whether the database gives free pages back with incremental_vacuum (auto_vacuum = INCREMENTAL, 2). */
export async function incrementalVacuumOn(db: Db): Promise<boolean> {
  if (dbKind(db) !== 'sqlite') return false;
  const rows = (await db.raw('PRAGMA auto_vacuum')) as { auto_vacuum: number }[];
  return Number(rows[0]?.auto_vacuum) === 2;
}

/**
 * SQLite: gives up to `pages` free pages back to the file system (the file is cut by that much).
 * Through exec, which steps the statement to its end: each step frees one page, and knex's raw
 * stepped it once.
 */
export async function incrementalVacuum(db: Db, pages: number): Promise<void> {
  const client = db.client as {
    acquireConnection(): Promise<{ exec(sql: string): unknown }>;
    releaseConnection(c: unknown): Promise<unknown>;
  };
  const conn = await client.acquireConnection();
  try {
    conn.exec(`PRAGMA incremental_vacuum(${Math.max(1, Math.floor(pages))})`);
  } finally {
    await client.releaseConnection(conn);
  }
}

/** The advisory-lock key of the purge on PostgreSQL ("tgretent" in ASCII): one instance purges at a time. */
const PURGE_LOCK_KEY = 0x7467726574656e74n;

type PgConnection = { query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> };

/**
 * Runs `purge` while this instance holds the purge's advisory lock (PostgreSQL; a session lock on
 * one pooled connection, released after, so no transaction stays open while it runs); undefined
 * when another instance holds it. On SQLite the process is the only writer: `purge` runs.
 */
export async function whilePurgeLocked<T>(db: Db, purge: () => Promise<T>): Promise<T | undefined> {
  if (dbKind(db) !== 'postgres') return purge();
  const client = db.client as {
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(c: PgConnection): Promise<unknown>;
  };
  const conn = await client.acquireConnection();
  try {
    const got = await conn.query('select pg_try_advisory_lock($1::bigint) as ok', [PURGE_LOCK_KEY.toString()]);
    if (!got.rows[0]?.ok) return undefined;
    try {
      return await purge();
    } finally {
      await conn.query('select pg_advisory_unlock($1::bigint)', [PURGE_LOCK_KEY.toString()]);
    }
  } finally {
    await client.releaseConnection(conn);
  }
}
