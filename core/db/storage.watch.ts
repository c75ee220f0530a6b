/**
 * Whether storage takes writes, beside what the last write of locations said (core/ingest), for
 * GET /api/health and for what is acknowledged (docs/scaling.md "A full disk", "The database file
 * deleted"). A write probe runs at start and every WRITE_PROBE_MS while writes are refused. On
 * SQLite, a database file deleted or replaced while it is open would take writes that are all lost
 * at the next start, so its path is checked (every FILE_CHECK_MS, and after each commit before
 * anything is acknowledged); once it is gone, every write is refused (`PRAGMA query_only`).
 */
import { statSync } from 'node:fs';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import * as settings from '../settings/settings.repository.js';
import { refuseWrites, sqliteFile, type Db } from './db.js';
import { describeStorageError, isStorageUnavailable } from './storage-errors.js';

/** how often a refused write probe is tried again */
export const WRITE_PROBE_MS = 5_000;
/** how often the SQLite file's path is compared with the file open */
export const FILE_CHECK_MS = 2_000;
/** how long the start waits for the first probe (a PostgreSQL commit may hang: a synchronous standby gone) */
const FIRST_PROBE_WAIT_MS = 1_000;

const PROBE_KEY = 'storage_write_probe';

export interface StorageWatch {
  /** Why storage refuses writes now (its file lost, or the last probe refused), else undefined. */
  problem(): string | undefined;
  /**
   * Compares now (one stat) the SQLite file's path with the file open. Once they differ, the error
   * to fail a write with (its code SQLite's own for a database moved while open,
   * SQLITE_READONLY_DBMOVED: a storage outage, not a fault); undefined until then, and on PostgreSQL.
   */
  fileLost(): Error | undefined;
  /** Stops the checks (after the probe running, if one is). */
  stop(): Promise<void>;
}

export interface StorageWatchDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  probeMs?: number;
  fileCheckMs?: number;
}

type Identity = { dev: bigint; ino: bigint };

function identity(file: string): Identity | undefined {
  const st = statSync(file, { bigint: true, throwIfNoEntry: false });
  return st && { dev: st.dev, ino: st.ino };
}

/** The error every write fails with once the SQLite file is gone; logs it and refuses writes to the file open. */
function markFileLost(db: Db, logger: Logger, file: string, what: string): Error {
  const lost = Object.assign(
    new Error(
      `the database file ${file} was ${what} while trackgate ran: what is written now would be lost at the next start, so writes are refused until trackgate is restarted`,
    ),
    { code: 'SQLITE_READONLY_DBMOVED' },
  );
  logger.error(
    { file, err: lost.message },
    'the database file is gone: writes are refused (trackers get no ack, REST writes 503), reads answer from the file still open; put the file back and restart trackgate (a start opens what is at the path: a new, empty database if nothing)',
  );
  refuseWrites(db).catch((e: Error) =>
    logger.warn({ err: e.message }, 'refusing writes to the lost database file failed'),
  );
  return lost;
}

export async function watchStorage(deps: StorageWatchDeps): Promise<StorageWatch> {
  const { db, clock, logger } = deps;
  const probeMs = deps.probeMs ?? WRITE_PROBE_MS;
  const timers: NodeJS.Timeout[] = [];

  let refused: string | undefined;
  let probing: Promise<void> | undefined;
  function probe(): Promise<void> {
    probing ??= tryWrite().finally(() => {
      probing = undefined;
    });
    return probing;
  }
  async function tryWrite(): Promise<void> {
    try {
      await settings.put(db, PROBE_KEY, String(clock.now().getTime()));
      if (refused) logger.info({}, 'storage takes writes again');
      refused = undefined;
    } catch (e) {
      if (!isStorageUnavailable(e)) {
        logger.warn({ err: e }, 'storage write probe failed');
        return;
      }
      if (!refused && !lost)
        logger.error(
          { err: describeStorageError(e) },
          `storage refuses writes: reads are served, trackers are not acknowledged (they resend) until it takes them again, tried every ${probeMs / 1000} s`,
        );
      refused = describeStorageError(e);
    }
  }

  // the file as the start opened it: the writer connection is open (migrations ran on it)
  const file = sqliteFile(db);
  const opened = file ? identity(file) : undefined;
  let lost: Error | undefined;
  function fileLost(): Error | undefined {
    if (lost || !file || !opened) return lost;
    const now = identity(file);
    if (now && now.dev === opened.dev && now.ino === opened.ino) return undefined;
    lost = markFileLost(db, logger, file, now ? 'replaced by another file' : 'deleted (or moved)');
    return lost;
  }

  const first = probe();
  const probeTimer = setInterval(() => {
    if (refused && !lost) void probe();
  }, probeMs);
  probeTimer.unref();
  timers.push(probeTimer);
  if (opened) {
    const fileTimer = setInterval(() => {
      if (fileLost()) clearInterval(fileTimer);
    }, deps.fileCheckMs ?? FILE_CHECK_MS);
    fileTimer.unref();
    timers.push(fileTimer);
  }
  await Promise.race([first, new Promise((resolve) => setTimeout(resolve, FIRST_PROBE_WAIT_MS).unref())]);

  return {
    problem: () => lost?.message ?? refused,
    fileLost,
    async stop() {
      for (const t of timers) clearInterval(t);
      await probing;
    },
  };
}
