/**
 * One trackgate process per SQLite data directory: its daily counters, licences and remembered
 * last locations assume it is the only writer. The directory is held by an OS lock, a POSIX
 * record lock (fcntl) on `trackgate.lock` that SQLite takes: the kernel drops it when the holder
 * ends however it ends (a crash, SIGKILL), and it holds across PID namespaces on one host (two
 * containers sharing a volume, each trackgate pid 1). A pid test could not: a pid of another
 * namespace names nothing, or someone else, here. `trackgate.pid` beside it names the holder for
 * operators and for the refusal; it proves nothing.
 */
import { lstatSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { makeDataDir } from './data-dir.js';

const LOCK_FILE = 'trackgate.lock';
const PID_FILE = 'trackgate.pid';

/** a write that found no room on the disk (or in the user's quota) */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** The pid marking the directory: a file's text or a link's target (written on a full disk, markPid). */
function holderText(file: string): string {
  return lstatSync(file).isSymbolicLink() ? readlinkSync(file) : readFileSync(file, 'utf8');
}

/**
 * Writes this process's pid into the pid file; on a disk with no free block, as the target of a
 * symbolic link of that name, which takes no data block (ext4, XFS and tmpfs keep a short target in
 * the inode): a restart on a full disk must come up (docs/scaling.md "Storage and scaling out").
 */
function markPid(file: string, own: string): void {
  // a link left by an earlier start would be followed by the write
  rmSync(file, { force: true });
  try {
    writeFileSync(file, own);
  } catch (e) {
    if (!NO_SPACE.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
    rmSync(file, { force: true });
    symlinkSync(own, file);
  }
}

/** The pid the holder wrote, as its own PID namespace numbers it; undefined when there is none to read. */
function holderPid(file: string): number | undefined {
  try {
    const pid = Number(holderText(file).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the write lock of `file` for as long as the returned connection is open. In EXCLUSIVE
 * locking mode SQLite keeps the lock of its first write until the connection closes
 * (sqlite.org/pragma.html#pragma_locking_mode); busy_timeout 0: a held lock is SQLITE_BUSY at once.
 * The rollback journal stays in memory, so no journal file is left beside the lock file.
 */
function takeLock(file: string): Database.Database {
  const conn = new Database(file, { timeout: 0 });
  try {
    conn.pragma('locking_mode = EXCLUSIVE');
    conn.pragma('journal_mode = MEMORY');
    conn.exec('BEGIN EXCLUSIVE');
    conn.pragma(`user_version = ${process.pid}`);
    conn.exec('COMMIT');
    return conn;
  } catch (e) {
    conn.close();
    throw e;
  }
}

/** Marks `dir` as this process's; returns the release. Throws while another process (or another start in this one) holds it. */
export function lockDataDir(dir: string): () => void {
  makeDataDir(dir);
  const pidFile = path.join(dir, PID_FILE);
  let lock: Database.Database | undefined;
  try {
    lock = takeLock(path.join(dir, LOCK_FILE));
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'SQLITE_BUSY') throw e;
    const holder = holderPid(pidFile);
    throw new Error(
      `is in use by another trackgate process${holder ? ` (pid ${holder})` : ''}; run one process per data directory`,
    );
  }
  const own = String(process.pid);
  markPid(pidFile, own);
  return () => {
    if (!lock) return;
    try {
      if (holderText(pidFile).trim() === own) unlinkSync(pidFile);
    } catch {
      /* already gone */
    }
    lock.close();
    lock = undefined;
  };
}
