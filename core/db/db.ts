/**
 * The database handle: knex on better-sqlite3 (embedded default, WAL) or on PostgreSQL.
 * Timestamps are stored as integer milliseconds since the epoch in both, so comparisons and
 * indexes behave the same everywhere.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import Database from 'better-sqlite3';
import { migrationSource } from './migrations/index.js';
import { makeDataDir } from './data-dir.js';

export type DbKind = 'sqlite' | 'postgres';

type Row = Record<string, unknown>;

/**
 * Hot reads: the few lookups made on every request or frame (a device, a user, a last location),
 * outside any transaction. On SQLite a second, read-only connection with its prepared statements
 * kept, so a lookup costs microseconds instead of a knex round trip; in WAL mode it sees every
 * committed transaction. On PostgreSQL the same pool as everything else.
 */
export interface Reads {
  /** The first row `sql` selects (`?` placeholders), or undefined. */
  first(sql: string, ...params: unknown[]): Promise<Row | undefined>;
  /** Every row `sql` selects (`?` placeholders). */
  all(sql: string, ...params: unknown[]): Promise<Row[]>;
  close(): void;
}

/**
 * The storage: knex for writes, transactions and every other read, and `read` for hot reads. A
 * transaction has no `read` (what it reads must include its own writes), so a repository function
 * that reads through `read` takes a Db, and the compiler refuses a transaction there.
 */
export interface Db extends Knex {
  readonly read: Reads;
}

/** The SQLite database's file name in the data directory (docs/contract.md: TRACKGATE_DATA_DIR). */
export const SQLITE_FILE = 'trackgate.sqlite';

/** The SQLite database of the data directory `dataDir`. */
export function sqlitePath(dataDir: string): string {
  return path.join(dataDir, SQLITE_FILE);
}

export interface DbOptions {
  /** postgres://… ; absent: SQLite under dataDir */
  databaseUrl?: string;
  dataDir?: string;
  /** SQLite file name inside dataDir, or ':memory:' */
  sqliteFile?: string;
  /**
   * SQLite: hold the database file with an exclusive lock (`locking_mode = EXCLUSIVE`), the WAL
   * index in this process's memory instead of the shared `-shm` file, and no hot-read connection
   * (see openStorage in server/storage.ts: a disk too full to create the `-shm` file).
   */
  sqliteExclusive?: boolean;
  poolMax?: number;
}

export function dbKind(db: Knex): DbKind {
  return db.client.config.client === 'pg' ? 'postgres' : 'sqlite';
}

// knex prints connection failures itself; the caller reports them once, in its own words.
const quiet = { warn() {}, error() {}, deprecate() {}, debug() {} };

const INT8_OID = 20;
/**
 * Type parsers of this pool's connections. PostgreSQL returns int8 as strings by default; our int8
 * columns are epoch milliseconds and counters, all far below 2^53.
 */
const pgTypes: Knex.PgCustomTypesConfig = {
  getTypeParser: (oid, format) =>
    oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text' | 'binary'),
};

/** Hot reads on PostgreSQL: the pool, through knex. */
function poolReads(knex: Knex): Reads {
  return {
    first: async (sql, ...params) => ((await knex.raw(sql, params as Knex.RawBinding[])) as { rows: Row[] }).rows[0],
    all: async (sql, ...params) => ((await knex.raw(sql, params as Knex.RawBinding[])) as { rows: Row[] }).rows,
    close() {},
  };
}

/**
 * Hot reads on SQLite: a read-only connection to the file, opened at the first read once the file
 * exists (until then, for ':memory:' and for a writer that holds the file exclusively, the one knex
 * connection answers).
 */
function sqliteReads(knex: Knex, filename: string, shared: boolean): Reads {
  let reader: Database.Database | undefined;
  let closed = false;
  const statements = new Map<string, Database.Statement>();
  /** The statement on the read-only connection, or undefined while there is no file to open yet (then the pool answers). */
  function statement(sql: string): Database.Statement | undefined {
    if (closed) throw new Error('the database is closed');
    if (!reader && shared && filename !== ':memory:' && existsSync(filename))
      reader = new Database(filename, { readonly: true });
    if (!reader) return undefined;
    let st = statements.get(sql);
    if (!st) statements.set(sql, (st = reader.prepare(sql)));
    return st;
  }
  return {
    async first(sql, ...params) {
      const st = statement(sql);
      if (!st) return ((await knex.raw(sql, params as Knex.RawBinding[])) as Row[])[0];
      return st.get(...params) as Row | undefined;
    },
    async all(sql, ...params) {
      const st = statement(sql);
      if (!st) return (await knex.raw(sql, params as Knex.RawBinding[])) as Row[];
      return st.all(...params) as Row[];
    },
    close() {
      closed = true;
      reader?.close();
      reader = undefined;
      statements.clear();
    },
  };
}

/** The SQLite writer's durability: every commit reaches the disk before it is acknowledged. */
const SQLITE_SYNCHRONOUS = 'FULL';

/**
 * WAL pages after which a commit copies the WAL back into the database file (a checkpoint, with
 * its own fsync). SQLite's default, 1,000 pages (4 MiB), made a checkpoint of nearly every group
 * commit of many devices, each dirtying a page of the history's index per device: 37 % of the
 * storage's time at 2,000-row commits over 1,000 devices. At 10,000 (40 MiB) a page rewritten by
 * many commits is copied once, and a checkpoint comes every few seconds at full load.
 */
export const SQLITE_WAL_CHECKPOINT_PAGES = 10_000;

/**
 * The pragmas of the SQLite writer connection (also the raw-storage baseline's, bench/): WAL,
 * durable commits (FULL: a commit is on disk before it is acknowledged, power loss included; group
 * commit amortises the fsync), checkpoints every SQLITE_WAL_CHECKPOINT_PAGES, the WAL file cut back
 * to 64 MiB after a checkpoint when it grew past it.
 */
export function sqliteWriterPragmas(conn: { pragma(s: string): unknown }): void {
  conn.pragma('journal_mode = WAL');
  conn.pragma(`synchronous = ${SQLITE_SYNCHRONOUS}`);
  conn.pragma(`wal_autocheckpoint = ${SQLITE_WAL_CHECKPOINT_PAGES}`);
  conn.pragma(`journal_size_limit = ${64 * 2 ** 20}`);
}

export function openDb(options: DbOptions): Db {
  if (options.databaseUrl) {
    const knex = knexFactory({
      log: quiet,
      client: 'pg',
      connection: { connectionString: options.databaseUrl, application_name: 'trackgate', types: pgTypes },
      pool: { min: 0, max: options.poolMax ?? 10 },
      acquireConnectionTimeout: 10_000,
    });
    return Object.assign(knex, { read: poolReads(knex) });
  }
  const file = options.sqliteFile ?? SQLITE_FILE;
  let filename = file;
  if (file !== ':memory:') {
    const dir = options.dataDir ?? './data';
    makeDataDir(dir);
    filename = path.join(dir, file);
  }
  const knex = knexFactory({
    log: quiet,
    client: 'better-sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    // better-sqlite3 is synchronous: one connection serialises writes, as SQLite does anyway.
    pool: {
      min: 1,
      max: 1,
      afterCreate(conn: Database.Database, done: (err: Error | null, conn: unknown) => void) {
        try {
          // before the first access: SQLite then never opens the -shm file (sqlite.org/wal.html#noshm)
          if (options.sqliteExclusive) conn.pragma('locking_mode = EXCLUSIVE');
          // a new database gives the pages retention frees back (incremental_vacuum, core/retention/);
          // SQLite takes it only before the first table exists (and before WAL), and an older file
          // keeps its mode. Where the file cannot be read yet (a full disk with no room for the
          // -shm file) it is left alone: the writer's pragmas below meet that and the start copes
          // (server/storage.ts); thrown here, it failed the start instead.
          try {
            conn.pragma('auto_vacuum = INCREMENTAL');
          } catch {
            /* an existing file's mode stays; a new file cannot be made on a full disk anyway */
          }
          sqliteWriterPragmas(conn);
          conn.pragma('foreign_keys = ON');
          conn.pragma('busy_timeout = 5000');
        } catch (e) {
          // the pool drops a connection it could not make ready without closing it: its locks would stay
          conn.close();
          done(e as Error, conn);
          return;
        }
        done(null, conn);
      },
    },
  });
  return Object.assign(knex, { read: sqliteReads(knex, filename, !options.sqliteExclusive) });
}

/**
 * A database an upgrade migrated and a rolled-back (older) trackgate was started on: it holds
 * migrations this version does not know, so its schema is not one this version was written for.
 */
export class NewerSchemaError extends Error {
  constructor(
    readonly unknown: string[],
    lastKnown: string,
  ) {
    const which = unknown.length === 1 ? `migration ${unknown[0]} is` : `migrations ${unknown.join(', ')} are`;
    super(
      `the database was migrated by a newer trackgate: ${which} unknown to this version (its last is ${lastKnown}); run the newer version or restore a backup taken before the upgrade`,
    );
    this.name = 'NewerSchemaError';
  }
}

/** The migrations the database has applied, oldest first; none before its first migration. */
async function appliedMigrations(db: Knex): Promise<string[]> {
  if (!(await db.schema.hasTable('knex_migrations'))) return [];
  return (await db('knex_migrations').orderBy('id').pluck('name')) as string[];
}

/** The SQLite database file, or undefined on PostgreSQL and for ':memory:'. */
export function sqliteFile(db: Knex): string | undefined {
  if (dbKind(db) !== 'sqlite') return undefined;
  const filename = (db.client.config.connection as { filename: string }).filename;
  return filename === ':memory:' ? undefined : filename;
}

/**
 * From now on the SQLite writer refuses every write (SQLITE_READONLY) and still reads: for a file
 * that is no longer the database's (core/db/storage.watch.ts). Nothing on PostgreSQL.
 */
export async function refuseWrites(db: Knex): Promise<void> {
  if (dbKind(db) === 'sqlite') await db.raw('PRAGMA query_only = ON');
}

/**
 * The migrations a database has not had yet (reads only). A database with migrations this version
 * does not know throws NewerSchemaError: knex refused it only with "the migration directory is
 * corrupt, the following files are missing", which named no cause.
 */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const known = await migrationSource.getMigrations([]);
  const applied = await appliedMigrations(db);
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length) throw new NewerSchemaError(unknown, known[known.length - 1]);
  return known.filter((name) => !applied.includes(name));
}

/**
 * Applies every pending migration; returns the names applied. A database with migrations this
 * version does not know is left as it is (NewerSchemaError, pendingMigrations). Nothing is written
 * when none is pending: knex takes its migration lock (an UPDATE) even then, and a database that
 * refuses writes (a full disk) could not have started.
 */
export async function migrate(db: Db): Promise<string[]> {
  if (!(await pendingMigrations(db)).length) return [];
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}

const kept = new WeakMap<object, Map<string, Database.Statement>>();

/** A statement prepared once per connection and kept. */
export function keptStatement(conn: Database.Database, sql: string): Database.Statement {
  let statements = kept.get(conn);
  if (!statements) kept.set(conn, (statements = new Map()));
  let st = statements.get(sql);
  if (!st) statements.set(sql, (st = conn.prepare(sql)));
  return st;
}

/**
 * The better-sqlite3 connection of a knex transaction on SQLite, for bulk writes through kept
 * prepared statements (knex builds and prepares a new statement for every query); undefined
 * outside a transaction and on PostgreSQL.
 */
export async function sqliteTransactionConnection(q: unknown): Promise<Database.Database | undefined> {
  const trx = q as {
    isTransaction?: boolean;
    client?: { config: { client: string }; acquireConnection(): Promise<unknown> };
  };
  if (!trx.isTransaction || trx.client?.config.client !== 'better-sqlite3') return undefined;
  return (await trx.client.acquireConnection()) as Database.Database;
}

/**
 * Runs `write` as one transaction whose commit does not wait for the disk: what it writes survives
 * the process crashing, and is atomic, but a power loss or OS crash may lose it (the next durable
 * commit, or checkpoint, takes it to the disk too). For bookkeeping that no acknowledgement
 * depends on and that the next event writes again (a device's last connection); never for
 * positions. SQLite: the writer's `synchronous` is NORMAL for this one commit (WAL: no fsync) and
 * FULL again before anything else can use the connection (`write` runs synchronously while it is
 * held). PostgreSQL: `synchronous_commit = off` for this transaction. `write` gets the
 * better-sqlite3 connection on SQLite, the knex transaction on PostgreSQL.
 */
export async function nonDurableWrite(
  db: Knex,
  write: { sqlite(conn: Database.Database): void; postgres(trx: Knex.Transaction): Promise<void> },
): Promise<void> {
  if (dbKind(db) === 'postgres') {
    await db.transaction(async (trx) => {
      await trx.raw('set local synchronous_commit = off');
      await write.postgres(trx);
    });
    return;
  }
  const client = db.client as {
    acquireConnection(): Promise<Database.Database>;
    releaseConnection(conn: Database.Database): Promise<unknown>;
  };
  const conn = await client.acquireConnection();
  try {
    relaxedTransaction(conn)(write.sqlite);
  } finally {
    await client.releaseConnection(conn);
  }
}

const relaxed = new WeakMap<Database.Database, (write: (conn: Database.Database) => void) => void>();

/**
 * The connection's non-durable transaction, made once (better-sqlite3 prepares BEGIN and COMMIT
 * when it is made). The pragmas run each time: SQLite applies `synchronous` when the statement is
 * compiled, so a kept one would not set it again.
 */
function relaxedTransaction(conn: Database.Database): (write: (conn: Database.Database) => void) => void {
  let run = relaxed.get(conn);
  if (!run) {
    const transaction = conn.transaction((write: (c: Database.Database) => void) => write(conn));
    run = (write) => {
      conn.exec('PRAGMA synchronous = NORMAL');
      try {
        transaction(write);
      } finally {
        conn.exec(`PRAGMA synchronous = ${SQLITE_SYNCHRONOUS}`);
      }
    };
    relaxed.set(conn, run);
  }
  return run;
}

/** Closes the database (and its hot-read connection). */
export async function closeDb(db: Db): Promise<void> {
  db.read.close();
  await db.destroy();
}

/** Throws when the database does not answer. */
export async function ping(db: Db): Promise<void> {
  await db.raw('select 1');
}
