import type { Knex } from 'knex';
import type { Account } from '../model/account.js';

type Q = Knex | Knex.Transaction;

const toAccount = (r: Record<string, unknown>): Account => ({
  id: String(r.id),
  name: String(r.name),
  licenses: Number(r.licenses),
  timeZone: String(r.time_zone),
  createdAt: Number(r.created_at),
  retentionDays: r.retention_days === null || r.retention_days === undefined ? null : Number(r.retention_days),
});

export async function insert(db: Q, a: Account): Promise<void> {
  await db('accounts').insert({
    id: a.id,
    name: a.name,
    licenses: a.licenses,
    time_zone: a.timeZone,
    created_at: a.createdAt,
  });
}

export async function findById(db: Q, id: string): Promise<Account | undefined> {
  const r = await db('accounts').where({ id }).first();
  return r ? toAccount(r) : undefined;
}

/** Reads the account and, on PostgreSQL, locks its row until the transaction ends (licence checks). */
export async function findForUpdate(trx: Knex.Transaction, id: string): Promise<Account | undefined> {
  const q = trx('accounts').where({ id }).first();
  const r = trx.client.config.client === 'pg' ? await q.forUpdate() : await q;
  return r ? toAccount(r) : undefined;
}

export async function count(db: Q): Promise<number> {
  const r = await db('accounts').count({ n: '*' }).first();
  return Number(r?.n ?? 0);
}

/** Devices that hold a licence at `nowMs`: not expired. */
export async function countActiveDevices(db: Q, accountId: string, nowMs: number): Promise<number> {
  const r = await db('devices')
    .where({ account_id: accountId })
    .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', nowMs))
    .count({ n: '*' })
    .first();
  return Number(r?.n ?? 0);
}

export async function listIds(db: Q): Promise<string[]> {
  return (await db('accounts').select('id')).map((r: { id: string }) => r.id);
}

export async function setTimeZone(db: Q, id: string, timeZone: string): Promise<void> {
  await db('accounts').where({ id }).update({ time_zone: timeZone });
}

export async function list(db: Q): Promise<Account[]> {
  return (
    await db('accounts')
      .select('*')
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
  ).map(toAccount);
}

export async function update(
  db: Q,
  id: string,
  fields: Partial<Pick<Account, 'name' | 'licenses' | 'timeZone' | 'retentionDays'>>,
): Promise<void> {
  const row: Record<string, unknown> = {};
  if (fields.name !== undefined) row.name = fields.name;
  if (fields.licenses !== undefined) row.licenses = fields.licenses;
  if (fields.timeZone !== undefined) row.time_zone = fields.timeZone;
  if (fields.retentionDays !== undefined) row.retention_days = fields.retentionDays;
  if (Object.keys(row).length) await db('accounts').where({ id }).update(row);
}
