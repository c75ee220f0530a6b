import type { Knex } from 'knex';
import type { DeviceRecord } from '../model/device.js';
import { parseJson, toJson, toNum } from '../db/json.js';
import { keptStatement, nonDurableWrite } from '../db/db.js';
import { deviceFromRow as toRecord } from '../access/device-scope.repository.js';

// read where access decides who sees a device (core/access/ sits below this folder)
export { lookup, accountOf, isInGroup } from '../access/device-scope.repository.js';

type Q = Knex | Knex.Transaction;

const toRow = (d: DeviceRecord): Record<string, unknown> => ({
  id: d.id,
  account_id: d.accountId,
  name: d.name,
  description: d.description,
  min: d.min,
  tags: toJson(d.tags),
  expires_at: d.expiresAt,
  daily_email_limit: d.dailyEmailLimit,
  daily_sms_limit: d.dailySmsLimit,
  alert_emails: toJson(d.alertEmails),
  alert_phones: toJson(d.alertPhones),
  protocol: d.protocol,
  last_connection: d.lastConnection,
  model: d.model,
  protocol_options: Object.keys(d.protocolOptions).length ? toJson(d.protocolOptions) : null,
  mqtt_password_hash: d.mqttPasswordHash,
  creation: d.creation,
  modification: d.modification,
});

/**
 * Inserts a new device; false when one with its id exists, also when it was committed by another
 * transaction (another instance) after this one looked: that insert waits for it, then skips.
 */
export async function insert(db: Q, d: DeviceRecord): Promise<boolean> {
  const rows = await db('devices').insert(toRow(d)).onConflict('id').ignore().returning('id');
  return rows.length === 1;
}

export async function update(db: Q, d: DeviceRecord): Promise<void> {
  const { id, ...rest } = toRow(d);
  await db('devices').where({ id }).update(rest);
}

/** The device as a transaction (or a write about to start one) sees it. */
export async function findById(db: Q, id: string): Promise<DeviceRecord | undefined> {
  const r = await db('devices').where({ id }).first();
  return r ? toRecord(r) : undefined;
}

export interface ListFilter {
  accountId: string;
  status: 'active' | 'expired' | 'all';
  nowMs: number;
  /** only devices of this group */
  groupId?: string | null;
}

export async function list(db: Q, f: ListFilter): Promise<DeviceRecord[]> {
  const q = db('devices').where('devices.account_id', f.accountId).select('devices.*').orderBy('devices.id');
  if (f.status === 'active') q.andWhere((w) => w.whereNull('expires_at').orWhere('expires_at', '>', f.nowMs));
  if (f.status === 'expired') q.andWhere('expires_at', '<=', f.nowMs);
  if (f.groupId)
    q.join('group_devices', 'group_devices.device_id', 'devices.id').andWhere('group_devices.group_id', f.groupId);
  return (await q).map(toRecord);
}

/** Group ids of each device. */
export async function groupsOf(db: Q, deviceIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (deviceIds.length === 0) return out;
  const rows = await db('group_devices')
    .whereIn('device_id', deviceIds)
    .orderBy('group_id')
    .select('device_id', 'group_id');
  for (const r of rows) {
    const list = out.get(r.device_id) ?? [];
    list.push(r.group_id);
    out.set(r.device_id, list);
  }
  return out;
}

/** Which of these ids are devices of the account (for references to devices, e.g. an alert rule's). */
export async function idsInAccount(db: Q, accountId: string, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db('devices')
      .whereIn('id', ids.slice(i, i + 500))
      .andWhere({ account_id: accountId })
      .select('id');
    for (const r of rows) found.add(String(r.id));
  }
  return found;
}

/** Removes a device and everything recorded for it. */
export async function remove(db: Q, id: string): Promise<void> {
  await db('group_devices').where({ device_id: id }).delete();
  await db('locations').where({ device_id: id }).delete();
  await db('last_locations').where({ device_id: id }).delete();
  await db('device_distance').where({ device_id: id }).delete();
  await db('report_days').where({ device_id: id }).delete();
  await db('report_marks').where({ device_id: id }).delete();
  await db('alerts').where({ device_id: id }).delete();
  // its notifications still waiting for a retry: nobody is to hear of a device that is gone (kept as suppressed, their daily places held until the day ends)
  await db('outbox')
    .where({ device_id: id, status: 'pending' })
    .update({ status: 'suppressed', last_error: 'the device was deleted', lease_until: null });
  await db('commands').where({ device_id: id }).delete();
  await db('device_log').where({ device_id: id }).delete();
  await db('rule_states').where({ device_id: id }).delete();
  await db('rule_devices').where({ device_id: id }).delete();
  await db('devices').where({ id }).delete();
}

/**
 * Takes a deleted device out of the `devices` lists of its account's alert rules (null once empty: a
 * rule left with neither devices nor a group watches nothing until it is given some). Written here
 * with the device's removal, as core/rules/ sits above this folder. Returns how many rules changed.
 */
export async function forgetInRules(db: Q, accountId: string, deviceId: string): Promise<number> {
  let changed = 0;
  for (const r of await db('alert_rules')
    .where({ account_id: accountId })
    .whereNotNull('devices')
    .select('id', 'devices')) {
    const watched = parseJson<string[] | null>(r.devices, null);
    if (!watched?.includes(deviceId)) continue;
    const left = watched.filter((d) => d !== deviceId);
    await db('alert_rules')
      .where({ id: r.id })
      .update({ devices: left.length ? toJson(left) : null });
    changed++;
  }
  return changed;
}

/** Many devices' protocol and last connection in one transaction (in id order: two writers never wait on each other in a cycle). */
export async function touchConnections(
  db: Knex,
  touches: readonly { id: string; protocol: string; atMs: number }[],
): Promise<void> {
  if (touches.length === 0) return;
  const sorted = [...touches].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // a last connection is bookkeeping: the next connection writes it again, and no acknowledgement waits for it
  await nonDurableWrite(db, {
    sqlite(conn) {
      const update = keptStatement(conn, 'update devices set protocol = ?, last_connection = ? where id = ?');
      for (const t of sorted) update.run(t.protocol, t.atMs, t.id);
    },
    async postgres(trx) {
      for (let i = 0; i < sorted.length; i += 5000) {
        const part = sorted.slice(i, i + 5000);
        await trx.raw(
          'update devices as d set protocol = v.protocol, last_connection = v.at from (select unnest(?::text[]) as id, unnest(?::text[]) as protocol, unnest(?::bigint[]) as at) as v where d.id = v.id',
          [part.map((t) => t.id), part.map((t) => t.protocol), part.map((t) => t.atMs)],
        );
      }
    },
  });
}

/** Every device of an account with its expiry: to (re)build the licence store. */
export async function licenseHolders(db: Q, accountId: string): Promise<{ id: string; expiresAt: number | null }[]> {
  const rows = await db('devices').where({ account_id: accountId }).select('id', 'expires_at');
  return rows.map((r: Record<string, unknown>) => ({ id: String(r.id), expiresAt: toNum(r.expires_at) }));
}

/** Which of these ids any device has (of any account: an id is unique across accounts). */
export async function existingIds(db: Q, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    for (const r of await db('devices')
      .whereIn('id', ids.slice(i, i + 500))
      .select('id'))
      found.add(String(r.id));
  }
  return found;
}

/** rows per INSERT: SQLite takes at most 500 terms in the compound SELECT knex makes of a multi-row insert */
const INSERT_CHUNK = 200;

/**
 * Inserts new devices and the group memberships of those inserted; returns the ids inserted. An id
 * taken meanwhile (committed by another transaction after the caller looked) is skipped, as insert does.
 */
export async function insertAll(
  db: Q,
  records: DeviceRecord[],
  members: { groupId: string; deviceId: string }[],
): Promise<Set<string>> {
  const inserted = new Set<string>();
  for (let i = 0; i < records.length; i += INSERT_CHUNK) {
    const rows = await db('devices')
      .insert(records.slice(i, i + INSERT_CHUNK).map(toRow))
      .onConflict('id')
      .ignore()
      .returning('id');
    for (const r of rows as ({ id: string } | string)[]) inserted.add(typeof r === 'string' ? r : String(r.id));
  }
  const kept = members.filter((m) => inserted.has(m.deviceId));
  for (let i = 0; i < kept.length; i += INSERT_CHUNK)
    await db('group_devices').insert(
      kept.slice(i, i + INSERT_CHUNK).map((m) => ({ group_id: m.groupId, device_id: m.deviceId })),
    );
  return inserted;
}
