import type { Knex } from 'knex';

export async function get(db: Knex, key: string): Promise<string | undefined> {
  const row = await db('settings').where({ key }).first('value');
  return row?.value;
}

/**
 * Stores a value only if the key has none yet; returns the value that is now stored. A key that has
 * one costs no write (a start on a database that refuses writes, a full disk, reads it).
 */
export async function setIfAbsent(db: Knex, key: string, value: string): Promise<string> {
  const stored = await get(db, key);
  if (stored !== undefined) return stored;
  await db('settings').insert({ key, value }).onConflict('key').ignore();
  return (await get(db, key)) ?? value;
}

/** Stores a value, replacing the key's previous one. */
export async function put(db: Knex, key: string, value: string): Promise<void> {
  await db('settings').insert({ key, value }).onConflict('key').merge();
}
