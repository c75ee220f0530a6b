import type { Knex } from 'knex';
import type { Zone, ZoneType } from '../model/zone.js';
import { parseJson, toJson, toNum } from '../db/json.js';

type Q = Knex | Knex.Transaction;

const toZone = (r: Record<string, unknown>): Zone => {
  const lat = toNum(r.center_latitude);
  const lon = toNum(r.center_longitude);
  return {
    id: String(r.id),
    accountId: String(r.account_id),
    name: String(r.name),
    type: String(r.type) as ZoneType,
    center: lat === null || lon === null ? null : { latitude: lat, longitude: lon },
    radius: toNum(r.radius),
    polygon: parseJson<[number, number][] | null>(r.polygon, null),
    created: Number(r.created),
  };
};

const toRow = (z: Zone): Record<string, unknown> => ({
  id: z.id,
  account_id: z.accountId,
  name: z.name,
  type: z.type,
  center_latitude: z.center?.latitude ?? null,
  center_longitude: z.center?.longitude ?? null,
  radius: z.radius,
  polygon: z.polygon ? toJson(z.polygon) : null,
  created: z.created,
});

export async function insert(db: Q, z: Zone): Promise<void> {
  await db('zones').insert(toRow(z));
}

export async function update(db: Q, z: Zone): Promise<void> {
  const { id, account_id: _account, created: _created, ...rest } = toRow(z);
  await db('zones').where({ id }).update(rest);
}

export async function findById(db: Q, id: string): Promise<Zone | undefined> {
  const r = await db('zones').where({ id }).first();
  return r ? toZone(r) : undefined;
}

/** Every zone of an account, oldest first: for the REST list and for the rule engine's cache. */
export async function zonesOfAccount(db: Q, accountId: string): Promise<Zone[]> {
  return (
    await db('zones')
      .where({ account_id: accountId })
      .orderBy([{ column: 'created' }, { column: 'id' }])
  ).map(toZone);
}

/** The zones of an account with these ids (ids of other accounts are left out). */
export async function zonesByIds(db: Q, accountId: string, ids: string[]): Promise<Zone[]> {
  if (ids.length === 0) return [];
  return (
    await db('zones')
      .where({ account_id: accountId })
      .whereIn('id', ids)
      .orderBy([{ column: 'created' }, { column: 'id' }])
  ).map(toZone);
}

/**
 * The zone, and on PostgreSQL its row locked until the transaction ends: deleting a zone and
 * naming it in a rule take this lock first, so a rule never ends up naming a deleted zone.
 */
export async function findForUpdate(trx: Knex.Transaction, id: string): Promise<Zone | undefined> {
  const q = trx('zones').where({ id }).first();
  const r = trx.client.config.client === 'pg' ? await q.forUpdate() : await q;
  return r ? toZone(r) : undefined;
}

export async function remove(db: Q, id: string): Promise<void> {
  await db('zones').where({ id }).delete();
}
