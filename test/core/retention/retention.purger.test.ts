import test from 'ava';
import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { ManualClock } from '../../../core/clock.js';
import { sqliteFile } from '../../../core/db/db.js';
import { DAY_MS, PURGE_BATCH_ROWS } from '../../../core/retention/retention.purger.js';
import { backends } from '../../helpers/backends.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { teltonikaSession } from '../../helpers/tracker-client.js';
import * as F from '../../helpers/frames.js';
import { insertOldRows } from '../../helpers/old-rows.js';
import { makePartitionsAhead } from '../../../core/db/partitions/pg-partitions.js';
import { postgresAvailable } from '../../helpers/backends.js';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const ago = (days: number) => new Date(NOW - days * DAY_MS).toISOString();
const at = (dateTime: string) => ({ dateTime, latitude: 40.4, longitude: -3.7 });

async function report(s: TestServer, token: string, deviceId: string, days: number[]): Promise<void> {
  const r = await s.request('POST', `/api/devices/${deviceId}/locations`, {
    token,
    body: { locations: days.map((d) => at(ago(d))) },
  });
  if (r.status !== 201) throw new Error(`locations of ${deviceId}: ${r.status} ${JSON.stringify(r.body)}`);
}

async function history(s: TestServer, token: string, deviceId: string): Promise<string[]> {
  const r = await s.request('POST', `/api/devices/${deviceId}/locations`, {
    token,
    body: { from: ago(1000), to: ago(-1), limit: 1000 },
  });
  if (r.status !== 200) throw new Error(`history of ${deviceId}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.locations.map((l: { dateTime: string }) => l.dateTime);
}

async function alertTimes(s: TestServer, token: string, deviceId: string): Promise<string[]> {
  const r = await s.request('POST', `/api/devices/${deviceId}/alerts`, {
    token,
    body: { from: ago(1000), to: ago(-1) },
  });
  if (r.status !== 200) throw new Error(`alerts of ${deviceId}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.alerts.map((a: { dateTime: string }) => a.dateTime);
}

async function lastLocation(s: TestServer, token: string, deviceId: string): Promise<string | undefined> {
  const r = await s.request('GET', `/api/devices/${deviceId}/lastLocation`, { token });
  return r.body.lastLocation?.dateTime;
}

const sameTimes = (xs: string[]) => xs.map((x) => new Date(x).toISOString());

/** An account with its admin's token and one device. */
async function account(s: TestServer, name: string, deviceId: string) {
  const created = await s.running.services.accounts.create({ name, licenses: 10, adminUser: `${name}-admin` });
  const token = await s.token(`${name}-admin`, created.apiKey);
  const r = await s.request('POST', '/api/devices', { token, body: { id: deviceId, name: deviceId } });
  if (r.status !== 201) throw new Error(`device ${deviceId}: ${r.status} ${JSON.stringify(r.body)}`);
  return { accountId: created.accountId, token };
}

for (const backend of await backends()) {
  test(`retention (${backend}): 30 days remove positions and alerts of 400 and 40 days ago, keep yesterday's and the last location of a device silent for 400 days`, async (t) => {
    const clock = new ManualClock(NOW);
    const logger = capturingLogger();
    const s = await startServer(backend, { clock, logger, env: { TRACKGATE_RETENTION_DAYS: '30' } });
    t.teardown(() => s.stop());
    const admin = s.adminToken;
    for (const id of ['van', 'silent'])
      t.is((await s.request('POST', '/api/devices', { token: admin, body: { id, name: id } })).status, 201);
    await report(s, admin, 'van', [400, 40, 1]);
    await report(s, admin, 'silent', [401, 400]);
    for (const d of [400, 1]) {
      const r = await s.request('POST', '/api/devices/van/alerts', {
        token: admin,
        body: { alert: { alertName: 'SOSButton', dateTime: ago(d) } },
      });
      t.is(r.status, 201, JSON.stringify(r.body));
    }
    t.is((await history(s, admin, 'van')).length, 3);
    // the reports' cache of a day 400 days ago and of yesterday, and late-fix marks of both
    const db = s.running.db;
    const dayOf = (d: number) => Math.floor((NOW - d * DAY_MS) / DAY_MS) * DAY_MS;
    for (const d of [400, 1]) {
      await db('report_days').insert({
        device_id: 'van',
        day_start_ms: dayOf(d),
        day_end_ms: dayOf(d) + DAY_MS,
        params: '{}',
        first_ms: dayOf(d),
        last_ms: dayOf(d),
        marks: 0,
        data: '{}',
      });
      await db('report_marks').insert({ device_id: 'van', bucket_ms: dayOf(d), n: 1 });
    }

    const purged = await s.running.retention.purgeOnce();
    t.deepEqual(
      purged.removed.map((r) => [r.table, r.rows]),
      [
        ['locations', 4],
        ['alerts', 1],
      ],
    );
    t.deepEqual(sameTimes(await history(s, admin, 'van')), [ago(1)]);
    const cached = async (table: string, column: string) =>
      (await db(table).where('device_id', 'van').orderBy(column).pluck(column)).map(Number);
    t.deepEqual(await cached('report_days', 'day_start_ms'), [dayOf(1)], "the reports' cache of removed days goes");
    t.deepEqual(await cached('report_marks', 'bucket_ms'), [dayOf(1)]);
    t.deepEqual(sameTimes(await alertTimes(s, admin, 'van')), [ago(1)]);
    t.deepEqual(await history(s, admin, 'silent'), []);
    t.is(new Date((await lastLocation(s, admin, 'silent'))!).toISOString(), ago(400));
    t.is(new Date((await lastLocation(s, admin, 'van'))!).toISOString(), ago(1));
    const lines = logger.at('info', /^retention: removed/);
    t.deepEqual(
      lines.map((l) => [l.table, l.removed, l.retentionDays]),
      [
        ['locations', 4, 30],
        ['alerts', 1, 30],
      ],
    );
    t.is(lines[0].olderThan, ago(30));
    // a second purge finds nothing
    t.deepEqual((await s.running.retention.purgeOnce()).removed, []);
    t.is((await history(s, admin, 'van')).length, 1);
  });

  test(`retention (${backend}): an account's own retention beats the global one, 0 keeps everything, default follows the global again`, async (t) => {
    const clock = new ManualClock(NOW);
    const s = await startServer(backend, { clock, env: { TRACKGATE_RETENTION_DAYS: '30' } });
    t.teardown(() => s.stop());
    const accounts = s.running.services.accounts;
    const longer = await account(s, 'longer', 'long-1');
    const all = await account(s, 'all', 'all-1');
    const global = await account(s, 'global', 'glob-1');
    t.is((await accounts.update(longer.accountId, { retentionDays: 365 })).retentionDays, 365);
    t.is((await accounts.update(all.accountId, { retentionDays: 0 })).retentionDays, 0);
    for (const [a, id] of [
      [longer, 'long-1'],
      [all, 'all-1'],
      [global, 'glob-1'],
    ] as const)
      await report(s, a.token, id, [400, 40, 1]);

    await s.running.retention.purgeOnce();
    t.deepEqual(sameTimes(await history(s, longer.token, 'long-1')), [ago(40), ago(1)]);
    t.deepEqual(sameTimes(await history(s, all.token, 'all-1')), [ago(400), ago(40), ago(1)]);
    t.deepEqual(sameTimes(await history(s, global.token, 'glob-1')), [ago(1)]);

    // back to the global 30 days
    t.is((await accounts.update(longer.accountId, { retentionDays: null })).retentionDays, null);
    await s.running.retention.purgeOnce();
    t.deepEqual(sameTimes(await history(s, longer.token, 'long-1')), [ago(1)]);
    const refused = await accounts.update(all.accountId, { retentionDays: -1 }).catch((e: Error) => e);
    t.regex(String(refused), /retentionDays must be a whole number/);
  });

  test(`retention (${backend}): without TRACKGATE_RETENTION_DAYS everything is kept, and an account's own retention still applies`, async (t) => {
    const clock = new ManualClock(NOW);
    const s = await startServer(backend, { clock });
    t.teardown(() => s.stop());
    const admin = s.adminToken;
    const own = await account(s, 'own', 'own-1');
    t.is((await s.request('POST', '/api/devices', { token: admin, body: { id: 'd', name: 'd' } })).status, 201);
    await report(s, admin, 'd', [4000, 400, 1]);
    await report(s, own.token, 'own-1', [400, 1]);
    await s.running.services.accounts.update(own.accountId, { retentionDays: 10 });
    await s.running.retention.purgeOnce();
    t.is((await history(s, admin, 'd')).length, 2, 'history is read from 1000 days ago: 400 and 1');
    t.deepEqual(sameTimes(await history(s, own.token, 'own-1')), [ago(1)]);
  });

  test(`retention (${backend}): commands created before the retention that expired are removed, pending ones kept`, async (t) => {
    const clock = new ManualClock(NOW - 400 * DAY_MS);
    const s = await startServer(backend, { clock, env: { TRACKGATE_RETENTION_DAYS: '30' } });
    t.teardown(() => s.stop());
    const admin = s.adminToken;
    t.is((await s.request('POST', '/api/devices', { token: admin, body: { id: 'cmd', name: 'cmd' } })).status, 201);
    const db = s.running.db;
    const [accountId] = (await db('accounts').pluck('id')) as string[];
    const row = (createdAt: number, expiresAt: number) => ({
      device_id: 'cmd',
      account_id: accountId,
      command: 'x',
      format: 'text',
      status: 'expired',
      created_at: createdAt,
      expires_at: expiresAt,
    });
    await db('commands').insert([
      row(NOW - 400 * DAY_MS, NOW - 399 * DAY_MS),
      // created long ago, but still waiting for the device (a long expiry)
      { ...row(NOW - 400 * DAY_MS, NOW + DAY_MS), status: 'queued' },
      row(NOW - DAY_MS, NOW - DAY_MS + 60_000),
    ]);
    clock.set(NOW);
    const purged = await s.running.retention.purgeOnce();
    t.deepEqual(
      purged.removed.map((r) => [r.table, r.rows]),
      [['commands', 1]],
    );
    t.deepEqual(((await db('commands').orderBy('id').pluck('status')) as string[]).sort(), ['expired', 'queued']);
  });
}

test('retention (postgres): months wholly past the retention are dropped as partitions, not emptied row by row; the last location of a silent device stays', async (t) => {
  if (!(await postgresAvailable())) {
    if (process.env.CI) throw new Error('CI: PostgreSQL does not answer');
    t.pass('PostgreSQL not reachable: skipped');
    return;
  }
  const clock = new ManualClock(NOW);
  const logger = capturingLogger();
  const s = await startServer('postgres', { clock, logger, env: { TRACKGATE_RETENTION_DAYS: '30' } });
  t.teardown(() => s.stop());
  const admin = s.adminToken;
  for (const id of ['van', 'silent'])
    t.is((await s.request('POST', '/api/devices', { token: admin, body: { id, name: id } })).status, 201);
  await report(s, admin, 'van', [400, 40, 1]);
  await report(s, admin, 'silent', [401, 400]);
  for (const d of [400, 1]) {
    const r = await s.request('POST', '/api/devices/van/alerts', {
      token: admin,
      body: { alert: { alertName: 'SOSButton', dateTime: ago(d) } },
    });
    t.is(r.status, 201, JSON.stringify(r.body));
  }
  // the hourly maintenance moves what went to DEFAULT into the months' own partitions
  await makePartitionsAhead(s.running.db, NOW, 'month');
  const children = async (table: string): Promise<string[]> =>
    (
      (await s.running.db.raw(
        'select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = to_regclass(?) order by 1',
        [table],
      )) as { rows: { name: string }[] }
    ).rows.map((r) => r.name);
  const old = ['locations_p202504', 'locations_p202604', 'alerts_p202504'];
  const before = [...(await children('locations')), ...(await children('alerts'))];
  for (const name of [...old, 'locations_p202605', 'alerts_p202605']) t.true(before.includes(name), name);

  const purged = await s.running.retention.purgeOnce();
  t.deepEqual([...purged.droppedPartitions].filter((n) => old.includes(n)).sort(), [...old].sort());
  t.deepEqual(purged.removed, [], 'nothing left to delete row by row');
  const after = [...(await children('locations')), ...(await children('alerts'))];
  for (const name of old) t.false(after.includes(name), `${name} is gone from pg_inherits`);
  t.true(after.includes('locations_p202605') && after.includes('alerts_p202605'));
  t.is(logger.at('info', 'retention: dropped whole partitions').length, 1);
  t.deepEqual(sameTimes(await history(s, admin, 'van')), [ago(1)]);
  t.deepEqual(sameTimes(await alertTimes(s, admin, 'van')), [ago(1)]);
  t.deepEqual(await history(s, admin, 'silent'), []);
  t.is(new Date((await lastLocation(s, admin, 'silent'))!).toISOString(), ago(400));
});

test('retention (sqlite): a new database has auto_vacuum = INCREMENTAL; once retention holds the file stops growing', async (t) => {
  const clock = new ManualClock(NOW);
  const s = await startServer('sqlite', { clock, env: { TRACKGATE_RETENTION_DAYS: '30' } });
  t.teardown(() => s.stop());
  const db = s.running.db;
  t.is(((await db.raw('PRAGMA auto_vacuum')) as { auto_vacuum: number }[])[0].auto_vacuum, 2);
  t.is(
    (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'big', name: 'big' } })).status,
    201,
  );
  const file = sqliteFile(db)!;
  const size = async () => {
    await db.raw('PRAGMA wal_checkpoint(TRUNCATE)');
    return statSync(file).size;
  };
  // each round: 20,000 positions of today, then 16 days pass and the purge removes what is older
  // than 30 days (the round before): from the second round on, the file holds two rounds at most
  const sizes: number[] = [];
  for (let round = 0; round < 6; round++) {
    const t0 = performance.now();
    await insertOldRows(db, 'big', 20_000, clock.now().getTime() - 20_000 * 1000);
    const t1 = performance.now();
    // the most the file holds: this round and the one before
    sizes.push(await size());
    clock.advance(16 * DAY_MS);
    const purged = await s.running.retention.purgeOnce();
    t.deepEqual(
      purged.removed.map((r) => [r.table, r.rows]),
      round < 1 ? [] : [['locations', 20_000]],
    );
    t.log(
      `round ${round}: insert ${Math.round(t1 - t0)} ms, purge ${purged.tookMs} ms, ${purged.vacuumedPages} pages back`,
    );
  }
  t.log(`file after each round (bytes): ${sizes.join(', ')}`);
  // once two rounds are held, the pages of each purge hold the next round's rows: no growth beyond 10 %
  for (const later of sizes.slice(2)) t.true(later <= sizes[1] * 1.1, `${later} > 1.1 × ${sizes[1]}`);
  t.is(((await db.raw('PRAGMA freelist_count')) as { freelist_count: number }[])[0].freelist_count, 0);
});

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

for (const backend of await backends()) {
  // PostgreSQL's deletes never lock out the inserts (MVCC): a smaller backlog keeps the test short
  const backlog = backend === 'sqlite' ? 200_000 : 50_000;
  test(`retention (${backend}): purging a backlog of ${backlog} rows while a tracker sends does not hold its acknowledgements back`, async (t) => {
    const clock = new ManualClock(NOW);
    const s = await startServer(backend, {
      clock,
      env: { TRACKGATE_RETENTION_DAYS: '30', TRACKGATE_TELTONIKA_PORT: '0' },
    });
    t.teardown(() => s.stop());
    const imei = '356307042441013';
    for (const id of [imei, 'old-1'])
      t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } })).status, 201);
    await insertOldRows(s.running.db, 'old-1', backlog, NOW - 400 * DAY_MS);
    const tracker = await teltonikaSession(t, s.running.ports.teltonika, imei);
    let fixMs = NOW - 3_600_000;
    /** one frame of one fix, and the time until its acknowledgement */
    const sendOne = async (): Promise<number> => {
      fixMs += 1000;
      const started = performance.now();
      tracker.write(F.teltonikaAvl([{ time: new Date(fixMs), lat: 40.4, lon: -3.7 }]));
      const ack = await tracker.read(4);
      if (ack.readUInt32BE(0) !== 1) throw new Error(`ack ${ack.toString('hex')}`);
      return performance.now() - started;
    };
    const before: number[] = [];
    for (let i = 0; i < 40; i++) before.push(await sendOne());

    let purging = true;
    const purge = s.running.retention.purgeOnce().finally(() => {
      purging = false;
    });
    const during: number[] = [];
    while (purging) during.push(await sendOne());
    const purged = await purge;
    t.deepEqual(
      purged.removed.map((r) => [r.table, r.rows]),
      [['locations', backlog]],
    );
    const calm = Math.max(...before);
    const worst = Math.max(...during);
    const stats = (xs: number[]) =>
      `${[0.5, 0.95].map((q) => quantile(xs, q).toFixed(1)).join('/')}/${Math.max(...xs).toFixed(1)}`;
    t.log(
      `purge ${purged.tookMs} ms in ${purged.batches} batches (longest ${purged.longestBatchMs} ms); ack p50/p95/max before ${stats(before)} ms, during (${during.length}) ${stats(during)} ms`,
    );
    t.true(during.length >= 20, `only ${during.length} acknowledgements during the purge`);
    // the backlog went in batches of PURGE_BATCH_ROWS, each a short hold of the writer
    t.true(purged.batches >= backlog / PURGE_BATCH_ROWS, `${purged.batches} batches`);
    // A group commit waits for at most one batch of the purge (milliseconds): the acknowledgements
    // during the purge stay close to the calm ones (p99 against the calm p95, the many samples of
    // the purge against the few before it), and none waits for anything like the whole backlog.
    const p99 = quantile(during, 0.99);
    const bound = Math.max(250, 4 * quantile(before, 0.95));
    t.true(p99 <= bound, `p99 during the purge ${p99.toFixed(0)} ms > ${bound.toFixed(0)} ms`);
    t.true(
      worst <= Math.max(2000, 4 * calm),
      `the slowest acknowledgement during the purge took ${worst.toFixed(0)} ms`,
    );
    t.deepEqual(await history(s, s.adminToken, 'old-1'), []);
  });
}
