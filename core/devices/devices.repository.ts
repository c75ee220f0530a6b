import type { Knex } from 'knex';
import type { DeviceRecord } from '../model/device.js';
import { parseJson, toJson, toNum } from '../db/json.js';
import { keptStatement, nonDurableWrite, type Db } from '../db/db.js';

type Q = Knex | Knex.Transaction;

const toRecord = (r: Record<string, unknown>): DeviceRecord => ({
  id: String(r.id),
  accountId: String(r.account_id),
  name: String(r.name),
  description: (r.description as string | null) ?? null,
  min: (r.min as string | null) ?? null,
  tags: parseJson<Record<string, string>>(r.tags, {}),
  expiresAt: toNum(r.expires_at),
  dailyEmailLimit: Number(r.daily_email_limit),
  dailySmsLimit: Number(r.daily_sms_limit),
  alertEmails: parseJson<string[]>(r.alert_emails, []),
  alertPhones: parseJson<string[]>(r.alert_phones, []),
  protocol: (r.protocol as string | null) ?? null,
  lastConnection: toNum(r.last_connection),
  model: (r.model as string | null) ?? null,
  mqttPasswordHash: (r.mqtt_password_hash as string | null) ?? null,
  creation: Number(r.creation),
  modification: Number(r.modification),
});

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

/** The device, through the hot-read connection: the gateway's and the API's lookup on every frame and request. */
export async function lookup(db: Db, id: string): Promise<DeviceRecord | undefined> {
  const r = await db.read.first('select * from devices where id = ?', id);
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
  if (f.groupId) q.join('group_devices', 'group_devices.device_id', 'devices.id').andWhere('group_devices.group_id', f.groupId);
  return (await q).map(toRecord);
}

/** Group ids of each device. */
export async function groupsOf(db: Q, deviceIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (deviceIds.length === 0) return out;
  const rows = await db('group_devices').whereIn('device_id', deviceIds).orderBy('group_id').select('device_id', 'group_id');
  for (const r of rows) {
    const list = out.get(r.device_id) ?? [];
    list.push(r.group_id);
    out.set(r.device_id, list);
  }
  return out;
}

/** The account a device belongs to, or undefined: the cheap check of who may see it. */
export async function accountOf(db: Db, id: string): Promise<string | undefined> {
  const r = await db.read.first('select account_id from devices where id = ?', id);
  return r ? String(r.account_id) : undefined;
}

export async function isInGroup(db: Db, deviceId: string, groupId: string): Promise<boolean> {
  return (await db.read.first('select 1 as x from group_devices where device_id = ? and group_id = ?', deviceId, groupId)) !== undefined;
}

/** Which of these ids are devices of the account (for references to devices, e.g. an alert rule's). */
export async function idsInAccount(db: Q, accountId: string, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db('devices').whereIn('id', ids.slice(i, i + 500)).andWhere({ account_id: accountId }).select('id');
    for (const r of rows) found.add(String(r.id));
  }
  return found;
}

/** Removes a device and everything recorded for it. */
export async function remove(db: Q, id: string): Promise<void> {
  await db('group_devices').where({ device_id: id }).delete();
  await db('locations').where({ device_id: id }).delete();
  await db('last_locations').where({ device_id: id }).delete();
  await db('alerts').where({ device_id: id }).delete();
  // its notifications still waiting for a retry: nobody is to hear of a device that is gone (kept as suppressed, their daily places held until the day ends)
  await db('outbox').where({ device_id: id, status: 'pending' }).update({ status: 'suppressed', last_error: 'the device was deleted', lease_until: null });
  await db('commands').where({ device_id: id }).delete();
  await db('device_log').where({ device_id: id }).delete();
  await db('rule_states').where({ device_id: id }).delete();
  await db('rule_devices').where({ device_id: id }).delete();
  await db('devices').where({ id }).delete();
}

/** Many devices' protocol and last connection in one transaction (in id order: two writers never wait on each other in a cycle). */
export async function touchConnections(db: Knex, touches: readonly { id: string; protocol: string; atMs: number }[]): Promise<void> {
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
