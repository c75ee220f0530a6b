/**
 * The core's storage at start: the data directory's lock (SQLite), the database opened and
 * migrated, and what the start-up log says about it.
 */
import { openDb, migrate, pendingMigrations, ping, closeDb, sqlitePath, type Db } from '../core/db/db.js';
import { describeStorageError, isSqliteSharedMemoryRefused, isStorageUnavailable } from '../core/db/storage-errors.js';
import { lockDataDir } from '../core/db/data-dir.lock.js';
import type { Logger } from '../core/logger.js';
import { ConfigError, type Config } from '../config/config.js';

/**
 * Opens the database and brings its schema up to date; a database that does not answer names the
 * variable. A database that answers reads but refuses writes (a full disk, a read-only file
 * system) opens: only a migration it needs and cannot write stops the start.
 */
export async function openStorage(config: Readonly<Config>, logger?: Logger): Promise<Db> {
  const db = await openAnswering(config, logger);
  let pending: string[] = [];
  try {
    pending = await pendingMigrations(db);
    if (pending.length) await migrate(db);
  } catch (e) {
    await closeDb(db).catch(() => {});
    if (pending.length && isStorageUnavailable(e)) {
      throw new Error(
        `the database needs ${pending.length} migration(s) (${pending.join(', ')}) and refuses to write them (${describeStorageError(e).split('\n')[0]}); free disk space (or make it writable) and start again`,
        { cause: e },
      );
    }
    throw e;
  }
  return db;
}

/** A database that answers a ping; SQLite held exclusively when it cannot make its shared-memory file. */
async function openAnswering(config: Readonly<Config>, logger?: Logger): Promise<Db> {
  const variable = config.databaseUrl ? 'TRACKGATE_DATABASE_URL' : 'TRACKGATE_DATA_DIR';
  const answering = async (sqliteExclusive: boolean): Promise<Db> => {
    const db = openDb({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      sqliteExclusive,
      poolMax: config.databasePool,
    });
    try {
      await ping(db);
      return db;
    } catch (e) {
      await closeDb(db).catch(() => {});
      throw e;
    }
  };
  const unanswered = (e: unknown) =>
    new ConfigError(variable, `the database does not answer (${(e as Error).message.split('\n')[0]})`);
  try {
    return await answering(false);
  } catch (e) {
    // A WAL database stopped cleanly has no -shm file; on a disk without its 32 KiB SQLite cannot
    // open it shared, but can exclusively, the WAL index in this process's memory.
    if (config.databaseUrl || !isSqliteSharedMemoryRefused(e)) throw unanswered(e);
    const db = await answering(true).catch((again: unknown) => {
      throw unanswered(again);
    });
    logger?.warn(
      { err: (e as Error).message, code: (e as { code?: string }).code },
      'SQLite cannot create its shared-memory file (-shm; a full disk?): the database is held exclusively by this process until it stops: `trackgate account` commands cannot open it meanwhile',
    );
    return db;
  }
}

/** The server's storage: on SQLite the data directory locked first (one server per directory); `close` closes and unlocks. */
export async function openServerStorage(
  config: Readonly<Config>,
  logger: Logger,
): Promise<{ db: Db; close(): Promise<void> }> {
  let unlock: (() => void) | undefined;
  if (!config.databaseUrl) {
    try {
      unlock = lockDataDir(config.dataDir);
    } catch (e) {
      throw new ConfigError('TRACKGATE_DATA_DIR', `${config.dataDir} ${(e as Error).message}`);
    }
  }
  const db = await openStorage(config, logger).catch((e: unknown) => {
    unlock?.();
    throw e;
  });
  return {
    db,
    async close() {
      await closeDb(db);
      unlock?.();
    },
  };
}

/**
 * What the start-up log says about the storage and Redis in use: kind and where, never a
 * password (only the parts of each URL an operator needs to find the server).
 */
export function describeBackends(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'redisUrl' | 'redisPrefix'>): {
  storage: Record<string, unknown>;
  redis: Record<string, unknown>;
} {
  const where = (url: string, defaultPort: number) => {
    try {
      const u = new URL(url);
      return {
        host: u.hostname,
        port: Number(u.port || defaultPort),
        path: decodeURIComponent(u.pathname.slice(1)),
        user: decodeURIComponent(u.username),
      };
    } catch {
      return { host: 'unreadable URL', port: defaultPort, path: '', user: '' };
    }
  };
  let storage: Record<string, unknown>;
  if (config.databaseUrl) {
    const pg = where(config.databaseUrl, 5432);
    storage = { kind: 'postgres', host: pg.host, port: pg.port, database: pg.path, ...(pg.user && { user: pg.user }) };
  } else {
    storage = { kind: 'sqlite', file: sqlitePath(config.dataDir) };
  }
  let redis: Record<string, unknown> = { enabled: false };
  if (config.redisUrl) {
    const r = where(config.redisUrl, 6379);
    redis = {
      enabled: true,
      host: r.host,
      port: r.port,
      db: Number(r.path || 0),
      tls: config.redisUrl.startsWith('rediss:'),
      prefix: config.redisPrefix,
    };
  }
  return { storage, redis };
}

/**
 * Whether the PostgreSQL server of `databaseUrl` runs on this machine (a loopback address, or a
 * Unix socket: no host, or a `host=/path` parameter), so that the file system of its data
 * directory can be measured here (core/db/disk.watch.ts). A container's own loopback counts: the
 * data directory path is then checked to exist here before it is measured.
 */
export function databaseOnThisHost(databaseUrl: string | undefined): boolean {
  if (!databaseUrl) return false;
  try {
    const u = new URL(databaseUrl);
    const host = u.searchParams.get('host') ?? u.hostname;
    return host === '' || host.startsWith('/') || ['localhost', '127.0.0.1', '[::1]', '::1'].includes(host);
  } catch {
    return false;
  }
}
