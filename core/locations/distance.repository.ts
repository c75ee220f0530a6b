/** The devices' distance states (table device_distance) and the stored fixes a late fix is measured from. */
import type { Knex } from 'knex';
import type { DistanceState, Fix } from './distance.js';
import { keptStatement, sqliteTransactionConnection } from '../db/db.js';
import { pgTextArray } from '../db/pg-arrays.js';
import { lockKeysInOrder } from '../db/pg-locks.js';

type Q = Knex | Knex.Transaction;

const SELECT_STATE = 'select state from device_distance where device_id = ?';
const UPSERT_STATE =
  'insert into device_distance (device_id, total_km, state) values (?, ?, ?) on conflict (device_id) do update set total_km = excluded.total_km, state = excluded.state';

/** The advisory-lock class of a device's distance state on PostgreSQL ("td"); the key is hashtext(device id). */
const DEVICE_LOCK_CLASS = 0x7464;

/**
 * The states of these devices. SQLite: kept statements, one lookup a device (knex built a query of
 * hundreds of parameters per batch). PostgreSQL: first the devices' advisory locks until the
 * transaction ends, then one query. Two instances storing one device's positions wait for each
 * other: the second reads what the first committed. Locks on the rows themselves (FOR UPDATE) were
 * not enough: a device without a row yet is not locked, and a row that appears between two
 * transactions' reads made them wait for each other in a cycle (deadlock detected, the batch lost).
 * The advisory keys are taken in their own order, whether the row exists or not; the read is a
 * statement of its own, so that it sees what was committed while it waited.
 */
export async function statesOf(db: Q, deviceIds: readonly string[]): Promise<Map<string, DistanceState>> {
  const out = new Map<string, DistanceState>();
  const conn = await sqliteTransactionConnection(db);
  if (conn) {
    const select = keptStatement(conn, SELECT_STATE);
    for (const id of deviceIds) {
      const r = select.get(id) as { state: string } | undefined;
      if (r) out.set(id, JSON.parse(r.state) as DistanceState);
    }
    return out;
  }
  await lockKeysInOrder(db, DEVICE_LOCK_CLASS, deviceIds);
  const { rows } = (await db.raw('select device_id, state from device_distance where device_id = any(?::text[])', [
    pgTextArray(deviceIds),
  ])) as { rows: { device_id: string; state: string }[] };
  for (const r of rows) out.set(r.device_id, JSON.parse(r.state) as DistanceState);
  return out;
}

export async function saveStates(db: Q, states: ReadonlyMap<string, DistanceState>): Promise<void> {
  if (states.size === 0) return;
  const conn = await sqliteTransactionConnection(db);
  if (conn) {
    const upsert = keptStatement(conn, UPSERT_STATE);
    for (const [id, s] of states) upsert.run(id, s.totalKm, JSON.stringify(s));
    return;
  }
  const ids = [...states.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  await db.raw(
    `insert into device_distance (device_id, total_km, state)
     select * from unnest(?::text[], ?::float8[], ?::text[])
     on conflict (device_id) do update set total_km = excluded.total_km, state = excluded.state`,
    [
      pgTextArray(ids),
      ids.map((id) => states.get(id)!.totalKm),
      pgTextArray(ids.map((id) => JSON.stringify(states.get(id)))),
    ],
  );
}

/** The devices' running totals, km (a device without positions has none). */
export async function totalsOf(db: Q, deviceIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < deviceIds.length; i += 500)
    for (const r of (await db('device_distance')
      .whereIn('device_id', deviceIds.slice(i, i + 500))
      .select('device_id', 'total_km')) as { device_id: string; total_km: number }[])
      out.set(r.device_id, Number(r.total_km));
  return out;
}

/** The stored fix of the device just before `dateTime`, with its total; undefined when none. */
export async function fixBefore(
  db: Q,
  deviceId: string,
  dateTime: number,
): Promise<{ fix: Fix; totalKm: number } | undefined> {
  const r = (await db('locations')
    .where('device_id', deviceId)
    .andWhere('date_time', '<', dateTime)
    .orderBy('date_time', 'desc')
    .first('date_time', 'data')) as { date_time: number | string; data: string } | undefined;
  if (!r) return undefined;
  const l = JSON.parse(r.data) as {
    latitude: number;
    longitude: number;
    speed?: number;
    valid?: boolean;
    totalDistance?: number;
  };
  return {
    fix: { dateTime: Number(r.date_time), latitude: l.latitude, longitude: l.longitude, valid: l.valid },
    totalKm: l.totalDistance ?? 0,
  };
}
