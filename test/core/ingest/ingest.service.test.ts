import test from 'ava';
import { backends, lockWaiters, type Backend } from '../../helpers/backends.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import type { DeviceRecord } from '../../../core/model/device.js';
import type { PositionReport } from '../../../core/model/report.js';
import { locationReport } from '../../../core/model/input.reports.js';
import pg from 'pg';
import { PATIENCE_MS, until } from '../../helpers/wait.js';
import { CONFLICT_ATTEMPTS } from '../../../core/ingest/group-commit.js';

/**
 * Three accounts, one device each, on a real trackgate; the database refuses any location row
 * holding the word "poison" (a trigger, as a constraint the row breaks would).
 */
async function setup(
  t: { teardown(fn: () => unknown): void },
  backend: Backend,
): Promise<{ s: TestServer; devices: DeviceRecord[] }> {
  const s = await startServer(backend);
  t.teardown(() => s.stop());
  const devices: DeviceRecord[] = [];
  for (const name of ['a', 'b', 'c']) {
    const account = await s.running.services.accounts.create({ name, licenses: 5, adminUser: `${name}-admin` });
    const token = await s.token(account.userName, account.apiKey);
    const r = await s.request('POST', '/api/devices', { token, body: { id: `dev-${name}`, name } });
    if (r.status !== 201) throw new Error(JSON.stringify(r.body));
    const resolved = await s.running.services.directory.resolve(`dev-${name}`, 'test', null);
    if (resolved.status !== 'ok') throw new Error(resolved.status);
    devices.push(resolved.device);
  }
  const db = s.running.db;
  if (backend === 'postgres') {
    await db.raw(`create function refuse_poison() returns trigger language plpgsql as $$
      begin if new.data like '%poison%' then raise exception 'poisoned row' using errcode = 'check_violation'; end if; return new; end $$`);
    await db.raw(
      'create trigger refuse_poison before insert or update on locations for each row execute function refuse_poison()',
    );
  } else {
    await db.raw(
      `create trigger refuse_poison before insert on locations when new.data like '%poison%' begin select raise(abort, 'poisoned row'); end`,
    );
  }
  return { s, devices };
}

const report = (minute: number, note: string): PositionReport => ({
  fixTime: new Date(Date.UTC(2026, 2, 1, 10, minute)),
  location: { latitudeDeg: 40 + minute / 100, longitudeDeg: -3, valid: true },
  alarms: [],
  attributes: { note },
});

for (const backend of await backends()) {
  test(`ingest.service (${backend}): a submission the database refuses fails alone; the rest of its batch is stored and acknowledged`, async (t) => {
    const { s, devices } = await setup(t, backend);
    const ingest = s.running.services.ingest;
    // Submitted in one tick: one group-commit batch.
    const results = await Promise.allSettled([
      ingest.submit(devices[0], 'test', [report(1, 'fine')]),
      ingest.submit(devices[1], 'test', [report(2, 'poison')]),
      ingest.submit(devices[2], 'test', [report(3, 'fine'), report(4, 'fine')]),
      ingest.submit(
        devices[0],
        'mqtt',
        [locationReport({ dateTime: '2026-03-01T10:05:00Z', latitude: 40.05, longitude: -3 })],
        { allOrNothing: true },
      ),
    ]);
    t.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    const stored = async (deviceId: string) =>
      (await s.running.db('locations').where('device_id', deviceId).orderBy('date_time').select('data')).map(
        (r: { data: string }) => JSON.parse(r.data).latitude,
      );
    t.deepEqual(await stored('dev-a'), [40.01, 40.05]);
    t.deepEqual(await stored('dev-b'), [], "nothing of the refused sender's rows");
    t.deepEqual(await stored('dev-c'), [40.03, 40.04]);
    t.deepEqual(await s.running.db('last_locations').orderBy('device_id').pluck('device_id'), ['dev-a', 'dev-c']);
    // The next batch is not held back by what was refused.
    await ingest.submit(devices[1], 'test', [report(6, 'fine')]);
    t.deepEqual(await stored('dev-b'), [40.06]);
  });

  test(`ingest.service (${backend}): a location that cannot be serialised (attributes 6,000 levels deep) fails only its sender`, async (t) => {
    const { s, devices } = await setup(t, backend);
    const ingest = s.running.services.ingest;
    const deep: Record<string, unknown> = {};
    let cursor = deep;
    for (let i = 0; i < 6000; i++) cursor = (cursor.a = {}) as Record<string, unknown>;
    const results = await Promise.allSettled([
      ingest.submit(devices[0], 'test', [report(1, 'fine')]),
      ingest.submit(
        devices[1],
        'mqtt',
        [locationReport({ dateTime: '2026-03-01T10:02:00Z', latitude: 1, longitude: 2, attributes: deep })],
        { allOrNothing: true },
      ),
      ingest.submit(
        devices[2],
        'mqtt',
        [locationReport({ dateTime: '2026-03-01T10:03:00Z', latitude: 3, longitude: 4 })],
        { allOrNothing: true },
      ),
    ]);
    t.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    t.deepEqual(await s.running.db('last_locations').orderBy('device_id').pluck('device_id'), ['dev-a', 'dev-c']);
  });
}

if ((await backends()).includes('postgres')) {
  test('ingest.service (postgres): two batches are written at once, of different devices; a device whose rows are being written waits, and its later resend wins', async (t) => {
    const { s, devices } = await setup(t, 'postgres');
    const ingest = s.running.services.ingest;
    const [x, y] = devices;
    await ingest.submit(x, 'test', [report(1, 'first')]);
    // Another session holds x's last location: a batch with x's rows waits for it.
    const holder = new pg.Client({ connectionString: s.storageEnv.TRACKGATE_DATABASE_URL });
    await holder.connect();
    t.teardown(() => holder.end());
    await holder.query('begin');
    await holder.query('select * from last_locations where device_id = $1 for update', [x.id]);
    const xFirst = ingest.submit(x, 'test', [report(2, 'blocked')]);
    let xSettled = false;
    void Promise.allSettled([xFirst]).then(() => (xSettled = true));
    // x's batch is in its transaction, waiting for the row: the next of x's rows come after it
    const waiting = await lockWaiters(t, s.storageEnv.TRACKGATE_DATABASE_URL);
    await until("x's batch waits for the lock", async () => (await waiting()) >= 1);
    const xAgain = ingest.submit(x, 'test', [report(2, 'corrected')]);
    void Promise.allSettled([xAgain]).then(() => (xSettled = true));
    const yDone = await Promise.race([
      ingest.submit(y, 'test', [report(3, 'free')]).then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), PATIENCE_MS)),
    ]);
    t.true(yDone, "another device's rows are committed while x's batch waits");
    t.false(xSettled, "x's rows wait for the lock");
    await holder.query('commit');
    await Promise.all([xFirst, xAgain]);
    const stored = await s.running
      .db('locations')
      .where({ device_id: x.id, date_time: report(2, '').fixTime!.getTime() })
      .first('data');
    t.is(JSON.parse(stored.data).attributes.note, 'corrected', "x's later submission is written after its earlier one");
    t.is(
      JSON.parse((await s.running.db('last_locations').where({ device_id: x.id }).first('data')).data).attributes.note,
      'corrected',
    );
  });
}

if ((await backends()).includes('postgres')) {
  test('ingest.service (postgres): a batch the database rolls back for a conflict with another transaction (a deadlock) is written again and committed once; one that keeps losing fails after a bounded number of attempts', async (t) => {
    const { s, devices } = await setup(t, 'postgres');
    const ingest = s.running.services.ingest;
    const db = s.running.db;
    // PostgreSQL's own deadlock error, raised by the database for rows with these notes (a
    // sequence counts the attempts: it is not rolled back with the transaction)
    await db.raw('create sequence conflict_once; create sequence conflict_always');
    await db.raw(`create function lose_conflict() returns trigger language plpgsql as $$
      begin
        if new.data like '%conflict-once%' and nextval('conflict_once') <= 2 then
          raise exception 'deadlock detected' using errcode = 'deadlock_detected';
        end if;
        if new.data like '%conflict-always%' then
          perform nextval('conflict_always');
          raise exception 'deadlock detected' using errcode = 'deadlock_detected';
        end if;
        return new;
      end $$`);
    await db.raw(
      'create trigger lose_conflict before insert on locations for each row execute function lose_conflict()',
    );
    const [x, y] = devices;
    const written = await ingest.submit(x, 'test', [report(1, 'conflict-once')]);
    t.is(written.locations.length, 1, 'acknowledged: the batch was written on its third attempt');
    t.is(Number((await db('locations').where({ device_id: x.id }).count({ n: '*' }))[0].n), 1, 'and stored once');
    t.is(
      JSON.parse((await db('device_distance').where({ device_id: x.id }).first('state')).state).lastTime,
      report(1, '').fixTime!.getTime(),
      'its distance state was saved by the attempt that committed',
    );
    await t.throwsAsync(ingest.submit(y, 'test', [report(2, 'conflict-always')]), { message: /deadlock detected/ });
    t.is(
      Number((await db.raw('select last_value from conflict_always')).rows[0].last_value),
      CONFLICT_ATTEMPTS,
      'written again a bounded number of times, then not acknowledged (the tracker resends)',
    );
    t.is(Number((await db('locations').where({ device_id: y.id }).count({ n: '*' }))[0].n), 0);
  });
}

for (const backend of await backends()) {
  test(`ingest.service (${backend}): drain resolves once every submission so far is committed, or says it is not after its time`, async (t) => {
    const { s, devices } = await setup(t, backend);
    const ingest = s.running.services.ingest;
    t.true(await ingest.drain(10), 'nothing submitted: drained at once');
    let other: pg.Client | undefined;
    if (backend === 'postgres') {
      // the write waits for the table: the event loop goes on meanwhile
      other = new pg.Client({ connectionString: s.storageEnv.TRACKGATE_DATABASE_URL });
      await other.connect();
      await other.query('BEGIN');
      await other.query('LOCK TABLE locations IN EXCLUSIVE MODE');
    }
    const submitted = [0, 1, 2].map((i) => ingest.submit(devices[i], 'test', [report(10 + i, 'fine')]));
    const stored = async () => Number((await s.running.db('locations').count({ n: '*' }))[0].n);
    if (other) {
      t.false(await ingest.drain(300), 'not within 300 ms while the table is locked');
      await other.query('ROLLBACK');
      await other.end();
    }
    t.true(await ingest.drain(5000));
    t.is(await stored(), 3, 'drained means every submission committed');
    await Promise.all(submitted);
  });
}
