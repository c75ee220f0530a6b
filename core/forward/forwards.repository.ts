/** Forwards and their event stream (migration 010): the only SQL of core/forward/. */
import type { Knex } from 'knex';
import type { Forward, ForwardEventKind, ForwardProgress, ForwardType } from '../model/forward.js';
import { keptStatement, sqliteTransactionConnection, type Db } from '../db/db.js';
import { pgInt8Array, pgTextArray } from '../db/pg-arrays.js';
import { parseJson, toBool, toJson, toNum } from '../db/json.js';
import { lockKeysInOrder } from '../db/pg-locks.js';

type Q = Knex | Knex.Transaction;

const toForward = (r: Record<string, unknown>): Forward => ({
  id: String(r.id),
  accountId: String(r.account_id),
  name: String(r.name),
  type: String(r.type) as ForwardType,
  url: String(r.url),
  events: parseJson<ForwardEventKind[]>(r.events, []),
  groupId: (r.group_id as string | null) ?? null,
  enabled: toBool(r.enabled),
  topic: (r.topic as string | null) ?? null,
  exchange: (r.exchange as string | null) ?? null,
  secret: (r.secret as string | null) ?? null,
  created: Number(r.created),
  modified: Number(r.modified),
});

const toProgress = (r: Record<string, unknown>): ForwardProgress => ({
  cursor: Number(r.last_event_id),
  lastDeliveredAt: toNum(r.last_delivered_at),
  lastError: (r.last_error as string | null) ?? null,
  failingSince: toNum(r.failing_since),
  dropped: Number(r.dropped),
});

const toRow = (f: Forward): Record<string, unknown> => ({
  id: f.id,
  account_id: f.accountId,
  name: f.name,
  type: f.type,
  url: f.url,
  events: toJson(f.events),
  group_id: f.groupId,
  enabled: f.enabled,
  topic: f.topic,
  exchange: f.exchange,
  secret: f.secret,
  created: f.created,
  modified: f.modified,
});

const ORDER = [{ column: 'created' }, { column: 'id' }];

/** A new forward, starting after event `cursor`. */
export async function insert(db: Q, f: Forward, cursor: number): Promise<void> {
  await db('forwards').insert({ ...toRow(f), last_event_id: cursor });
}

/**
 * Replaces what the forward is (not where its delivery stands); `cursor`: starts again after it
 * (enabled again), its status cleared; `clearStatus`: its status cleared (settings that were refused, corrected).
 */
export async function update(db: Q, f: Forward, cursor?: number, clearStatus = false): Promise<void> {
  const { id, account_id: _account, created: _created, ...rest } = toRow(f);
  const cleared = cursor !== undefined || clearStatus ? { last_error: null, failing_since: null } : {};
  await db('forwards')
    .where({ id })
    .update({ ...rest, ...(cursor !== undefined && { last_event_id: cursor }), ...cleared });
}

export async function findById(db: Q, id: string): Promise<(Forward & ForwardProgress) | undefined> {
  const r = await db('forwards').where({ id }).first();
  return r ? { ...toForward(r), ...toProgress(r) } : undefined;
}

/** Every forward of an account, oldest first, with where its delivery stands. */
export async function listByAccount(db: Q, accountId: string): Promise<(Forward & ForwardProgress)[]> {
  return (await db('forwards').where({ account_id: accountId }).orderBy(ORDER)).map((r) => ({
    ...toForward(r),
    ...toProgress(r),
  }));
}

/** Every enabled forward of every account, with its progress and lease (for the delivery loops). */
export async function listEnabled(
  db: Q,
): Promise<(Forward & ForwardProgress & { leaseHolder: string | null; leaseUntil: number })[]> {
  return (await db('forwards').where({ enabled: true }).orderBy(ORDER)).map((r) => ({
    ...toForward(r),
    ...toProgress(r),
    leaseHolder: (r.lease_holder as string | null) ?? null,
    leaseUntil: Number(r.lease_until),
  }));
}

export async function remove(db: Q, id: string): Promise<void> {
  await db('forwards').where({ id }).delete();
}

/** The accounts with at least one enabled forward: their stored locations and alerts are journaled. */
export async function accountsWithEnabled(db: Q): Promise<string[]> {
  return (await db('forwards').where({ enabled: true }).distinct('account_id')).map((r: { account_id: string }) =>
    String(r.account_id),
  );
}

// --- the event stream ----------------------------------------------------------------------------

/** What `forward_events` holds: a stored location or alert in its REST JSON. */
export interface StreamEvent {
  id: number;
  deviceId: string;
  kind: 'location' | 'alert';
  /** the REST JSON of the location or alert */
  body: string;
  createdAt: number;
}

export interface NewStreamEvent {
  accountId: string;
  deviceId: string;
  kind: 'location' | 'alert';
  body: string;
  createdAt: number;
}

const ADVISORY_CLASS = 0x7467; // "tg"

/**
 * PostgreSQL: takes the accounts' stream locks until the transaction ends (in a fixed order, so
 * two transactions never wait for each other in a cycle), in one statement. An event's id is drawn
 * when it is inserted and becomes visible when its transaction commits; with one writer per account
 * at a time the ids of an account's events become visible in increasing order, so a reader's cursor
 * never passes an event still to commit. This is the one lock instances sharing a database take
 * against each other on the ingest path, and only for accounts with an enabled forward: the
 * batches of two instances that journal events of the same account commit one after the other
 * (the lock is taken after the locations are written, so it is held for the journal's insert and
 * the commit). SQLite has one writer anyway.
 */
export async function lockStreams(trx: Knex.Transaction, accountIds: Iterable<string>): Promise<void> {
  if (trx.client.config.client !== 'pg') return;
  const ids = [...new Set(accountIds)];
  if (ids.length === 0) return;
  await lockKeysInOrder(trx, ADVISORY_CLASS, ids);
}

const INSERT_EVENT =
  'insert into forward_events (account_id, device_id, kind, body, created_at) values (?, ?, ?, ?, ?)';
const CHUNK = 200;
/** PostgreSQL: every event in one statement, columns as binary arrays (core/db/pg-arrays.ts); ids drawn in the order given. */
const PG_INSERT_EVENTS = `insert into forward_events (account_id, device_id, kind, body, created_at)
  select a, d, k, b, c from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::int8[]) with ordinality as u(a, d, k, b, c, n) order by n`;

/** Appends events, in the order given (their ids increase in that order). */
export async function insertEvents(trx: Knex.Transaction, events: NewStreamEvent[]): Promise<void> {
  if (events.length === 0) return;
  const conn = await sqliteTransactionConnection(trx);
  if (conn) {
    const insert = keptStatement(conn, INSERT_EVENT);
    for (const e of events) insert.run(e.accountId, e.deviceId, e.kind, e.body, e.createdAt);
    return;
  }
  if (trx.client.config.client === 'pg') {
    await trx.raw(PG_INSERT_EVENTS, [
      pgTextArray(events.map((e) => e.accountId)),
      pgTextArray(events.map((e) => e.deviceId)),
      pgTextArray(events.map((e) => e.kind)),
      pgTextArray(events.map((e) => e.body)),
      pgInt8Array(events.map((e) => e.createdAt)),
    ]);
    return;
  }
  for (let i = 0; i < events.length; i += CHUNK) {
    await trx('forward_events').insert(
      events.slice(i, i + CHUNK).map((e) => ({
        account_id: e.accountId,
        device_id: e.deviceId,
        kind: e.kind,
        body: e.body,
        created_at: e.createdAt,
      })),
    );
  }
}

/** The id of the account's last event (0 when it has none): where a new forward starts. */
export async function streamEnd(db: Q, accountId: string): Promise<number> {
  const r = (await db('forward_events').where({ account_id: accountId }).max({ m: 'id' }).first()) as
    | { m: number | string | null }
    | undefined;
  return r?.m == null ? 0 : Number(r.m);
}

/** The account's events after `afterId`, oldest first. */
const READ_EVENTS =
  'select id, device_id, kind, body, created_at from forward_events where account_id = ? and id > ? order by id limit ?';

/**
 * The account's events after `afterId`, in order, at most `limit`: through the database's hot-read
 * connection (on SQLite a read-only connection of its own, which sees every commit and does not
 * wait for the write connection, busy with the ingest's group commits; on PostgreSQL the pool).
 */
export async function readEvents(db: Db, accountId: string, afterId: number, limit: number): Promise<StreamEvent[]> {
  const rows = await db.read.all(READ_EVENTS, accountId, afterId, limit);
  return rows.map((r) => ({
    id: Number(r.id),
    deviceId: String(r.device_id),
    kind: r.kind as StreamEvent['kind'],
    body: String(r.body),
    createdAt: Number(r.created_at),
  }));
}

/** Which of these devices are in the group now. */
export async function devicesInGroup(db: Q, groupId: string, deviceIds: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const unique = [...new Set(deviceIds)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db('group_devices')
      .where({ group_id: groupId })
      .whereIn('device_id', unique.slice(i, i + 500))
      .select('device_id');
    for (const r of rows) found.add(String(r.device_id));
  }
  return found;
}

const KIND_OF: Record<ForwardEventKind, StreamEvent['kind']> = { locations: 'location', alerts: 'alert' };

/** Messages waiting for the forward: the account's events after its cursor, of its kinds and group. */
export async function pendingCount(
  db: Q,
  f: Pick<Forward, 'accountId' | 'events' | 'groupId'>,
  cursor: number,
  upTo?: number,
): Promise<number> {
  const q = db('forward_events as e')
    .where('e.account_id', f.accountId)
    .andWhere('e.id', '>', cursor)
    .whereIn(
      'e.kind',
      f.events.map((k) => KIND_OF[k]),
    );
  if (upTo !== undefined) q.andWhere('e.id', '<=', upTo);
  if (f.groupId)
    q.whereExists((s) =>
      s
        .select(db.raw('1'))
        .from('group_devices as g')
        .whereRaw('g.device_id = e.device_id')
        .andWhere('g.group_id', f.groupId),
    );
  const r = (await q.count({ n: '*' }).first()) as { n: number | string } | undefined;
  return Number(r?.n ?? 0);
}

/**
 * Moves the cursor forward (never back) while `holder` holds the forward's lease, and renews the
 * lease: false when another instance has taken it (this one stops delivering).
 */
export async function advance(
  db: Q,
  id: string,
  holder: string,
  cursor: number,
  deliveredAt: number | null,
  leaseUntil: number,
): Promise<boolean> {
  const set: Record<string, unknown> = {
    last_event_id: db.raw('CASE WHEN last_event_id < ? THEN ? ELSE last_event_id END', [cursor, cursor]),
    last_error: null,
    failing_since: null,
    lease_until: leaseUntil,
  };
  if (deliveredAt !== null) set.last_delivered_at = deliveredAt;
  return (await db('forwards').where({ id, lease_holder: holder }).update(set)) === 1;
}

/**
 * Records why the last attempt failed (and since when it fails), renewing the lease; `modified`:
 * only while the forward is still that version (what was wrong with its settings, not yet changed).
 */
export async function recordFailure(
  db: Q,
  id: string,
  holder: string,
  error: string,
  since: number,
  leaseUntil: number,
  modified?: number,
): Promise<boolean> {
  const q = db('forwards').where({ id, lease_holder: holder });
  if (modified !== undefined) q.andWhere({ modified });
  return (await q.update({ last_error: error.slice(0, 1000), failing_since: since, lease_until: leaseUntil })) === 1;
}

/** Takes (or keeps) the forward's lease until `until`: whether this holder has it. */
export async function takeLease(db: Q, id: string, holder: string, nowMs: number, until: number): Promise<boolean> {
  const n = await db('forwards')
    .where({ id, enabled: true })
    .andWhere((w) => w.where('lease_holder', holder).orWhere('lease_until', '<', nowMs).orWhereNull('lease_holder'))
    .update({ lease_holder: holder, lease_until: until });
  return n === 1;
}

/** Gives the lease back (stopping, or the forward changed). */
export async function releaseLease(db: Q, id: string, holder: string): Promise<void> {
  await db('forwards').where({ id, lease_holder: holder }).update({ lease_until: 0 });
}

// --- retention -------------------------------------------------------------------------------------

/** The accounts that have events stored, with their first and last event ids. */
export async function streamAccounts(db: Q): Promise<{ accountId: string; first: number; last: number }[]> {
  const rows = await db('forward_events')
    .groupBy('account_id')
    .select('account_id')
    .min({ first: 'id' })
    .max({ last: 'id' });
  return rows.map((r: Record<string, unknown>) => ({
    accountId: String(r.account_id),
    first: Number(r.first),
    last: Number(r.last),
  }));
}

/** The enabled forwards' cursors of an account (none: nobody waits for its events). */
export async function cursorsOf(
  db: Q,
  accountId: string,
): Promise<{ id: string; name: string; cursor: number; events: ForwardEventKind[]; groupId: string | null }[]> {
  const rows = await db('forwards')
    .where({ account_id: accountId, enabled: true })
    .select('id', 'name', 'last_event_id', 'events', 'group_id');
  return rows.map((r: Record<string, unknown>) => ({
    id: String(r.id),
    name: String(r.name),
    cursor: Number(r.last_event_id),
    events: parseJson<ForwardEventKind[]>(r.events, []),
    groupId: (r.group_id as string | null) ?? null,
  }));
}

/** The last of the account's events stored before `beforeMs`, scanning from `afterId` in steps; 0 when none. */
export async function lastStoredBefore(
  db: Q,
  accountId: string,
  afterId: number,
  beforeMs: number,
  step = 1000,
): Promise<number> {
  let boundary = 0;
  let from = afterId;
  for (;;) {
    const rows = await db('forward_events')
      .where({ account_id: accountId })
      .andWhere('id', '>', from)
      .orderBy('id')
      .limit(step)
      .select('id', 'created_at');
    for (const r of rows) {
      if (Number(r.created_at) >= beforeMs) return boundary;
      boundary = Number(r.id);
    }
    if (rows.length < step) return boundary;
    from = boundary;
  }
}

/** The id below which the account holds more than `keep` newer events (0 when it holds fewer). */
export async function beyondNewest(db: Q, accountId: string, keep: number): Promise<number> {
  const r = await db('forward_events')
    .where({ account_id: accountId })
    .orderBy('id', 'desc')
    .offset(keep)
    .limit(1)
    .first('id');
  return r ? Number(r.id) : 0;
}

/**
 * Retention passed over a forward's undelivered events up to `boundary`: its cursor moves there and
 * the number of them it would have sent is added to `dropped`. Returns that number.
 */
export async function dropUpTo(
  db: Q,
  f: { id: string; accountId: string; cursor: number; events: ForwardEventKind[]; groupId: string | null },
  boundary: number,
): Promise<number> {
  if (f.cursor >= boundary) return 0;
  const lost = await pendingCount(db, f, f.cursor, boundary);
  const n = await db('forwards')
    .where({ id: f.id })
    .andWhere('last_event_id', '<', boundary)
    .update({ last_event_id: boundary, dropped: db.raw('dropped + ?', [lost]) });
  return n === 1 ? lost : 0;
}

/** Deletes the account's events up to `upToId`, `chunk` at a time; returns how many. */
export async function deleteEvents(db: Q, accountId: string, upToId: number, chunk = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = (
      await db('forward_events')
        .where({ account_id: accountId })
        .andWhere('id', '<=', upToId)
        .orderBy('id')
        .limit(chunk)
        .select('id')
    ).map((r: { id: number | string }) => Number(r.id));
    if (ids.length === 0) return total;
    await db('forward_events')
      .where('account_id', accountId)
      .andWhere('id', '>=', ids[0])
      .andWhere('id', '<=', ids[ids.length - 1])
      .delete();
    total += ids.length;
    if (ids.length < chunk) return total;
  }
}
