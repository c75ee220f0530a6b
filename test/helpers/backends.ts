/**
 * Real storage for tests: a temporary SQLite file, or a fresh PostgreSQL database per test file
 * (dropped afterwards), so runs never collide. In CI PostgreSQL must answer; elsewhere its suites
 * skip with a message when it does not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PATIENCE_MS } from './wait.js';

export type Backend = 'sqlite' | 'postgres';

export const PG_BASE = process.env.TRACKGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';

let pgUp: Promise<boolean> | undefined;

export function postgresAvailable(): Promise<boolean> {
  pgUp ??= (async () => {
    const c = new pg.Client({ connectionString: `${PG_BASE}/postgres`, connectionTimeoutMillis: PATIENCE_MS });
    try {
      await c.connect();
      await c.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => {});
    }
  })();
  return pgUp;
}

/** The backends this run must cover: SQLite always; PostgreSQL when it answers, and always in CI. */
export async function backends(): Promise<Backend[]> {
  if (await postgresAvailable()) return ['sqlite', 'postgres'];
  if (process.env.CI) throw new Error(`CI: PostgreSQL does not answer at ${PG_BASE}; its suites must run`);
  console.warn(`[trackgate tests] PostgreSQL not reachable at ${PG_BASE}: skipping its suites`);
  return ['sqlite'];
}

export interface Storage {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function createStorage(backend: Backend): Promise<Storage> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-test-'));
  if (backend === 'sqlite') {
    return {
      env: { TRACKGATE_DATA_DIR: dataDir },
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `tg_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: `${PG_BASE}/postgres` });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  return {
    env: { TRACKGATE_DATA_DIR: dataDir, TRACKGATE_DATABASE_URL: `${PG_BASE}/${name}` },
    cleanup: async () => {
      const c = new pg.Client({ connectionString: `${PG_BASE}/postgres` });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Counts the sessions of the database at `url` waiting for a lock, from a session of its own
 * (asked outside any test transaction: one inside keeps its first view of pg_stat_activity).
 * Closed at the test's end.
 */
export async function lockWaiters(
  t: { teardown(fn: () => unknown): void },
  url: string,
): Promise<() => Promise<number>> {
  const watcher = new pg.Client({ connectionString: url });
  await watcher.connect();
  t.teardown(() => watcher.end());
  return async () =>
    (
      await watcher.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      )
    ).rows[0].n as number;
}
