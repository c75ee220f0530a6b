/**
 * The database handle: knex on better-sqlite3 (embedded default, WAL) or on PostgreSQL.
 * Timestamps are stored as integer milliseconds since the epoch in both, so comparisons and
 * indexes behave the same everywhere.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import Database from 'better-sqlite3';
import { migrationSource } from './migrations/index.js';

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

export interface DbOptions {
  /** postgres://… ; absent: SQLite under dataDir */
  databaseUrl?: string;
  dataDir?: string;
  /** SQLite file name inside dataDir, or ':memory:' */
  sqliteFile?: string;
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
  getTypeParser: (oid, format) => (oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text' | 'binary')),
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
 * exists (until then, and for ':memory:', the one knex connection answers).
 */
function sqliteReads(knex: Knex, filename: string): Reads {
  let reader: Database.Database | undefined;
  let closed = false;
  const statements = new Map<string, Database.Statement>();
  /** The statement on the read-only connection, or undefined while there is no file to open yet (then the pool answers). */
  function statement(sql: string): Database.Statement | undefined {
    if (closed) throw new Error('the database is closed');
    if (!reader && filename !== ':memory:' && existsSync(filename)) reader = new Database(filename, { readonly: true });
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
  const file = options.sqliteFile ?? 'trackgate.sqlite';
  let filename = file;
  if (file !== ':memory:') {
    const dir = options.dataDir ?? './data';
    mkdirSync(dir, { recursive: true });
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
      afterCreate(conn: { pragma(s: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        conn.pragma('journal_mode = WAL');
        // FULL: a commit is on disk before it is acknowledged (power loss included); group commit amortises the fsync.
        conn.pragma('synchronous = FULL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 5000');
        done(null, conn);
      },
    },
  });
  return Object.assign(knex, { read: sqliteReads(knex, filename) });
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(db: Db): Promise<string[]> {
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
  const trx = q as { isTransaction?: boolean; client?: { config: { client: string }; acquireConnection(): Promise<unknown> } };
  if (!trx.isTransaction || trx.client?.config.client !== 'better-sqlite3') return undefined;
  return (await trx.client.acquireConnection()) as Database.Database;
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
