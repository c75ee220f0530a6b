/**
 * Two instances storing one device's positions into one PostgreSQL (core/locations/distance.repository.ts):
 * their transactions wait for each other by device, never in a cycle. Locking the state rows
 * themselves (FOR UPDATE) left a device without a row yet unlocked, and a row that appeared between
 * two reads made a deadlock: PostgreSQL rolled one batch back, and its tracker had no answer.
 */
import test from 'ava';
import { backends, createStorage, lockWaiters } from '../../helpers/backends.js';
import { until } from '../../helpers/wait.js';
import { closeDb, migrate, openDb } from '../../../core/db/db.js';
import { addDistances } from '../../../core/locations/distance.ledger.js';
import { saveStates, statesOf } from '../../../core/locations/distance.repository.js';
import { advance } from '../../../core/locations/distance.js';
import { SerialisedRow } from '../../../core/locations/locations.repository.js';

const T0 = Date.UTC(2026, 5, 1, 8);

const row = (deviceId: string, s: number, latitude: number): SerialisedRow => {
  const l = { dateTime: new Date(T0 + s * 1000).toISOString(), latitude, longitude: -3, valid: true };
  return new SerialisedRow(deviceId, T0 + s * 1000, T0 + s * 1000, JSON.stringify(l), {
    latitude,
    longitude: -3,
    valid: true,
  });
};

if ((await backends()).includes('postgres')) {
  test('distance states (postgres): a state row that appears between two transactions reads makes no deadlock; each transaction reads what the one before committed', async (t) => {
    const storage = await createStorage('postgres');
    t.teardown(() => storage.cleanup());
    const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
    t.teardown(() => closeDb(db));
    await migrate(db);
    const waiting = await lockWaiters(t, storage.env.TRACKGATE_DATABASE_URL);
    // 'dev-w' sorts before 'dev-x'; dev-x has a state, dev-w none yet
    await db.transaction((trx) => addDistances(trx, [row('dev-x', 0, 40)]));

    // B reads both states (dev-w has none)
    const b = await db.transaction();
    const read = await statesOf(b, ['dev-w', 'dev-x']);
    t.false(read.has('dev-w'));
    // C gives dev-w its first state (it commits, or waits for B)
    let cSettled = false;
    const c = db.transaction((trx) => addDistances(trx, [row('dev-w', 0, 41)])).finally(() => (cSettled = true));
    await until('C committed or waits for B', async () => cSettled || (await waiting()) >= 1);
    // A reads both states: it waits for B (and C when C waits)
    const a = db.transaction((trx) => addDistances(trx, [row('dev-w', 10, 41.001), row('dev-x', 10, 40.001)]));
    await until('A waits', async () => (await waiting()) >= (cSettled ? 1 : 2));
    // B saves both states and commits: nobody waits for anybody in a cycle
    await saveStates(
      b,
      new Map([
        ['dev-w', advance(undefined, { dateTime: T0 + 5000, latitude: 41, longitude: -3, valid: true })],
        ['dev-x', advance(read.get('dev-x'), { dateTime: T0 + 5000, latitude: 40, longitude: -3, valid: true })],
      ]),
    );
    await b.commit();
    const outcomes = await Promise.allSettled([c, a]);
    t.deepEqual(
      outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'committed')),
      ['committed', 'committed'],
    );
    // A came after B: both devices' states are measured on from what B (and C) committed
    const states = await statesOf(db, ['dev-w', 'dev-x']);
    t.is(states.get('dev-w')?.lastTime, T0 + 10_000);
    t.is(states.get('dev-x')?.lastTime, T0 + 10_000);
  });
}
