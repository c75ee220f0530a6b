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
import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fsyncSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
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

/**
 * A name of this copy's own beside `file`, for the file while it is written: a fixed `FILE.partial`
 * was removed first, whatever it was (another backup under way, a file of the user's).
 */
function partialName(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.partial`);
}

/** The folder a new file goes into must exist: SQLite's 'unable to open database: FILE.partial' did not say which part was missing. */
function checkFolder(file: string): void {
  const dir = path.dirname(file);
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new BackupError(`the folder ${dir} does not exist; create it, or name a file in a folder that exists`);
  }
  if (!isDir) throw new BackupError(`${dir} is not a folder; name a file in a folder`);
}

/** Copies the database `source` into `target`, a file that must not exist yet; returns its size in bytes of pages. */
export function backupSqlite(source: string, target: string): { pages: number; bytes: number } {
  if (!existsSync(source)) throw new BackupError(`there is no database at ${source} (check TRACKGATE_DATA_DIR)`);
  const into = path.resolve(target);
  checkFolder(into);
  if (existsSync(into))
    throw new BackupError(`${into} exists already; name a new file (a backup never overwrites one)`);
  const partial = partialName(into);
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

/** The same file, whatever the path (a symlink, `..`, a hard link): device and inode. */
function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * The backup may not be the data directory's database (or its WAL or shared-memory file) by any
 * path: a restore renames those aside first, so it then found no backup to copy (ENOENT), and the
 * next start made an empty first account in the empty directory.
 */
export function refuseOwnFiles(dataDir: string, backup: string): void {
  const from = path.resolve(backup);
  const target = sqlitePath(dataDir);
  for (const ext of ['', '-wal', '-shm']) {
    if (sameFile(from, target + ext)) {
      throw new BackupError(
        `${from} is ${target + ext}, the database of TRACKGATE_DATA_DIR itself; name a file trackgate backup wrote elsewhere; nothing was changed`,
      );
    }
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
  refuseOwnFiles(dataDir, from);
  const target = sqlitePath(dataDir);
  let check: string;
  try {
    const conn = new Database(from, { readonly: true, fileMustExist: true });
    try {
      check = String(conn.pragma('quick_check', { simple: true }));
      const migrated = conn
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'knex_migrations'")
        .get();
      if (check === 'ok' && !migrated) check = 'it holds no trackgate schema';
    } finally {
      conn.close();
    }
  } catch (e) {
    check = (e as Error).message;
  }
  if (check !== 'ok')
    throw new BackupError(`${from} is not a whole trackgate database (${check}); nothing was changed`);
  const suffix = `.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
  let keptAs: string | undefined;
  for (const ext of ['', '-wal', '-shm']) {
    if (!existsSync(target + ext)) continue;
    renameSync(target + ext, target + suffix + ext);
    if (ext === '') keptAs = target + suffix;
  }
  const partial = partialName(target);
  copyFileSync(from, partial, constants.COPYFILE_EXCL);
  flush(partial);
  renameSync(partial, target);
  flush(dataDir);
  return { restored: target, keptAs };
}
