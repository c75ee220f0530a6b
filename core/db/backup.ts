/**
 * `trackgate backup FILE`: a consistent copy of the SQLite database, taken while trackgate runs.
 * Copying `trackgate.sqlite` alone is not one: in WAL mode what was written since the last
 * checkpoint lives in `trackgate.sqlite-wal` (up to 10,000 pages, about 40 MiB, db.ts
 * SQLITE_WAL_CHECKPOINT_PAGES), so a copy of the file alone can hold no table at all, and
 * trackgate started on it makes a new first account over an empty database. `VACUUM INTO` writes
 * one read transaction's snapshot, WAL included, into a new self-contained file
 * (sqlite.org/lang_vacuum.html#vacuuminto); the copy is written under a temporary name, flushed
 * to the disk, then renamed, so an interrupted backup never leaves a file that looks whole.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqlitePath } from './db.js';

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

function flush(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Copies the database `source` into `target`, a file that must not exist yet; returns its size in bytes of pages. */
export function backupSqlite(source: string, target: string): { pages: number; bytes: number } {
  if (!existsSync(source)) throw new BackupError(`there is no database at ${source} (check TRACKGATE_DATA_DIR)`);
  const into = path.resolve(target);
  if (existsSync(into)) throw new BackupError(`${into} exists already; name a new file (a backup never overwrites one)`);
  const partial = `${into}.partial`;
  rmSync(partial, { force: true });
  // busy_timeout: trackgate's own writes hold the database briefly; wait for them, never fail on them
  const conn = new Database(source, { fileMustExist: true, timeout: 10_000 });
  try {
    conn.prepare('VACUUM INTO ?').run(partial);
  } catch (e) {
    rmSync(partial, { force: true });
    const locked = (e as { code?: unknown }).code === 'SQLITE_BUSY';
    throw new BackupError(
      locked
        ? `the database is held exclusively by a running trackgate (it could not create its -shm file: a full disk?); free disk space and restart it, or stop it and copy ${source} alone`
        : `backup failed: ${(e as Error).message}`,
    );
  } finally {
    conn.close();
  }
  flush(partial);
  renameSync(partial, into);
  flush(path.dirname(into));
  const copy = new Database(into, { readonly: true });
  try {
    const pages = Number(copy.pragma('page_count', { simple: true }));
    return { pages, bytes: pages * Number(copy.pragma('page_size', { simple: true })) };
  } finally {
    copy.close();
  }
}

/**
 * `trackgate restore FILE`, trackgate stopped: the backup becomes the data directory's database.
 * The database there, with its WAL and shared-memory files, is renamed aside (`….before-restore-<time>`),
 * never deleted: a WAL left beside a restored file would be replayed into it at the next open, a
 * malformed database that trackgate served without a word. A file that is not a whole trackgate
 * database (its quick_check fails, or it has no migrations table) is refused before anything moves.
 */
export function restoreSqlite(dataDir: string, backup: string, now: Date): { restored: string; keptAs?: string } {
  const from = path.resolve(backup);
  if (!existsSync(from)) throw new BackupError(`there is no file ${from}`);
  let check: string;
  try {
    const conn = new Database(from, { readonly: true, fileMustExist: true });
    try {
      check = String(conn.pragma('quick_check', { simple: true }));
      const migrated = conn.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'knex_migrations'").get();
      if (check === 'ok' && !migrated) check = 'it holds no trackgate schema';
    } finally {
      conn.close();
    }
  } catch (e) {
    check = (e as Error).message;
  }
  if (check !== 'ok') throw new BackupError(`${from} is not a whole trackgate database (${check}); nothing was changed`);
  const target = sqlitePath(dataDir);
  const suffix = `.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
  let keptAs: string | undefined;
  for (const ext of ['', '-wal', '-shm']) {
    if (!existsSync(target + ext)) continue;
    renameSync(target + ext, target + suffix + ext);
    if (ext === '') keptAs = target + suffix;
  }
  const partial = `${target}.partial`;
  copyFileSync(from, partial);
  flush(partial);
  renameSync(partial, target);
  flush(dataDir);
  return { restored: target, keptAs };
}
