/**
 * Change marks for the reports' cache (core/reports/, table report_marks): the group commit counts
 * each late or corrected fix (one not newer than its device's newest) in its quarter hour of fix
 * time. A cached report day whose quarter hours counted more since it was computed is computed
 * again. A quarter hour, because every time zone's day starts on one. Fixes newer than every fix
 * before them need no mark: a cached day knows the last fix it read.
 */
import type { Knex } from 'knex';
import { keptStatement, sqliteTransactionConnection } from '../db/db.js';

/** the marks' bucket, ms */
export const MARK_BUCKET_MS = 15 * 60_000;

const MARK =
  'insert into report_marks (device_id, bucket_ms, n) values (?, ?, ?) on conflict (device_id, bucket_ms) do update set n = report_marks.n + excluded.n';

/** Counts these fixes (device, fix time ms) in their buckets, inside the batch's transaction. */
export async function markChanged(
  trx: Knex.Transaction,
  fixes: readonly { deviceId: string; dateTime: number }[],
): Promise<void> {
  if (fixes.length === 0) return;
  const counts = new Map<string, { deviceId: string; bucket: number; n: number }>();
  for (const f of fixes) {
    const bucket = Math.floor(f.dateTime / MARK_BUCKET_MS) * MARK_BUCKET_MS;
    const key = `${f.deviceId}\u0000${bucket}`;
    const c = counts.get(key);
    if (c) c.n++;
    else counts.set(key, { deviceId: f.deviceId, bucket, n: 1 });
  }
  // in key order, so that two writers lock the same rows in the same order
  const list = [...counts.values()].sort((a, b) =>
    a.deviceId < b.deviceId ? -1 : a.deviceId > b.deviceId ? 1 : a.bucket - b.bucket,
  );
  const conn = await sqliteTransactionConnection(trx);
  if (conn) {
    const st = keptStatement(conn, MARK);
    for (const c of list) st.run(c.deviceId, c.bucket, c.n);
    return;
  }
  for (const c of list) await trx.raw(MARK, [c.deviceId, c.bucket, c.n]);
}
