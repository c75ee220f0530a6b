import type { Db } from '../db/db.js';

export async function get(db: Db, key: string): Promise<string | undefined> {
  const row = await db('settings').where({ key }).first('value');
  return row?.value;
}

/** Stores a value only if the key has none yet; returns the value that is now stored. */
export async function setIfAbsent(db: Db, key: string, value: string): Promise<string> {
  await db('settings').insert({ key, value }).onConflict('key').ignore();
  return (await get(db, key)) ?? value;
}

/** Stores a value, replacing the key's previous one. */
export async function put(db: Db, key: string, value: string): Promise<void> {
  await db('settings').insert({ key, value }).onConflict('key').merge();
}
