/** How large the database is, and where PostgreSQL keeps it: what the disk watch (disk.watch.ts) reads. */
import { statSync } from 'node:fs';
import { dbKind, sqliteFile, type Db } from './db.js';

/** SQLite: its file and its write-ahead log (`-wal`); PostgreSQL: pg_database_size of the database in use. */
export async function databaseBytes(db: Db): Promise<number> {
  const file = sqliteFile(db);
  if (file) {
    const size = (f: string) => statSync(f, { throwIfNoEntry: false })?.size ?? 0;
    return size(file) + size(`${file}-wal`);
  }
  if (dbKind(db) !== 'postgres') return 0;
  const { rows } = (await db.raw('select pg_database_size(current_database()) as bytes')) as {
    rows: { bytes: string | number }[];
  };
  return Number(rows[0].bytes);
}

/**
 * PostgreSQL's data directory, when the role may read it (a superuser, or a member of
 * pg_read_all_settings); undefined otherwise, and on SQLite.
 */
export async function postgresDataDirectory(db: Db): Promise<string | undefined> {
  if (dbKind(db) !== 'postgres') return undefined;
  try {
    const { rows } = (await db.raw("select current_setting('data_directory') as dir")) as { rows: { dir: string }[] };
    return rows[0]?.dir || undefined;
  } catch {
    return undefined;
  }
}
