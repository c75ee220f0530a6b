import type { Knex } from 'knex';
import type { Group } from '../model/group.js';

type Q = Knex | Knex.Transaction;

export interface GroupRecord {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  creation: number;
  lastModified: number;
}

const toRecord = (r: Record<string, unknown>): GroupRecord => ({
  id: String(r.id),
  accountId: String(r.account_id),
  name: String(r.name),
  description: (r.description as string | null) ?? null,
  creation: Number(r.creation),
  lastModified: Number(r.last_modified),
});

export async function insert(db: Q, g: GroupRecord): Promise<void> {
  await db('groups').insert({
    id: g.id,
    account_id: g.accountId,
    name: g.name,
    description: g.description,
    creation: g.creation,
    last_modified: g.lastModified,
  });
}

export async function update(db: Q, g: GroupRecord): Promise<void> {
  await db('groups')
    .where({ id: g.id })
    .update({ name: g.name, description: g.description, last_modified: g.lastModified });
}

export async function findById(db: Q, id: string): Promise<GroupRecord | undefined> {
  const r = await db('groups').where({ id }).first();
  return r ? toRecord(r) : undefined;
}

export async function listByAccount(db: Q, accountId: string): Promise<GroupRecord[]> {
  return (await db('groups').where({ account_id: accountId }).orderBy('creation')).map(toRecord);
}

export async function devicesOf(db: Q, groupIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return out;
  const rows = await db('group_devices')
    .whereIn('group_id', groupIds)
    .orderBy('device_id')
    .select('group_id', 'device_id');
  for (const r of rows) out.get(r.group_id)?.push(r.device_id);
  return out;
}

/** rows per INSERT: SQLite takes at most 500 terms in the compound SELECT knex makes of a multi-row insert */
const INSERT_CHUNK = 200;

export async function setDevices(db: Q, groupId: string, deviceIds: string[]): Promise<void> {
  await db('group_devices').where({ group_id: groupId }).delete();
  for (let i = 0; i < deviceIds.length; i += INSERT_CHUNK) {
    await db('group_devices').insert(
      deviceIds.slice(i, i + INSERT_CHUNK).map((d) => ({ group_id: groupId, device_id: d })),
    );
  }
}

export async function remove(db: Q, id: string): Promise<void> {
  await db('group_devices').where({ group_id: id }).delete();
  await db('groups').where({ id }).delete();
}

// What refers to a group and so keeps it from being deleted (GROUP_IN_USE). Read here, in the
// folder below users, rules and forwards, which all name groups.

/** The names and ids of the users restricted to a group. */
export async function usersRestrictedTo(db: Q, groupId: string): Promise<{ id: string; name: string }[]> {
  return (await db('users').where({ group_id: groupId }).orderBy('creation').select('id', 'name')) as {
    id: string;
    name: string;
  }[];
}

const BY_CREATION = [{ column: 'created' }, { column: 'id' }];

/** The names of the alert rules that watch a group (at most `limit`), oldest first. */
export async function ruleNamesUsing(db: Q, groupId: string, limit = 5): Promise<string[]> {
  return (await db('alert_rules').where({ group_id: groupId }).orderBy(BY_CREATION).limit(limit).select('name')).map(
    (r: { name: string }) => r.name,
  );
}

/** The names of the forwards that deliver only this group's devices, oldest first. */
export async function forwardNamesUsing(db: Q, groupId: string): Promise<string[]> {
  return (await db('forwards').where({ group_id: groupId }).orderBy(BY_CREATION).select('name')).map(
    (r: { name: string }) => r.name,
  );
}

export const toGroup = (g: GroupRecord, devices: string[]): Group => ({
  id: g.id,
  name: g.name,
  description: g.description,
  devices,
  creation: new Date(g.creation).toISOString(),
  lastModified: new Date(g.lastModified).toISOString(),
});
