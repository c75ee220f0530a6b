/**
 * `trackgate compact`: a SQLite file made before retention (auto_vacuum = NONE) rewritten so that
 * it gives freed pages back (issue 41 item 3), its rows kept; refused while trackgate runs, on
 * PostgreSQL, and without room for the copy.
 */
import test from 'ava';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { closeDb, migrate, openDb, sqlitePath } from '../../../core/db/db.js';
import { compactSqlite } from '../../../core/db/compact.js';
import { lockDataDir } from '../../../core/db/data-dir.lock.js';
import { createAccountsService } from '../../../core/accounts/accounts.service.js';
import { systemClock } from '../../../core/clock.js';
import { insertOldRows } from '../../helpers/old-rows.js';
import { runCli } from '../../helpers/run-cli.js';
import { testEnv } from '../../helpers/server.js';

/** A data directory whose database was made as an older trackgate made it: auto_vacuum NONE, an account, 100,000 rows deleted again. */
async function oldFile(t: { teardown(f: () => void): void }): Promise<string> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tg-compact-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = new Database(sqlitePath(dataDir));
  first.pragma('auto_vacuum = NONE');
  first.exec('create table made_before (x integer)');
  first.close();
  const db = openDb({ dataDir });
  try {
    await migrate(db);
    await createAccountsService(db, systemClock).create({ name: 'Acme', licenses: 5, adminUser: 'acme-admin' });
    await insertOldRows(db, 'dev1', 100_000, Date.UTC(2020, 0, 1));
    await db('locations').delete();
    await db.raw('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    await closeDb(db);
  }
  return dataDir;
}

const autoVacuum = (file: string): number => {
  const c = new Database(file, { readonly: true });
  try {
    return Number(c.pragma('auto_vacuum', { simple: true }));
  } finally {
    c.close();
  }
};

test('compact: an auto_vacuum NONE file becomes incremental and shrinks, its rows kept', async (t) => {
  const dataDir = await oldFile(t);
  const file = sqlitePath(dataDir);
  t.is(autoVacuum(file), 0, 'the file was made as an older version made it');
  const before = statSync(file).size;
  const run = await runCli(['compact'], testEnv({ TRACKGATE_DATA_DIR: dataDir }));
  t.is(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout) as { was: string; autoVacuum: string; bytesBefore: number; bytesAfter: number };
  t.is(out.was, 'none');
  t.is(out.autoVacuum, 'incremental');
  t.is(out.bytesBefore, before);
  t.true(out.bytesAfter < before / 2, `${out.bytesAfter} of ${before} bytes`);
  t.is(autoVacuum(file), 2);
  const db = openDb({ dataDir });
  try {
    t.deepEqual(
      (await createAccountsService(db, systemClock).list()).map((a) => a.name),
      ['Acme'],
    );
  } finally {
    await closeDb(db);
  }
  // a second compact only gives free pages back
  t.is(compactSqlite(file).was, 'incremental');
});

test('compact: refused while trackgate holds the data directory, on PostgreSQL, and without room for the copy', async (t) => {
  const dataDir = await oldFile(t);
  const file = sqlitePath(dataDir);
  const release = lockDataDir(dataDir);
  try {
    const run = await runCli(['compact'], testEnv({ TRACKGATE_DATA_DIR: dataDir }));
    t.not(run.status, 0);
    t.regex(run.stderr, /in use by another trackgate process.*stop it before a compact/);
  } finally {
    release();
  }
  t.is(autoVacuum(file), 0, 'nothing changed');
  const pg = await runCli(
    ['compact'],
    testEnv({ TRACKGATE_DATA_DIR: dataDir, TRACKGATE_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/none' }),
  );
  t.not(pg.status, 0);
  t.regex(pg.stderr, /PostgreSQL/);
  t.throws(() => compactSqlite(file, 1000), { message: /needs about twice its size free.*Nothing was changed/ });
  t.is(autoVacuum(file), 0, 'nothing changed');
  const none = await runCli(['compact'], testEnv({ TRACKGATE_DATA_DIR: path.join(dataDir, 'nothing') }));
  t.not(none.status, 0);
  t.regex(none.stderr, /there is no database/);
});
