import test from 'ava';
import type { Knex } from 'knex';
import { closeDb, migrate, openDb, type Db } from '../../../core/db/db.js';
import { migrationSource } from '../../../core/db/migrations/index.js';
import {
  dropBefore,
  intervalStart,
  listPartitions,
  MAINTENANCE_LOCK_KEY,
  makePartitionsAhead,
  partitionName,
  startPartitionMaintenance,
} from '../../../core/db/partitions/pg-partitions.js';
import { insertMany } from '../../../core/locations/locations.repository.js';
import { insert as insertAlert } from '../../../core/alerts/alerts.repository.js';
import { ManualClock } from '../../../core/clock.js';
import { silentLogger } from '../../../core/logger.js';
import { createStorage, postgresAvailable, type Storage } from '../../helpers/backends.js';
import { startServer } from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';

const DAY_MS = 86_400_000;
// a fixed "now": 1 day ago is this month, 40 days ago last month, 400 days ago 13 months back
const NOW = Date.UTC(2026, 11, 15, 12);

async function storage(t: { teardown(fn: () => unknown): void }): Promise<Storage> {
  const s = await createStorage('postgres');
  t.teardown(() => s.cleanup());
  return s;
}

async function open(t: { teardown(fn: () => unknown): void }, s: Storage): Promise<Db> {
  const db = openDb({ databaseUrl: s.env.TRACKGATE_DATABASE_URL, dataDir: s.env.TRACKGATE_DATA_DIR });
  t.teardown(() => closeDb(db));
  return db;
}

const rowsOf = async <T>(db: Knex, sql: string, params: Knex.RawBinding[] = []): Promise<T[]> =>
  ((await db.raw(sql, params)) as { rows: T[] }).rows;

const children = async (db: Knex, table: string): Promise<string[]> =>
  (
    await rowsOf<{ name: string }>(
      db,
      'select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = to_regclass(?) order by 1',
      [table],
    )
  ).map((r) => r.name);

/** Where each row of `table` is stored: fix time → partition. */
const placed = async (db: Knex, table: string): Promise<Record<number, string>> =>
  Object.fromEntries(
    (
      await rowsOf<{ p: string; date_time: number }>(
        db,
        `select tableoid::regclass::text as p, date_time from ${table}`,
      )
    ).map((r) => [r.date_time, r.p]),
  );

const location = (deviceId: string, ms: number) => ({
  deviceId,
  dateTime: ms,
  serverTime: ms,
  location: { dateTime: new Date(ms).toISOString(), latitude: 1, longitude: 2 },
});

const alertRow = (ms: number) => ({
  deviceId: 'dev1',
  dateTime: ms,
  alertName: 'SOSButton',
  latitude: null,
  longitude: null,
  text: null,
  alerts: [],
  notifications: [],
  suppressed: {},
  createdAt: ms,
});

if (await postgresAvailable()) {
  test('pg-partitions: locations and alerts are partitioned by date_time, with a DEFAULT partition', async (t) => {
    const db = await open(t, await storage(t));
    await migrate(db);
    const parts = await rowsOf<{ table: string; strategy: string; key: string }>(
      db,
      `select c.relname as table, p.partstrat as strategy, a.attname as key
         from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
         join pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0] order by 1`,
    );
    t.deepEqual(parts, [
      { table: 'alerts', strategy: 'r', key: 'date_time' },
      { table: 'locations', strategy: 'r', key: 'date_time' },
    ]);
    t.deepEqual(await children(db, 'locations'), ['locations_default']);
    t.deepEqual(await children(db, 'alerts'), ['alerts_default']);
  });

  test('pg-partitions: positions of 400, 40 and 1 day ago land in their partitions; DEFAULT rows move into theirs', async (t) => {
    const db = await open(t, await storage(t));
    await migrate(db);
    const made = await makePartitionsAhead(db, NOW, 'month');
    t.deepEqual(made, [
      'locations_p202612',
      'locations_p202701',
      'locations_p202702',
      'alerts_p202612',
      'alerts_p202701',
      'alerts_p202702',
    ]);
    t.deepEqual(await makePartitionsAhead(db, NOW, 'month'), [], 'made once');
    const [d400, d40, d1] = [NOW - 400 * DAY_MS, NOW - 40 * DAY_MS, NOW - DAY_MS];
    await insertMany(db, [location('dev1', d400), location('dev1', d40), location('dev1', d1)]);
    await insertAlert(db, alertRow(d400));
    await insertAlert(db, alertRow(d1));
    t.deepEqual(await placed(db, 'locations'), {
      [d400]: 'locations_default',
      [d40]: 'locations_default',
      [d1]: 'locations_p202612',
    });
    // the next run makes the partitions the DEFAULT rows need and moves them there
    t.deepEqual(await makePartitionsAhead(db, NOW, 'month'), [
      'locations_p202511',
      'locations_p202611',
      'alerts_p202511',
    ]);
    t.deepEqual(await placed(db, 'locations'), {
      [d400]: 'locations_p202511',
      [d40]: 'locations_p202611',
      [d1]: 'locations_p202612',
    });
    t.deepEqual(await placed(db, 'alerts'), { [d400]: 'alerts_p202511', [d1]: 'alerts_p202612' });
    // the same key again: ON CONFLICT still finds it (the key holds the partition key)
    const again = await insertMany(db, [location('dev1', d40), location('dev2', d40)]);
    t.deepEqual(
      again.map((r) => r.deviceId),
      ['dev2'],
    );
    // a day interval: day partitions where no month one is
    const days = await makePartitionsAhead(db, Date.UTC(2027, 2, 30, 12), 'day');
    t.true(days.includes('locations_p20270330') && days.includes('locations_p20270401'), days.join());
    t.is(partitionName('locations', intervalStart(Date.UTC(2027, 2, 30, 12), 'day'), 'day'), 'locations_p20270330');
  });

  test('pg-partitions: dropBefore drops whole old partitions, never DEFAULT, and keeps the rest', async (t) => {
    const db = await open(t, await storage(t));
    await migrate(db);
    const [d400, d40, d1] = [NOW - 400 * DAY_MS, NOW - 40 * DAY_MS, NOW - DAY_MS];
    await insertMany(db, [location('dev1', d400), location('dev1', d40), location('dev1', d1), location('old', d400)]);
    await makePartitionsAhead(db, NOW, 'month');
    // a row far ahead (a tracker's broken clock) stays in DEFAULT, which no cutoff drops
    await insertMany(db, [location('dev1', Date.UTC(2099, 0, 1))]);
    await makePartitionsAhead(db, NOW, 'month');
    const oldTable = 'locations_p202511';
    t.true((await children(db, 'locations')).includes(oldTable));
    const dropped = await dropBefore(db, 'locations', NOW - 30 * DAY_MS);
    t.deepEqual(dropped, [oldTable]);
    t.false((await children(db, 'locations')).includes(oldTable), 'gone from pg_inherits');
    t.is(
      (await rowsOf<{ t: string | null }>(db, 'select to_regclass(?)::text as t', [oldTable]))[0].t,
      null,
      'the table dropped whole',
    );
    t.deepEqual(await placed(db, 'locations'), {
      [d40]: 'locations_p202611',
      [d1]: 'locations_p202612',
      [Date.UTC(2099, 0, 1)]: 'locations_default',
    });
    // the last location of a device silent for 400 days is another table: kept
    t.is(
      (await rowsOf<{ n: number }>(db, `select count(*)::int as n from last_locations where device_id = 'old'`))[0].n,
      1,
    );
    t.deepEqual(
      await dropBefore(db, 'locations', Date.UTC(2200, 0, 1)).then((d) => d.includes('locations_default')),
      false,
    );
    t.deepEqual(await children(db, 'locations'), ['locations_default']);
    t.deepEqual(await dropBefore(db, 'alerts', NOW), []);
    // a partition detached by a purge stopped before its drop is dropped by the next one
    await makePartitionsAhead(db, NOW, 'month');
    await db.raw('alter table locations detach partition locations_p202701');
    t.deepEqual(await dropBefore(db, 'locations', 0), ['locations_p202701']);
    t.is(
      (await rowsOf<{ t: string | null }>(db, 'select to_regclass(?)::text as t', ['locations_p202701']))[0].t,
      null,
    );
  });

  test('pg-partitions: of two instances on one database only one maintains; the other takes over when it stops', async (t) => {
    const s = await storage(t);
    const a = await open(t, s);
    const b = await open(t, s);
    await migrate(a);
    const clock = new ManualClock(NOW);
    const ma = startPartitionMaintenance({ db: a, clock, logger: silentLogger, interval: 'month', everyMs: 3_600_000 });
    t.teardown(() => ma.stop());
    const first = await ma.run();
    const mb = startPartitionMaintenance({ db: b, clock, logger: silentLogger, interval: 'month', everyMs: 3_600_000 });
    t.teardown(() => mb.stop());
    const second = await mb.run();
    t.true(first.maintainer);
    t.false(second.maintainer);
    t.deepEqual(second.made, []);
    t.true(ma.isMaintainer());
    t.false(mb.isMaintainer());
    const held = async () =>
      (
        await rowsOf<{ n: number }>(
          a,
          `select count(*)::int as n from pg_locks where locktype = 'advisory' and granted and objid = ?
            and database = (select oid from pg_database where datname = current_database())`,
          [MAINTENANCE_LOCK_KEY],
        )
      )[0].n;
    t.is(await held(), 1);
    t.true((await children(a, 'locations')).includes('locations_p202612'));
    t.false((await mb.run()).maintainer, 'still not, at its next run');
    await ma.stop();
    clock.set(Date.UTC(2027, 3, 2));
    const taken = await mb.run();
    t.true(taken.maintainer);
    t.true(taken.made.includes('locations_p202704'), taken.made.join());
    t.is(await held(), 1);
  });

  test('pg-partitions: an unpartitioned table with rows becomes the legacy partition; its rows read through REST', async (t) => {
    const s = await storage(t);
    const db = openDb({ databaseUrl: s.env.TRACKGATE_DATABASE_URL, dataDir: s.env.TRACKGATE_DATA_DIR });
    // the schema before 014: plain tables
    const before: Knex.MigrationSource<string> = {
      ...migrationSource,
      getMigrations: async () => (await migrationSource.getMigrations([])).filter((n) => n < '014'),
    };
    await db.migrate.latest({ migrationSource: before });
    t.deepEqual(await children(db, 'locations'), []);
    const start = Date.UTC(2026, 2, 1);
    await db.raw(
      `insert into locations (device_id, date_time, server_time, data)
       select 'dev1', ?::int8 + g * 60000, ?::int8 + g * 60000, '{"latitude":' || g || ',"longitude":2,"dateTime":"' ||
         to_char(to_timestamp((?::int8 + g * 60000) / 1000.0) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"}'
       from generate_series(0, 199) g`,
      [start, start, start],
    );
    t.is(JSON.parse((await rowsOf<{ data: string }>(db, 'select data from locations limit 1'))[0].data).longitude, 2);
    const [{ id: legacyId }] = await rowsOf<{ id: number }>(
      db,
      `insert into alerts (device_id, date_time, alert_name, data, created_at) values ('dev1', ?, 'SOSButton', '{}', ?) returning id`,
      [start, start],
    );
    await closeDb(db);

    const server = await startServer('postgres', { storageEnv: s.env });
    t.teardown(() => server.stop());
    const pg = await open(t, s);
    t.deepEqual(
      (await listPartitions(pg, 'locations')).filter((p) => p.name === 'locations_legacy'),
      [{ name: 'locations_legacy', isDefault: false, fromMs: start, toMs: start + 199 * 60000 + 1 }],
    );
    t.true((await children(pg, 'alerts')).includes('alerts_legacy'));
    // the server's maintenance makes the current month's partition (wall clock) at start
    const current = partitionName('locations', intervalStart(Date.now(), 'month'), 'month');
    await until('current partition made', async () =>
      (await children(pg, 'locations')).some((c) => c.startsWith(current)),
    );

    const token = server.adminToken;
    t.is((await server.request('POST', '/api/devices', { token, body: { id: 'dev1', name: 'dev1' } })).status, 201);
    const history = await server.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-01T00:09:00Z' },
    });
    t.is(history.status, 200);
    t.deepEqual(
      history.body.locations.map((l: { latitude: number }) => l.latitude),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    // new rows go on: a stored key is still one (ON CONFLICT), new alert ids follow the legacy ones
    const resend = await server.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { location: { dateTime: '2026-03-01T00:01:00Z', latitude: 1, longitude: 2 } },
    });
    t.is(resend.status, 201);
    t.is((await rowsOf<{ n: number }>(pg, 'select count(*)::int as n from locations'))[0].n, 200);
    const alert = await server.request('POST', '/api/devices/dev1/alerts', {
      token,
      body: { alert: { dateTime: '2026-12-01T09:00:00Z', alertName: 'SOSButton' } },
    });
    t.is(alert.status, 201, JSON.stringify(alert.body));
    t.true(alert.body.alerts[0].id > legacyId);
    // the legacy partition drops whole once the cutoff passes its max
    t.deepEqual(await dropBefore(pg, 'locations', Date.UTC(2026, 3, 1)), ['locations_legacy']);
    t.is((await rowsOf<{ n: number }>(pg, 'select count(*)::int as n from locations'))[0].n, 0);
  });
  test('pg-partitions: the down migration makes plain tables again, every row kept', async (t) => {
    const db = await open(t, await storage(t));
    await migrate(db);
    await makePartitionsAhead(db, NOW, 'month');
    await insertMany(db, [location('dev1', NOW - DAY_MS), location('dev1', NOW - 400 * DAY_MS)]);
    const { id } = await insertAlert(db, alertRow(NOW - DAY_MS));
    // the migrations after 014 first, then 014 itself
    while ((await db.migrate.currentVersion({ migrationSource })) > '014-pg-partitions')
      await db.migrate.down({ migrationSource });
    t.is(await db.migrate.currentVersion({ migrationSource }), '014-pg-partitions');
    await db.migrate.down({ migrationSource });
    t.deepEqual(await children(db, 'locations'), []);
    t.is((await rowsOf<{ n: number }>(db, 'select count(*)::int as n from locations'))[0].n, 2);
    const next = await insertAlert(db, alertRow(NOW));
    t.true(next.id > id);
    await migrate(db);
    t.deepEqual(await children(db, 'locations'), ['locations_default', 'locations_legacy']);
  });
} else {
  test('pg-partitions: PostgreSQL not reachable, skipped', (t) => t.pass());
}
