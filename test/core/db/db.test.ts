import test from 'ava';
import pg from 'pg';
import { closeDb, migrate, openDb } from '../../../core/db/db.js';
import { migrationSource } from '../../../core/db/migrations/index.js';
import { backends, createStorage, type Backend } from '../../helpers/backends.js';

async function open(t: { teardown(fn: () => unknown): void }, backend: Backend) {
  const storage = await createStorage(backend);
  const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
  t.teardown(() => storage.cleanup());
  await migrate(db);
  return db;
}

const INT8_OID = 20;
const covered = await backends();

for (const backend of covered) {
  test(`db (${backend}): hot reads see every committed write and end with the database`, async (t) => {
    const db = await open(t, backend);
    t.is(await db.read.first('select id from accounts where id = ?', 'a1'), undefined);
    await db.transaction((trx) =>
      trx('accounts').insert({ id: 'a1', name: 'A', licenses: 1, time_zone: 'UTC', created_at: 1 }),
    );
    t.deepEqual(await db.read.first('select id, licenses from accounts where id = ?', 'a1'), { id: 'a1', licenses: 1 });
    await db('accounts').insert({ id: 'a2', name: 'B', licenses: 2, time_zone: 'UTC', created_at: 2 });
    t.deepEqual(await db.read.all('select id, licenses from accounts where licenses >= ? order by id', 1), [
      { id: 'a1', licenses: 1 },
      { id: 'a2', licenses: 2 },
    ]);
    t.deepEqual(await db.read.all('select id from accounts where id = ?', 'none'), []);
    await closeDb(db);
    await t.throwsAsync(db.read.first('select id from accounts where id = ?', 'a1'));
  });
}

if (covered.includes('postgres')) {
  test('db (postgres): the pool reads int8 as numbers, without changing the pg module for anyone else', async (t) => {
    const db = await open(t, 'postgres');
    t.teardown(() => closeDb(db));
    t.deepEqual((await db.raw('select 9007199254740991::int8 as n')).rows[0], { n: 9007199254740991 });
    t.is(pg.types.getTypeParser(INT8_OID, 'text')('42'), '42', "pg's own default parser is left as it is");
    t.deepEqual(await db.read.first('select 42::int8 as n'), { n: 42 });
  });
}

for (const backend of covered) {
  test(`db (${backend}): every migration rolls back and forward again on a database holding an account and a device in a group, and keeps them`, async (t) => {
    const db = await open(t, backend);
    t.teardown(() => closeDb(db));
    await db('accounts').insert({ id: 'a1', name: 'A', licenses: 1, time_zone: 'UTC', created_at: 1 });
    await db('devices').insert({ id: 'd1', account_id: 'a1', name: 'D', creation: 1, modification: 1 });
    await db('groups').insert({ id: 'g1', account_id: 'a1', name: 'G', creation: 1, last_modified: 1 });
    await db('group_devices').insert({ group_id: 'g1', device_id: 'd1' });
    const names = await migrationSource.getMigrations([]);
    // each `down` after the first schema, newest first, on rows other tables reference
    for (const name of names.slice(1).reverse()) {
      await t.notThrowsAsync(db.migrate.down({ migrationSource }), `${name} rolls back`);
    }
    t.deepEqual(await db('group_devices').select('group_id', 'device_id'), [{ group_id: 'g1', device_id: 'd1' }]);
    t.deepEqual(await db('devices').pluck('id'), ['d1']);
    t.deepEqual(await db('accounts').pluck('id'), ['a1']);
    t.deepEqual(await migrate(db), names.slice(1), 'and forward again');
    t.deepEqual(await db('group_devices').select('group_id', 'device_id'), [{ group_id: 'g1', device_id: 'd1' }]);
  });
}
