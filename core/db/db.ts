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

export type Db = Knex;
export type DbKind = 'sqlite' | 'postgres';

export interface DbOptions {
  /** postgres://… ; absent: SQLite under dataDir */
  databaseUrl?: string;
  dataDir?: string;
  /** SQLite file name inside dataDir, or ':memory:' */
  sqliteFile?: string;
  poolMax?: number;
}

// PostgreSQL returns int8 as strings by default; our int8 columns are epoch milliseconds and
// counters, all far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));

export function dbKind(db: Db): DbKind {
  return db.client.config.client === 'pg' ? 'postgres' : 'sqlite';
}

// knex prints connection failures itself; the caller reports them once, in its own words.
const quiet = { warn() {}, error() {}, deprecate() {}, debug() {} };

/**
 * Hot reads (a few lookups made on every request or frame) on SQLite: a second, read-only
 * connection with its prepared statements kept, so a lookup costs microseconds instead of a knex
 * round trip. In WAL mode a reader sees every committed transaction. Reads inside a transaction
 * (a Knex.Transaction, not the Db itself) and every read on PostgreSQL go through knex.
 */
export interface HotReads {
  get(sql: string, ...params: unknown[]): Record<string, unknown> | undefined;
}

const hot = new WeakMap<object, HotReads>();
const sqliteFiles = new WeakMap<object, { filename: string; reader?: Database.Database }>();

export function hotReads(db: unknown): HotReads | undefined {
  const known = hot.get(db as object);
  if (known) return known;
  const file = sqliteFiles.get(db as object);
  if (!file || !existsSync(file.filename)) return undefined;
  const reader = new Database(file.filename, { readonly: true });
  file.reader = reader;
  const statements = new Map<string, Database.Statement>();
  const reads: HotReads = {
    get(sql, ...params) {
      let st = statements.get(sql);
      if (!st) {
        st = reader.prepare(sql);
        statements.set(sql, st);
      }
      return st.get(...params) as Record<string, unknown> | undefined;
    },
  };
  hot.set(db as object, reads);
  return reads;
}

export function openDb(options: DbOptions): Db {
  if (options.databaseUrl) {
    return knexFactory({
      log: quiet,
      client: 'pg',
      connection: { connectionString: options.databaseUrl, application_name: 'trackgate' },
      pool: { min: 0, max: options.poolMax ?? 10 },
      acquireConnectionTimeout: 10_000,
    });
  }
  const file = options.sqliteFile ?? 'trackgate.sqlite';
  let filename = file;
  if (file !== ':memory:') {
    const dir = options.dataDir ?? './data';
    mkdirSync(dir, { recursive: true });
    filename = path.join(dir, file);
  }
  const db = knexFactory({
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
  if (filename !== ':memory:') sqliteFiles.set(db, { filename });
  return db;
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
  sqliteFiles.get(db)?.reader?.close();
  sqliteFiles.delete(db);
  hot.delete(db);
  await db.destroy();
}

/** Throws when the database does not answer. */
export async function ping(db: Db): Promise<void> {
  await db.raw('select 1');
}
