/**
 * Last connections are written in groups: a login storm (every tracker reconnecting after a
 * restart) costs a few transactions, not one commit per tracker, and every device's protocol and
 * last connection are stored. What the directory keeps in memory goes once no lookup may use it.
 */
import test from 'ava';
import { closeDb, migrate, openDb, type Db } from '../../../core/db/db.js';
import { EventBus } from '../../../core/events/event-bus.js';
import { createDeviceDirectory, LAST_CONNECTION_EVERY_MS } from '../../../core/devices/device-directory.js';
import * as devices from '../../../core/devices/devices.repository.js';
import type { DeviceRecord } from '../../../core/model/device.js';
import { ManualClock, systemClock } from '../../../core/clock.js';
import { backends, createStorage } from '../../helpers/backends.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { until } from '../../helpers/wait.js';

const N = 300;

function record(id: string): DeviceRecord {
  return {
    id,
    accountId: 'acc-dir',
    name: id,
    description: null,
    min: null,
    tags: {},
    expiresAt: null,
    dailyEmailLimit: 10,
    dailySmsLimit: 10,
    alertEmails: [],
    alertPhones: [],
    protocol: null,
    lastConnection: null,
    model: null,
    protocolOptions: {},
    mqttPasswordHash: null,
    creation: 1,
    modification: 1,
  };
}

/** The schema, one account and N devices named `${prefix}0000`…; their ids. */
async function seed(db: Db, prefix: string): Promise<string[]> {
  await migrate(db);
  await db('accounts').insert({ id: 'acc-dir', name: 'A', licenses: N, time_zone: 'UTC', created_at: 1 });
  const ids = Array.from({ length: N }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
  await db.transaction(async (trx) => {
    for (const id of ids) await devices.insert(trx, record(id));
  });
  return ids;
}

for (const backend of await backends()) {
  test(`device-directory (${backend}): ${N} trackers logging in at once are recorded in a few transactions`, async (t) => {
    const storage = await createStorage(backend);
    t.teardown(() => storage.cleanup());
    const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
    t.teardown(() => closeDb(db));
    const ids = await seed(db, 'dir-');
    const directory = createDeviceDirectory({
      db,
      clock: systemClock,
      logger: capturingLogger(),
      events: new EventBus(),
    });
    t.teardown(() => directory.close());
    const found = await Promise.all(ids.map((id) => directory.find(id)));

    const statements: string[] = [];
    const count = (q: { sql: string }) => statements.push(q.sql);
    db.on('query', count);
    const t0 = Date.now();
    await Promise.all(found.map((d, i) => directory.touch(d!, i % 2 ? 'teltonika' : 'gt06')));
    db.off('query', count);

    t.true(
      statements.length <= 6,
      `${statements.length} statements for ${N} logins: ${statements.slice(0, 3).join(' | ')}`,
    );
    const rows = await db('devices').whereIn('id', ids).select('id', 'protocol', 'last_connection');
    t.is(rows.length, N);
    for (const r of rows) {
      t.is(r.protocol, Number(String(r.id).slice(4)) % 2 ? 'teltonika' : 'gt06', String(r.id));
      t.true(Number(r.last_connection) >= t0, String(r.id));
    }
  });
}

test('device-directory: records and last connections no lookup may use any more are forgotten (a login storm leaves nothing behind)', async (t) => {
  const db = openDb({ sqliteFile: ':memory:' });
  t.teardown(() => closeDb(db));
  const ids = await seed(db, 'sweep-');
  const clock = new ManualClock(Date.now());
  const directory = createDeviceDirectory({
    db,
    clock,
    logger: capturingLogger(),
    events: new EventBus(),
    cacheMs: 5000,
    flushMs: 20,
  });
  t.teardown(() => directory.close());
  const found = await Promise.all(ids.map((id) => directory.resolve(id, 'teltonika', null)));
  t.true(found.every((r) => r.status === 'ok'));
  await Promise.all(found.map((r) => directory.touch((r as { device: DeviceRecord }).device, 'teltonika')));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(60);
  t.deepEqual(directory.held(), { records: N, touched: N }, 'within the cache time everything is still held');

  clock.advance(LAST_CONNECTION_EVERY_MS);
  await until('the sweep ran', () => directory.held().records === 0 && directory.held().touched === 0);
  t.deepEqual(
    directory.held(),
    { records: 0, touched: 0 },
    'records past the cache time are gone, and last connections written LAST_CONNECTION_EVERY_MS ago',
  );

  // a device looked up again is read and cached again, and its next touch is written
  const again = await directory.resolve(ids[0], 'teltonika', null);
  t.is(again.status, 'ok');
  t.is(directory.held().records, 1);
});
