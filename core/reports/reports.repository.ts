/**
 * The reports' storage: the account's settings, the cached days (report_days), the change marks
 * the group commit counts (report_marks, core/locations/fix-marks.repository.ts), and the fixes of
 * a day. Every read here is a hot read (db.read): on SQLite the read-only connection beside the
 * writer, prepared once.
 */
import { dbKind, type Db } from '../db/db.js';
import { pgInt8Array } from '../db/pg-arrays.js';
import type { Location } from '../model/location.js';
import { reportFix, type ReportFix } from './day-runs.js';

export interface AccountReportInfo {
  timeZone: string;
  settings: string | null;
}

export async function accountInfo(db: Db, accountId: string): Promise<AccountReportInfo | undefined> {
  const r = await db.read.first('select time_zone, report_settings from accounts where id = ?', accountId);
  return r ? { timeZone: String(r.time_zone), settings: (r.report_settings as string | null) ?? null } : undefined;
}

export async function saveSettings(db: Db, accountId: string, text: string): Promise<void> {
  await db('accounts').where({ id: accountId }).update({ report_settings: text });
}

/** The ids of the account's devices in the group, in id order. */
export async function groupDeviceIds(db: Db, accountId: string, groupId: string): Promise<string[]> {
  const rows = await db.read.all(
    'select d.id from group_devices g join devices d on d.id = g.device_id where g.group_id = ? and d.account_id = ? order by d.id',
    groupId,
    accountId,
  );
  return rows.map((r) => String(r.id));
}

/** A cached day as stored. */
export interface DayRow {
  dayStartMs: number;
  dayEndMs: number;
  params: string;
  firstMs: number;
  lastMs: number;
  marks: number;
  /** the day's runs, JSON (day-runs.ts DayRuns) */
  data: string;
}

/** The device's cached days starting in [fromMs, toMs]. */
export async function cachedDays(db: Db, deviceId: string, fromMs: number, toMs: number): Promise<Map<number, DayRow>> {
  const rows = await db.read.all(
    'select day_start_ms, day_end_ms, params, first_ms, last_ms, marks, data from report_days where device_id = ? and day_start_ms >= ? and day_start_ms <= ?',
    deviceId,
    fromMs,
    toMs,
  );
  const out = new Map<number, DayRow>();
  for (const r of rows)
    out.set(Number(r.day_start_ms), {
      dayStartMs: Number(r.day_start_ms),
      dayEndMs: Number(r.day_end_ms),
      params: String(r.params),
      firstMs: Number(r.first_ms),
      lastMs: Number(r.last_ms),
      marks: Number(r.marks),
      data: String(r.data),
    });
  return out;
}

/** The change marks of the device in [fromMs, toMs): bucket start → count. */
export async function marks(db: Db, deviceId: string, fromMs: number, toMs: number): Promise<Map<number, number>> {
  const rows = await db.read.all(
    'select bucket_ms, n from report_marks where device_id = ? and bucket_ms >= ? and bucket_ms < ?',
    deviceId,
    fromMs,
    toMs,
  );
  return new Map(rows.map((r) => [Number(r.bucket_ms), Number(r.n)]));
}

const FIRST_LAST = `select
  (select min(date_time) from locations where device_id = ? and date_time >= ? and date_time < ?) as first_ms,
  (select max(date_time) from locations where device_id = ? and date_time >= ? and date_time < ?) as last_ms`;
const FIRST_LAST_PG = `select b.s as day_start_ms,
  (select min(date_time) from locations where device_id = ? and date_time >= b.s and date_time < b.e) as first_ms,
  (select max(date_time) from locations where device_id = ? and date_time >= b.s and date_time < b.e) as last_ms
  from unnest(?::int8[], ?::int8[]) as b(s, e)`;

/**
 * The first and last fix time stored in each day [start, end) that has fixes: two index probes a
 * day; on PostgreSQL every day in one round trip.
 */
export async function firstAndLast(
  db: Db,
  deviceId: string,
  days: readonly [number, number][],
): Promise<Map<number, { firstMs: number; lastMs: number }>> {
  const out = new Map<number, { firstMs: number; lastMs: number }>();
  const add = (start: number, r: Record<string, unknown> | undefined) => {
    if (r && r.first_ms !== null && r.first_ms !== undefined)
      out.set(start, { firstMs: Number(r.first_ms), lastMs: Number(r.last_ms) });
  };
  if (dbKind(db) === 'postgres') {
    const rows = await db.read.all(
      FIRST_LAST_PG,
      deviceId,
      deviceId,
      pgInt8Array(days.map((d) => d[0])),
      pgInt8Array(days.map((d) => d[1])),
    );
    for (const r of rows) add(Number(r.day_start_ms), r);
    return out;
  }
  for (const [start, end] of days)
    add(start, await db.read.first(FIRST_LAST, deviceId, start, end, deviceId, start, end));
  return out;
}

const DAY_FIXES =
  'select date_time, data from locations where device_id = ? and date_time >= ? and date_time < ? order by date_time';

/** The fixes of [fromMs, toMs), oldest first, as a report reads them. */
export async function fixes(db: Db, deviceId: string, fromMs: number, toMs: number): Promise<ReportFix[]> {
  const rows = await db.read.all(DAY_FIXES, deviceId, fromMs, toMs);
  const out = new Array<ReportFix>(rows.length);
  for (let i = 0; i < rows.length; i++)
    out[i] = reportFix(Number(rows[i].date_time), JSON.parse(rows[i].data as string) as Location);
  return out;
}

const SAVE_DAY = `insert into report_days (device_id, day_start_ms, day_end_ms, params, first_ms, last_ms, marks, data)
  values (?, ?, ?, ?, ?, ?, ?, ?)
  on conflict (device_id, day_start_ms) do update set day_end_ms = excluded.day_end_ms, params = excluded.params,
  first_ms = excluded.first_ms, last_ms = excluded.last_ms, marks = excluded.marks, data = excluded.data`;

export async function saveDay(db: Db, deviceId: string, d: DayRow): Promise<void> {
  await db.raw(SAVE_DAY, [deviceId, d.dayStartMs, d.dayEndMs, d.params, d.firstMs, d.lastMs, d.marks, d.data]);
}

/** Forgets a cached day that has no fixes any more. */
export async function dropDay(db: Db, deviceId: string, dayStartMs: number): Promise<void> {
  await db('report_days').where({ device_id: deviceId, day_start_ms: dayStartMs }).delete();
}
