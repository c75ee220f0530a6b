import type { Knex } from 'knex';
import type { Location } from '../model/location.js';
import { hotReads, keptStatement, sqliteTransactionConnection } from '../db/db.js';

type Q = Knex | Knex.Transaction;

export interface LocationRow {
  deviceId: string;
  /** fix time, epoch ms */
  dateTime: number;
  serverTime: number;
  location: Location;
}

const CHUNK = 500;

/**
 * Stores rows; a row whose (device, fix time) is already stored is skipped.
 * Returns the rows actually inserted. Also moves each device's last location forward.
 */
const INSERT_ONE = 'insert into locations (device_id, date_time, server_time, data) values (?, ?, ?, ?) on conflict (device_id, date_time) do nothing';
/** A device's last location moves forward only when the new fix is later. */
const LAST_ON_CONFLICT = `on conflict (device_id) do update set date_time = excluded.date_time, data = excluded.data
  where excluded.date_time > last_locations.date_time`;
const UPSERT_LAST_ONE = `insert into last_locations (device_id, date_time, data) values (?, ?, ?) ${LAST_ON_CONFLICT}`;

export async function insertMany(db: Q, rows: LocationRow[]): Promise<LocationRow[]> {
  const conn = await sqliteTransactionConnection(db);
  if (conn) {
    // SQLite inside a transaction: one kept statement run per row is the cheapest bulk insert.
    const insert = keptStatement(conn, INSERT_ONE);
    const inserted = rows.filter((r) => insert.run(r.deviceId, r.dateTime, r.serverTime, JSON.stringify(r.location)).changes === 1);
    const upsert = keptStatement(conn, UPSERT_LAST_ONE);
    for (const r of newestPerDevice(inserted)) upsert.run(r.deviceId, r.dateTime, JSON.stringify(r.location));
    return inserted;
  }
  const inserted: LocationRow[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const keys = (await db('locations')
      .insert(chunk.map((r) => ({ device_id: r.deviceId, date_time: r.dateTime, server_time: r.serverTime, data: JSON.stringify(r.location) })))
      .onConflict(['device_id', 'date_time'])
      .ignore()
      .returning(['device_id', 'date_time'])) as { device_id: string; date_time: number | string }[];
    const fresh = new Set(keys.map((k) => `${k.device_id}\u0000${Number(k.date_time)}`));
    // Within one statement the first row of a key is the one stored; later duplicates were skipped.
    for (const r of chunk) if (fresh.delete(`${r.deviceId}\u0000${r.dateTime}`)) inserted.push(r);
  }
  await upsertLast(db, newestPerDevice(inserted));
  return inserted;
}

function newestPerDevice(rows: LocationRow[]): LocationRow[] {
  const newest = new Map<string, LocationRow>();
  for (const r of rows) {
    const cur = newest.get(r.deviceId);
    if (!cur || r.dateTime > cur.dateTime) newest.set(r.deviceId, r);
  }
  return [...newest.values()];
}

/**
 * The last location is the one with the latest fix time, not the last received: one multi-row
 * upsert per chunk moves each device's row forward only when the new fix is later.
 */
async function upsertLast(db: Q, rows: LocationRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    await db.raw(
      `insert into last_locations (device_id, date_time, data) values ${chunk.map(() => '(?, ?, ?)').join(', ')} ${LAST_ON_CONFLICT}`,
      chunk.flatMap((r) => [r.deviceId, r.dateTime, JSON.stringify(r.location)]),
    );
  }
}

/**
 * The device's owner and its last location as the stored JSON text (null when it has none yet),
 * in one indexed read: the REST answer embeds the text as it is, without parsing it.
 */
export async function lastWithOwner(db: Q, deviceId: string): Promise<{ accountId: string; data: string | null } | undefined> {
  const fast = hotReads(db);
  const r = (fast
    ? fast.get(LAST_WITH_OWNER, deviceId)
    : await db('devices').leftJoin('last_locations', 'last_locations.device_id', 'devices.id').where('devices.id', deviceId).first('devices.account_id', 'last_locations.data')) as
    | { account_id: string | number; data: string | null }
    | undefined;
  return r ? { accountId: String(r.account_id), data: r.data } : undefined;
}
const LAST_WITH_OWNER = 'select d.account_id, l.data from devices d left join last_locations l on l.device_id = d.id where d.id = ?';

export async function findMany(db: Q, deviceId: string, dateTimes: number[]): Promise<Location[]> {
  const out: Location[] = [];
  for (let i = 0; i < dateTimes.length; i += CHUNK) {
    const rows = await db('locations').where({ device_id: deviceId }).whereIn('date_time', dateTimes.slice(i, i + CHUNK)).orderBy('date_time').select('data');
    for (const r of rows) out.push(JSON.parse(r.data) as Location);
  }
  return out;
}

export interface RangeQuery {
  deviceId: string;
  fromMs: number;
  toMs: number;
  /** exclusive lower bound from a cursor */
  afterMs?: number;
  limit: number;
}

/** Locations with fix time in [from, to], oldest first; `limit + 1` rows tell whether more remain. */
export async function range(db: Q, q: RangeQuery): Promise<{ locations: Location[]; lastMs: number | null; more: boolean }> {
  const rows = await db('locations')
    .where('device_id', q.deviceId)
    .andWhere('date_time', '>=', q.fromMs)
    .andWhere('date_time', '<=', q.toMs)
    .modify((b) => {
      if (q.afterMs !== undefined) b.andWhere('date_time', '>', q.afterMs);
    })
    .orderBy('date_time', 'asc')
    .limit(q.limit + 1)
    .select('date_time', 'data');
  const more = rows.length > q.limit;
  const page = more ? rows.slice(0, q.limit) : rows;
  return {
    locations: page.map((r: { data: string }) => JSON.parse(r.data) as Location),
    lastMs: page.length ? Number(page[page.length - 1].date_time) : null,
    more,
  };
}
