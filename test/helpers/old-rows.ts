/** A backlog for retention's tests and bench: old positions written straight into the table, fast. */
import { dbKind, type Db } from '../../core/db/db.js';

/** Rows older than any retention, written straight into the table (a backlog, as a year of ingest leaves). */
export async function insertOldRows(db: Db, deviceId: string, n: number, fromMs: number): Promise<void> {
  const data = JSON.stringify({ latitude: 1, longitude: 1, dateTime: new Date(fromMs).toISOString() });
  if (dbKind(db) === 'postgres') {
    await db.raw(
      'insert into locations (device_id, date_time, server_time, data) select ?, ?::bigint + i * 1000, ?, ? from generate_series(1, ?) i',
      [deviceId, fromMs, fromMs, data, n],
    );
    return;
  }
  await db.raw(
    `insert into locations (device_id, date_time, server_time, data)
     with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
     select ?, ? + i * 1000, ?, ? from n`,
    [n, deviceId, fromMs, fromMs, data],
  );
}
