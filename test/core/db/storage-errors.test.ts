import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openDb, closeDb } from '../../../core/db/db.js';
import { isStorageUnavailable } from '../../../core/db/storage-errors.js';
import { createStorage, postgresAvailable } from '../../helpers/backends.js';
import { closedPort } from '../../helpers/receivers.js';

const failure = async (run: () => Promise<unknown>): Promise<unknown> => {
  try {
    await run();
  } catch (e) {
    return e;
  }
  throw new Error('expected a failure');
};

test('storage-errors: a PostgreSQL that refuses connections is unavailable; a bad query on a live one is not', async (t) => {
  const port = await closedPort();
  const down = openDb({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/none` });
  t.teardown(() => closeDb(down));
  t.true(isStorageUnavailable(await failure(() => down.raw('select 1'))));
  if (!(await postgresAvailable())) return;
  const storage = await createStorage('postgres');
  const up = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL });
  t.teardown(async () => {
    await closeDb(up);
    await storage.cleanup();
  });
  t.false(isStorageUnavailable(await failure(() => up.raw('select * from no_such_table'))));
  t.false(
    isStorageUnavailable(await failure(() => up.raw("select 'a\u0000b'"))),
    "a NUL in text is the request's fault",
  );
});

test('storage-errors: a locked SQLite database is unavailable; a constraint violation is not', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-errors-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.sqlite');
  const a = new Database(file);
  const b = new Database(file, { timeout: 0 });
  t.teardown(() => {
    a.close();
    b.close();
  });
  a.exec('create table t (id integer primary key)');
  a.exec('begin immediate');
  t.true(isStorageUnavailable(await failure(async () => b.exec('insert into t values (1)'))), 'SQLITE_BUSY');
  a.exec('commit');
  b.exec('insert into t values (1)');
  t.false(isStorageUnavailable(await failure(async () => b.exec('insert into t values (1)'))), 'SQLITE_CONSTRAINT');
  t.false(isStorageUnavailable(new Error('something else')));
  t.false(isStorageUnavailable(undefined));
});
