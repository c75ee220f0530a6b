import type { Knex } from 'knex';
import type { Privilege, UserRecord } from '../model/user.js';
import { parseJson, toBool, toJson, toNum } from '../db/json.js';
import type { Db } from '../db/db.js';

type Q = Knex | Knex.Transaction;

const toRecord = (r: Record<string, unknown>): UserRecord => ({
  id: String(r.id),
  accountId: String(r.account_id),
  userName: String(r.user_name),
  name: String(r.name),
  email: String(r.email),
  country: String(r.country),
  timeZone: String(r.time_zone),
  description: (r.description as string | null) ?? null,
  message: (r.message as string | null) ?? null,
  disabled: toBool(r.disabled),
  disabledMessage: (r.disabled_message as string | null) ?? null,
  tags: parseJson<Record<string, string>>(r.tags, {}),
  privileges: parseJson<Privilege[]>(r.privileges, []),
  groupId: (r.group_id as string | null) ?? null,
  fromAt: toNum(r.from_at),
  expiresAt: toNum(r.expires_at),
  passwordHash: (r.password_hash as string | null) ?? null,
  apiKeyHash: String(r.api_key_hash),
  keyVersion: Number(r.key_version),
  creation: Number(r.creation),
  modification: Number(r.modification),
  lastLogin: toNum(r.last_login),
});

const toRow = (u: UserRecord): Record<string, unknown> => ({
  id: u.id,
  account_id: u.accountId,
  user_name: u.userName,
  user_name_key: u.userName.toLowerCase(),
  name: u.name,
  email: u.email,
  country: u.country,
  time_zone: u.timeZone,
  description: u.description,
  message: u.message,
  disabled: u.disabled,
  disabled_message: u.disabledMessage,
  tags: toJson(u.tags),
  privileges: toJson(u.privileges),
  group_id: u.groupId,
  from_at: u.fromAt,
  expires_at: u.expiresAt,
  password_hash: u.passwordHash,
  api_key_hash: u.apiKeyHash,
  key_version: u.keyVersion,
  creation: u.creation,
  modification: u.modification,
  last_login: u.lastLogin,
});

export async function insert(db: Q, u: UserRecord): Promise<void> {
  await db('users').insert(toRow(u));
}

export async function update(db: Q, u: UserRecord): Promise<void> {
  const { id, ...rest } = toRow(u);
  await db('users').where({ id }).update(rest);
}

/** Through the hot-read connection: the token check reads the user on every request it has not cached. */
export async function findById(db: Db, id: string): Promise<UserRecord | undefined> {
  const r = await db.read.first('select * from users where id = ?', id);
  return r ? toRecord(r) : undefined;
}

/** User names are matched without regard to case. */
export async function findByUserName(db: Q, userName: string): Promise<UserRecord | undefined> {
  const r = await db('users').where({ user_name_key: userName.toLowerCase() }).first();
  return r ? toRecord(r) : undefined;
}

export async function listByAccount(db: Q, accountId: string): Promise<UserRecord[]> {
  return (await db('users').where({ account_id: accountId }).orderBy('creation')).map(toRecord);
}

export async function remove(db: Q, id: string): Promise<void> {
  await db('users').where({ id }).delete();
}

export async function touchLastLogin(db: Q, id: string, atMs: number): Promise<void> {
  await db('users').where({ id }).update({ last_login: atMs });
}
