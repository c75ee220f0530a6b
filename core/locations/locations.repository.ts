import type { Knex } from 'knex';
import { storedJson, type Location } from '../model/location.js';
import { dbKind, keptStatement, sqliteTransactionConnection, type Db } from '../db/db.js';
import { pgInt8Array, pgTextArray } from '../db/pg-arrays.js';

type Q = Knex | Knex.Transaction;

export interface LocationRow {
  deviceId: string;
  /** fix time, epoch ms */
  dateTime: number;
  serverTime: number;
  location: Location;
  /** `location` as JSON text, when the caller serialised it already (see storedJson) */
  json?: string;
}

const CHUNK = 500;

/**
 * A row that arrives serialised (a gateway process ran the steps and made its JSON): the core
 * writes the text as it came, and parses it only if something asks for the location (a rule to
 * evaluate, a live-feed subscriber, a stored fix to compare a resend with).
 */
export class SerialisedRow implements LocationRow {
  /** the location `json` holds, once something asked for it */
  private parsed: Location | undefined = undefined;
  /** `json` before the distance ledger added the total (core/locations/distance.ledger.ts) */
  jsonWithoutTotal: string | undefined = undefined;
  constructor(
    readonly deviceId: string,
    readonly dateTime: number,
    readonly serverTime: number,
    public json: string,
    /**
     * What the distance ledger reads of the location, taken out by the checks. The location they
     * parsed is not kept: held until the commit, every row's whole object outlived the young
     * generation and was collected from the old one.
     */
    readonly fix: FixValues,
  ) {}
  get location(): Location {
    return (this.parsed ??= JSON.parse(this.json) as Location);
  }
  /** the ledger's total, already in `json`: a location parsed before gets it too; none is parsed for it */
  setTotalDistance(km: number): void {
    if (this.parsed) this.parsed.totalDistance = km;
  }
}

/** What the distance ledger reads of a location (core/locations/distance.ledger.ts). */
export interface FixValues {
  latitude: number;
  longitude: number;
  speed?: number;
  valid?: boolean;
}

const INSERT_ONE =
  'insert into locations (device_id, date_time, server_time, data) values (?, ?, ?, ?) on conflict (device_id, date_time) do nothing';
const SELECT_ONE = 'select data from locations where device_id = ? and date_time = ?';
const UPDATE_ONE = 'update locations set server_time = ?, data = ? where device_id = ? and date_time = ?';
/**
 * A device's last location moves forward only when the new fix is later, or is replaced by a
 * correction of the same fix (identical resends never reach this: they are not written).
 */
const LAST_ON_CONFLICT = `on conflict (device_id) do update set date_time = excluded.date_time, data = excluded.data
  where excluded.date_time >= last_locations.date_time`;
const UPSERT_LAST_ONE = `insert into last_locations (device_id, date_time, data) values (?, ?, ?) ${LAST_ON_CONFLICT}`;

/**
 * Stores rows, one per device and fix time (docs/contract.md §2 Locations): a new fix is inserted; a
 * fix already stored is left alone when the resend is identical (serverTime aside) and replaced
 * when its values differ (a correction). Of several rows with the same key, the last wins.
 * Returns the rows written (inserted or replaced), in the order given, and moves each device's
 * last location forward.
 */
export async function insertMany(db: Q, rows: LocationRow[]): Promise<LocationRow[]> {
  const unique = lastPerKey(rows);
  const conn = await sqliteTransactionConnection(db);
  let written: LocationRow[];
  if (conn) {
    // SQLite inside a transaction: kept statements run per row are the cheapest bulk write.
    const insert = keptStatement(conn, INSERT_ONE);
    const select = keptStatement(conn, SELECT_ONE);
    const update = keptStatement(conn, UPDATE_ONE);
    written = unique.filter((r) => {
      const json = r.json ?? storedJson(r.location);
      if (insert.run(r.deviceId, r.dateTime, r.serverTime, json).changes === 1) return true;
      const stored = select.get(r.deviceId, r.dateTime) as { data: string } | undefined;
      if (stored && sameLocation(JSON.parse(stored.data), r.location)) return false;
      update.run(r.serverTime, json, r.deviceId, r.dateTime);
      return true;
    });
    const upsert = keptStatement(conn, UPSERT_LAST_ONE);
    for (const r of newestPerDevice(written)) upsert.run(r.deviceId, r.dateTime, r.json ?? storedJson(r.location));
    return written;
  }
  if (dbKind(db) === 'postgres') return insertManyPg(db, unique);
  written = [];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const chunk = unique.slice(i, i + CHUNK);
    const keys = (await db('locations')
      .insert(
        chunk.map((r) => ({
          device_id: r.deviceId,
          date_time: r.dateTime,
          server_time: r.serverTime,
          data: r.json ?? storedJson(r.location),
        })),
      )
      .onConflict(['device_id', 'date_time'])
      .ignore()
      .returning(['device_id', 'date_time'])) as { device_id: string; date_time: number | string }[];
    const fresh = new Set(keys.map((k) => key(k.device_id, Number(k.date_time))));
    const changed = await corrections(
      db,
      chunk.filter((r) => !fresh.has(key(r.deviceId, r.dateTime))),
    );
    for (const r of chunk) if (fresh.has(key(r.deviceId, r.dateTime)) || changed.has(r)) written.push(r);
  }
  await upsertLast(db, newestPerDevice(written));
  return written;
}

// --- PostgreSQL: one statement per step, whatever the batch's size -----------------------------
//
// Each column travels as one array parameter (binary: core/db/pg-arrays.ts) and `unnest` turns the
// arrays back into rows: a statement of the same text for every batch (parsed and planned once per
// batch instead of once per 500 rows), four parameters instead of four per row (no
// 65,535-parameter limit). A batch of new fixes is one statement: the history's plain insert and
// the last locations' upsert. Rows are locked in a fixed order (locations by
// device and fix time, last locations by device) so that two instances writing the same keys at
// once never deadlock.

/** The last locations' upsert from `source` (device_id, date_time, data), newest per device, devices in byte order. */
const lastFrom = (source: string): string => `insert into last_locations (device_id, date_time, data)
  select * from (select distinct on (device_id) device_id, date_time, data from ${source} order by device_id, date_time desc) n
  order by device_id collate "C"
  ${LAST_ON_CONFLICT}`;
/**
 * Every row new (the usual batch): a plain insert, cheaper than one that checks each row for a
 * conflict. The upsert reads what the insert returns, so the history's rows are locked before the
 * last locations' in every statement (two upserts that each read the arrays could run first and
 * lock the tables in the other order, which deadlocks against a writer of the same devices).
 */
const PG_INSERT_NEW = `with ins as (
    insert into locations (device_id, date_time, server_time, data)
    select * from unnest(?::text[], ?::int8[], ?::int8[], ?::text[])
    returning device_id, date_time, data
  ), last as (${lastFrom('ins')})
  select 1`;
/** Some rows stored already: the new ones inserted, their keys returned. */
const PG_INSERT = `with ins as (
    insert into locations (device_id, date_time, server_time, data)
    select * from unnest(?::text[], ?::int8[], ?::int8[], ?::text[])
    on conflict (device_id, date_time) do nothing
    returning device_id, date_time, data
  ), last as (${lastFrom('ins')})
  select device_id, date_time from ins`;
const PG_STORED = `select l.device_id, l.date_time, l.data from locations l
  join unnest(?::text[], ?::int8[]) as k(device_id, date_time) on l.device_id = k.device_id and l.date_time = k.date_time`;
const PG_CORRECT = `update locations l set server_time = u.server_time, data = u.data
  from unnest(?::text[], ?::int8[], ?::int8[], ?::text[]) as u(device_id, date_time, server_time, data)
  where l.device_id = u.device_id and l.date_time = u.date_time`;
const PG_UPSERT_LAST = lastFrom('unnest(?::text[], ?::int8[], ?::text[]) as u(device_id, date_time, data)');

/** Devices in byte order (as `collate "C"` sorts them: UTF-16 and UTF-8 orders agree but for rare characters), then fix time. */
const byKey = (a: LocationRow, b: LocationRow): number =>
  a.deviceId < b.deviceId ? -1 : a.deviceId > b.deviceId ? 1 : a.dateTime - b.dateTime;

const UNIQUE_VIOLATION = '23505';

/**
 * insertMany on PostgreSQL (`unique` has one row per key): one statement when every row is new
 * (tried first, inside a savepoint when in a transaction); when one was stored already, the
 * statement that skips stored rows and returns the keys it inserted, then one read of the stored
 * rows, one update of the corrected ones and one upsert of their last locations (the upsert keeps
 * the latest fix, so the two upserts give what one would).
 */
async function insertManyPg(db: Q, unique: LocationRow[]): Promise<LocationRow[]> {
  if (unique.length === 0) return unique;
  const sorted = [...unique].sort(byKey);
  const columns = [
    pgTextArray(sorted.map((r) => r.deviceId)),
    pgInt8Array(sorted.map((r) => r.dateTime)),
    pgInt8Array(sorted.map((r) => r.serverTime)),
    pgTextArray(sorted.map((r) => r.json ?? storedJson(r.location))),
  ];
  const inTransaction = (db as { isTransaction?: boolean }).isTransaction === true;
  if (inTransaction) await db.raw('savepoint tg_locations');
  try {
    await db.raw(PG_INSERT_NEW, columns);
    return unique;
  } catch (e) {
    if ((e as { code?: unknown }).code !== UNIQUE_VIOLATION) throw e;
    if (inTransaction) await db.raw('rollback to savepoint tg_locations');
  }
  const { rows: keys } = (await db.raw(PG_INSERT, columns)) as {
    rows: { device_id: string; date_time: number | string }[];
  };
  if (keys.length === unique.length) return unique;
  const fresh = new Set(keys.map((k) => key(k.device_id, Number(k.date_time))));
  const changed = await correctionsPg(
    db,
    sorted.filter((r) => !fresh.has(key(r.deviceId, r.dateTime))),
  );
  if (changed.size) {
    const last = [...changed];
    await db.raw(PG_UPSERT_LAST, [
      pgTextArray(last.map((r) => r.deviceId)),
      pgInt8Array(last.map((r) => r.dateTime)),
      pgTextArray(last.map((r) => r.json ?? storedJson(r.location))),
    ]);
  }
  return unique.filter((r) => fresh.has(key(r.deviceId, r.dateTime)) || changed.has(r));
}

/** Of rows whose key is already stored (in key order), replaces those whose values differ: one read, one update. */
async function correctionsPg(db: Q, conflicting: LocationRow[]): Promise<Set<LocationRow>> {
  const changed = new Set<LocationRow>();
  const { rows: found } = (await db.raw(PG_STORED, [
    pgTextArray(conflicting.map((r) => r.deviceId)),
    pgInt8Array(conflicting.map((r) => r.dateTime)),
  ])) as {
    rows: { device_id: string; date_time: number | string; data: string }[];
  };
  const stored = new Map(found.map((f) => [key(f.device_id, Number(f.date_time)), f.data]));
  for (const r of conflicting) {
    const data = stored.get(key(r.deviceId, r.dateTime));
    if (data === undefined || !sameLocation(JSON.parse(data), r.location)) changed.add(r);
  }
  if (changed.size === 0) return changed;
  const list = [...changed];
  await db.raw(PG_CORRECT, [
    pgTextArray(list.map((r) => r.deviceId)),
    pgInt8Array(list.map((r) => r.dateTime)),
    pgInt8Array(list.map((r) => r.serverTime)),
    pgTextArray(list.map((r) => r.json ?? storedJson(r.location))),
  ]);
  return changed;
}

/** Of rows whose key is already stored, replaces those whose values differ; returns them. */
async function corrections(db: Q, conflicting: LocationRow[]): Promise<Set<LocationRow>> {
  const changed = new Set<LocationRow>();
  const byDevice = new Map<string, LocationRow[]>();
  for (const r of conflicting) byDevice.set(r.deviceId, [...(byDevice.get(r.deviceId) ?? []), r]);
  for (const [deviceId, list] of byDevice) {
    const stored = new Map<number, string>();
    for (let i = 0; i < list.length; i += CHUNK) {
      const found = (await db('locations')
        .where('device_id', deviceId)
        .whereIn(
          'date_time',
          list.slice(i, i + CHUNK).map((r) => r.dateTime),
        )
        .select('date_time', 'data')) as { date_time: number | string; data: string }[];
      for (const f of found) stored.set(Number(f.date_time), f.data);
    }
    for (const r of list) {
      const data = stored.get(r.dateTime);
      if (data !== undefined && sameLocation(JSON.parse(data), r.location)) continue;
      await db('locations')
        .where({ device_id: r.deviceId, date_time: r.dateTime })
        .update({ server_time: r.serverTime, data: r.json ?? storedJson(r.location) });
      changed.add(r);
    }
  }
  return changed;
}

const key = (deviceId: string, dateTime: number): string => `${deviceId}\u0000${dateTime}`;

/** One row per (device, fix time): the last given, at the place of the first. */
function lastPerKey(rows: LocationRow[]): LocationRow[] {
  if (risingPerDevice(rows)) return rows;
  const byKey = new Map<string, LocationRow>();
  for (const r of rows) byKey.set(key(r.deviceId, r.dateTime), r);
  return byKey.size === rows.length ? rows : [...byKey.values()];
}

/** Same values, whatever the order of keys; `serverTime` (when it was received) is not a value. */
/** the same fix, whatever trackgate added when it stored it (the time received, the distance so far) */
function sameLocation(stored: Location, incoming: Location): boolean {
  const { serverTime: _a, totalDistance: _c, ...a } = stored;
  const { serverTime: _b, totalDistance: _d, ...b } = incoming;
  return sameJson(a, b);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  // null and absent both mean "no value" (locations stored before that rule held nulls)
  const oa = a as Record<string, unknown>;
  const ob = b as Record<string, unknown>;
  const ka = Object.keys(oa).filter((k) => oa[k] != null);
  const kb = Object.keys(ob).filter((k) => ob[k] != null);
  return ka.length === kb.length && ka.every((k) => sameJson(oa[k], ob[k]));
}

/**
 * Whether each device's fix times only rise in `rows` (the usual batch), so that no key comes
 * twice. Finding that out takes a number per device; a key string per row cost as much as a
 * tenth of the write.
 */
function risingPerDevice(rows: LocationRow[]): boolean {
  const latest = new Map<string, number>();
  for (const r of rows) {
    const before = latest.get(r.deviceId);
    if (before !== undefined && r.dateTime <= before) return false;
    latest.set(r.deviceId, r.dateTime);
  }
  return true;
}

function newestPerDevice(rows: LocationRow[]): LocationRow[] {
  const newest = new Map<string, LocationRow>();
  for (const r of rows) {
    const cur = newest.get(r.deviceId);
    if (!cur || r.dateTime >= cur.dateTime) newest.set(r.deviceId, r);
  }
  return [...newest.values()];
}

/**
 * The last location is the one with the latest fix time, not the last received: one multi-row
 * upsert per chunk moves each device's row forward only when the new fix is later (or corrects it).
 */
async function upsertLast(db: Q, rows: LocationRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    await db.raw(
      `insert into last_locations (device_id, date_time, data) values ${chunk.map(() => '(?, ?, ?)').join(', ')} ${LAST_ON_CONFLICT}`,
      chunk.flatMap((r) => [r.deviceId, r.dateTime, r.json ?? storedJson(r.location)]),
    );
  }
}

/**
 * The device's owner and its last location as the stored JSON text (null when it has none yet),
 * in one indexed read: the REST answer embeds the text as it is, without parsing it.
 */
export async function lastWithOwner(
  db: Db,
  deviceId: string,
): Promise<{ accountId: string; data: string | null } | undefined> {
  const r = (await db.read.first(LAST_WITH_OWNER, deviceId)) as
    | { account_id: string | number; data: string | null }
    | undefined;
  return r ? { accountId: String(r.account_id), data: r.data } : undefined;
}
const LAST_WITH_OWNER =
  'select d.account_id, l.data from devices d left join last_locations l on l.device_id = d.id where d.id = ?';

/** Latitude and longitude of the device's last location, when it has one. */
export async function lastPosition(
  db: Q,
  deviceId: string,
): Promise<{ latitude: number; longitude: number } | undefined> {
  const r = (await db('last_locations').where('device_id', deviceId).first('data')) as { data: string } | undefined;
  if (!r) return undefined;
  const l = JSON.parse(r.data) as Location;
  return { latitude: l.latitude, longitude: l.longitude };
}

export async function findMany(db: Q, deviceId: string, dateTimes: number[]): Promise<Location[]> {
  const out: Location[] = [];
  for (let i = 0; i < dateTimes.length; i += CHUNK) {
    const rows = await db('locations')
      .where({ device_id: deviceId })
      .whereIn('date_time', dateTimes.slice(i, i + CHUNK))
      .orderBy('date_time')
      .select('data');
    for (const r of rows) out.push(JSON.parse(r.data) as Location);
  }
  return out;
}

/**
 * A device's locations with a fix time after `afterMs`, received at `receivedFrom` or later, oldest
 * first, at most `limit` (the alert rules' catch-up after a restart, core/rules/rules.engine.ts).
 */
export async function fixesAfter(
  db: Q,
  deviceId: string,
  afterMs: number,
  receivedFrom: number,
  limit: number,
): Promise<{ dateTime: number; location: Location }[]> {
  const rows = await db('locations')
    .where('device_id', deviceId)
    .andWhere('date_time', '>', afterMs)
    .andWhere('server_time', '>=', receivedFrom)
    .orderBy('date_time', 'asc')
    .limit(limit)
    .select('date_time', 'data');
  return rows.map((r: { date_time: unknown; data: string }) => ({
    dateTime: Number(r.date_time),
    location: JSON.parse(r.data) as Location,
  }));
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
export async function range(
  db: Q,
  q: RangeQuery,
): Promise<{ locations: Location[]; lastMs: number | null; more: boolean }> {
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

/**
 * True when the database refused what a statement carried (a value, a constraint), not when it
 * could not be reached or was busy: PostgreSQL SQLSTATE classes 22 (data exception), 23 (integrity
 * constraint violation) and 54 (program limit exceeded); SQLite's constraint, too-big and type
 * mismatch results; a value JSON cannot hold. Only such a failure is worth retrying without some
 * of the rows: the rest would fail the same way again.
 */
export function isRefusedRow(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return e instanceof TypeError || e instanceof RangeError;
  return /^(22|23|54)[0-9A-Z]{3}$/.test(code) || /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH|RANGE)/.test(code);
}

export interface StoredText {
  /** fix time, epoch ms */
  dateTime: number;
  /** the location as stored (JSON text) */
  data: string;
}

const TEXTS_AFTER =
  'select date_time, data from locations where device_id = ? and date_time > ? and date_time <= ? order by date_time limit ?';

/**
 * One keyset page of a device's history as stored: fix times after `afterMs` up to `toMs`
 * (inclusive), oldest first, at most `limit`. A fix time is unique per device, so the last row's
 * time is the next page's `afterMs` (the history export, core/export/). Each page is a short read
 * that holds no connection or snapshot between pages; on SQLite it runs on the hot-read connection,
 * beside the writer.
 */
export async function textsAfter(
  db: Db,
  deviceId: string,
  afterMs: number,
  toMs: number,
  limit: number,
): Promise<StoredText[]> {
  const rows = await db.read.all(TEXTS_AFTER, deviceId, afterMs, toMs, limit);
  return rows.map((r) => ({ dateTime: Number(r.date_time), data: String(r.data) }));
}
