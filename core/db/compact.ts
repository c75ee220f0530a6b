/**
 * `trackgate compact`, trackgate stopped: rewrites the SQLite database with `auto_vacuum =
 * INCREMENTAL` (sqlite.org/pragma.html#pragma_auto_vacuum: the mode of an existing file changes
 * only through a VACUUM), so that a file made by a version before retention gives the pages
 * retention frees back to the file system, as a new file does. The VACUUM writes a copy of the
 * whole database (a temporary file and the WAL), so it is refused up front when the file system
 * has less free space than twice the file: a VACUUM stopped by a full disk leaves the database as it
 * was, but wastes the time it took.
 */
import { existsSync, statfsSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export class CompactError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CompactError';
  }
}

export interface CompactResult {
  file: string;
  autoVacuum: 'incremental';
  /** the mode the file had before: 'none' or 'full' (rewritten), or 'incremental' (then only its free pages given back) */
  was: 'none' | 'full' | 'incremental';
  bytesBefore: number;
  bytesAfter: number;
}

const MODES = ['none', 'full', 'incremental'] as const;

const sizeOf = (file: string): number =>
  [file, `${file}-wal`].reduce((n, f) => n + (existsSync(f) ? statSync(f).size : 0), 0);

/** Converts the database `file` to incremental auto-vacuum, compacting it; `freeBytes` is for tests. */
export function compactSqlite(file: string, freeBytes?: number): CompactResult {
  if (!existsSync(file)) throw new CompactError(`there is no database at ${file}`);
  const bytesBefore = sizeOf(file);
  const conn = new Database(file, { fileMustExist: true });
  try {
    conn.pragma('busy_timeout = 5000');
    const was = MODES[Number(conn.pragma('auto_vacuum', { simple: true }))] ?? 'none';
    if (was === 'incremental') {
      conn.pragma('incremental_vacuum');
    } else {
      const fs = statfsSync(path.dirname(file));
      const free = freeBytes ?? fs.bavail * fs.bsize;
      if (free < 2 * bytesBefore)
        throw new CompactError(
          `compacting ${file} (${bytesBefore} bytes) needs about twice its size free; the file system has ${free} bytes free. Nothing was changed`,
        );
      conn.pragma('wal_checkpoint(TRUNCATE)');
      conn.pragma('auto_vacuum = INCREMENTAL');
      conn.exec('VACUUM');
    }
    conn.pragma('wal_checkpoint(TRUNCATE)');
    const now = Number(conn.pragma('auto_vacuum', { simple: true }));
    if (now !== 2) throw new CompactError(`${file}: auto_vacuum is still ${MODES[now] ?? now} after the VACUUM`);
    return { file, autoVacuum: 'incremental', was, bytesBefore, bytesAfter: sizeOf(file) };
  } finally {
    conn.close();
  }
}
