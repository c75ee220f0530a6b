import test from 'ava';
import { backends, createStorage, type Backend } from './helpers/backends.js';
import { testEnv } from './helpers/server.js';
import { runCli } from './helpers/run-cli.js';
import { closeDb, openDb, type Db } from '../core/db/db.js';
import { migrationSource } from '../core/db/migrations/index.js';

/** What a start must leave as it found it: the schema and knex's own bookkeeping. */
async function snapshot(db: Db, backend: Backend): Promise<unknown> {
  const schema =
    backend === 'sqlite'
      ? await db.raw(`select type, name, sql from sqlite_master order by type, name`)
      : (
          await db.raw(
            `select table_name, column_name, data_type from information_schema.columns where table_schema = current_schema() order by 1, 2`,
          )
        ).rows;
  const indexes =
    backend === 'postgres'
      ? (await db.raw(`select indexname, indexdef from pg_indexes where schemaname = current_schema() order by 1`)).rows
      : [];
  return {
    schema,
    indexes,
    migrations: await db('knex_migrations').orderBy('id'),
    lock: await db('knex_migrations_lock'),
  };
}

for (const backend of await backends()) {
  test(`main + cli (${backend}): on a database a newer trackgate migrated (a version rolled back), serve and migrate exit 1 naming the unknown migrations, and change nothing`, async (t) => {
    const storage = await createStorage(backend);
    t.teardown(() => storage.cleanup());
    const env = testEnv(storage.env);
    const migrated = await runCli(['migrate'], env);
    t.is(migrated.status, 0, migrated.stderr);

    const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
    // what the newer version's migrations left: their rows in knex_migrations, of a later batch
    await db('knex_migrations').insert([
      { name: '900-newer-feature', batch: 2, migration_time: new Date() },
      { name: '901-newer-index', batch: 2, migration_time: new Date() },
    ]);
    const before = await snapshot(db, backend);
    await closeDb(db);

    const lastKnown = (await migrationSource.getMigrations([])).at(-1);
    const message = `the database was migrated by a newer trackgate: migrations 900-newer-feature, 901-newer-index are unknown to this version (its last is ${lastKnown}); run the newer version or restore a backup taken before the upgrade`;
    const serve = await runCli(['serve'], env);
    t.is(serve.status, 1, serve.stderr);
    t.is(serve.stderr, `trackgate: could not start: ${message}\n`);
    const migrate = await runCli(['migrate'], env);
    t.is(migrate.status, 1, migrate.stderr);
    t.is(migrate.stderr, `trackgate: ${message}\n`);
    const list = await runCli(['account', 'list'], env);
    t.is(list.status, 1, list.stderr);
    t.is(list.stderr, `trackgate: ${message}\n`);

    const after = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
    t.teardown(() => closeDb(after));
    t.deepEqual(await snapshot(after, backend), before, 'the database is as the newer version left it');
  });
}
