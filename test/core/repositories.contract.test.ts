import test from 'ava';
import type Database from 'better-sqlite3';
import { backends, createStorage, type Backend } from '../helpers/backends.js';
import { openDb, migrate, closeDb, SQLITE_WAL_CHECKPOINT_PAGES, type Db } from '../../core/db/db.js';
import * as accounts from '../../core/accounts/accounts.repository.js';
import * as devices from '../../core/devices/devices.repository.js';
import * as locations from '../../core/locations/locations.repository.js';
import * as alerts from '../../core/alerts/alerts.repository.js';
import * as groups from '../../core/groups/groups.repository.js';
import * as outbox from '../../core/notify/outbox.repository.js';
import * as unknown from '../../core/devices/unknown-devices.repository.js';
import * as zones from '../../core/rules/zones.repository.js';
import * as rules from '../../core/rules/alert-rules.repository.js';
import * as forwardsRepo from '../../core/forward/forwards.repository.js';
import type { DeviceRecord } from '../../core/model/device.js';
import type { AlertRule } from '../../core/model/alert-rule.js';
import type { Location } from '../../core/model/location.js';

// One contract for the storage behind knex: every backend must behave the same.
async function openFresh(t: { teardown(fn: () => unknown): void }, backend: Backend): Promise<Db> {
  const storage = await createStorage(backend);
  const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
  t.teardown(async () => {
    await closeDb(db);
    await storage.cleanup();
  });
  await migrate(db);
  await accounts.insert(db, { id: 'acc', name: 'A', licenses: 5, timeZone: 'UTC', createdAt: 0 });
  return db;
}

const dev = (id: string, expiresAt: number | null = null): DeviceRecord => ({
  id,
  accountId: 'acc',
  name: id,
  description: null,
  min: null,
  tags: {},
  expiresAt,
  dailyEmailLimit: 10,
  dailySmsLimit: 10,
  alertEmails: [],
  alertPhones: [],
  protocol: null,
  lastConnection: null,
  model: null,
  protocolOptions: {},
  mqttPasswordHash: null,
  creation: 0,
  modification: 0,
});

/** The statements knex sends while `fn` runs (transaction control aside: begin, commit, savepoints). */
async function statements<T>(db: Db, fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  const sql: string[] = [];
  const seen = (q: { sql: string }) => {
    if (!/^(begin|commit|rollback|savepoint|release)\b/i.test(q.sql.trim())) sql.push(q.sql);
  };
  db.on('query', seen);
  try {
    return { result: await fn(), sql };
  } finally {
    db.off('query', seen);
  }
}

const loc = (deviceId: string, t: number, lat = 1) => ({
  deviceId,
  dateTime: t,
  serverTime: 5,
  location: { dateTime: new Date(t).toISOString(), latitude: lat, longitude: 2 },
});

for (const backend of await backends()) {
  if (backend === 'sqlite')
    test('repositories (sqlite): the writer is WAL and durable, and checkpoints only every SQLITE_WAL_CHECKPOINT_PAGES (not after nearly every group commit)', async (t) => {
      const db = await openFresh(t, 'sqlite');
      const conn = (await db.client.acquireConnection()) as Database.Database;
      try {
        t.is(conn.pragma('journal_mode', { simple: true }), 'wal');
        t.is(conn.pragma('synchronous', { simple: true }), 2, 'FULL');
        t.is(SQLITE_WAL_CHECKPOINT_PAGES, 10_000);
        t.is(conn.pragma('wal_autocheckpoint', { simple: true }), SQLITE_WAL_CHECKPOINT_PAGES, "not SQLite's 1,000");
      } finally {
        await db.client.releaseConnection(conn);
      }
    });

  test(`repositories (${backend}): migrations are idempotent`, async (t) => {
    const db = await openFresh(t, backend);
    t.deepEqual(await migrate(db), []);
  });

  test(`repositories (${backend}): last connections are written without waiting for the disk, and the writer is durable again for what follows`, async (t) => {
    const db = await openFresh(t, backend);
    await devices.insert(db, dev('d1'));
    await devices.insert(db, dev('d2'));
    // SQLite: the synchronous setting seen by each update of the write, through the statements the connection prepares
    const seen: number[] = [];
    const conn = backend === 'sqlite' ? ((await db.client.acquireConnection()) as Database.Database) : undefined;
    if (conn) await db.client.releaseConnection(conn);
    if (conn) {
      const prepare = conn.prepare.bind(conn);
      conn.prepare = ((source: string) => {
        const st = prepare(source);
        if (!/^update devices/i.test(source)) return st;
        const run = st.run.bind(st);
        st.run = ((...params: unknown[]) => {
          seen.push(conn.pragma('synchronous', { simple: true }) as number);
          return run(...params);
        }) as typeof st.run;
        return st;
      }) as typeof conn.prepare;
    }
    const { sql } = await statements(db, () =>
      devices.touchConnections(db, [
        { id: 'd2', protocol: 'gt06', atMs: 2000 },
        { id: 'd1', protocol: 'teltonika', atMs: 1000 },
      ]),
    );
    if (conn) {
      t.deepEqual(seen, [1, 1], 'NORMAL (no fsync at its commit) while it writes');
      t.is(conn.pragma('synchronous', { simple: true }), 2, 'FULL again');
    } else {
      t.true(
        sql.some((q) => /set local synchronous_commit = off/i.test(q)),
        sql.join('\n'),
      );
    }
    const read = await devices.findById(db, 'd1');
    t.is(read?.lastConnection, 1000);
    t.is(read?.protocol, 'teltonika');
    t.is((await devices.findById(db, 'd2'))?.lastConnection, 2000);
    // a location batch after it commits durably
    await locations.insertMany(db, [loc('d1', 3000)]);
    if (conn) t.is(conn.pragma('synchronous', { simple: true }), 2);
  });

  test(`repositories (${backend}): locations are unique per device and fix time; the last one is the latest fix`, async (t) => {
    const db = await openFresh(t, backend);
    await devices.insert(db, dev('d1'));
    const first = await locations.insertMany(db, [loc('d1', 2000), loc('d1', 1000), loc('d1', 2000, 9)]);
    t.deepEqual(
      first.map((r) => [r.dateTime, r.location.latitude]),
      [
        [2000, 9],
        [1000, 1],
      ],
      'a duplicate inside one batch: the last wins',
    );
    await devices.insert(db, dev('d3'));
    await devices.insert(db, dev('d4'));
    const interleaved = await locations.insertMany(db, [
      loc('d3', 100),
      loc('d4', 100),
      loc('d3', 200),
      loc('d3', 200, 8),
    ]);
    t.deepEqual(
      interleaved.map((r) => [r.deviceId, r.dateTime, r.location.latitude]),
      [
        ['d3', 100, 1],
        ['d4', 100, 1],
        ['d3', 200, 8],
      ],
      'the same fix time of two devices is two rows; a device repeating its latest fix: the last wins',
    );
    const again = await locations.insertMany(db, [loc('d1', 1000, 7), loc('d1', 500)]);
    t.deepEqual(
      again.map((r) => r.dateTime),
      [1000, 500],
      'a correction and a new fix are written',
    );
    const last = await locations.lastWithOwner(db, 'd1');
    t.is(last?.accountId, dev('d1').accountId, 'the owner comes with it');
    const lastLocation = JSON.parse(last!.data!) as { dateTime: string; latitude: number };
    t.is(lastLocation.dateTime, new Date(2000).toISOString(), 'an older fix received later is not the last');
    t.is(lastLocation.latitude, 9, 'the last of the batch was stored');
    await devices.insert(db, dev('d2'));
    t.like(await locations.lastWithOwner(db, 'd2'), { data: null }, 'a device without locations');
    t.is(await locations.lastWithOwner(db, 'ghost'), undefined, 'no such device');
    const page1 = await locations.range(db, { deviceId: 'd1', fromMs: 0, toMs: 5000, limit: 2 });
    t.deepEqual(
      page1.locations.map((l) => l.dateTime),
      [500, 1000].map((x) => new Date(x).toISOString()),
    );
    t.is(page1.locations[1].latitude, 7, 'the corrected values are stored');
    t.true(page1.more);
    const page2 = await locations.range(db, {
      deviceId: 'd1',
      fromMs: 0,
      toMs: 5000,
      limit: 2,
      afterMs: page1.lastMs!,
    });
    t.deepEqual(
      page2.locations.map((l) => l.dateTime),
      [new Date(2000).toISOString()],
    );
    t.false(page2.more);
  });

  for (const where of ['in a transaction', 'outside a transaction'] as const) {
    test(`repositories (${backend}): an identical resend changes nothing, another value corrects the stored fix and the last location (${where})`, async (t) => {
      const db = await openFresh(t, backend);
      await devices.insert(db, dev('d1'));
      const write = (rows: ReturnType<typeof loc>[]) =>
        where === 'in a transaction'
          ? db.transaction((trx) => locations.insertMany(trx, rows))
          : locations.insertMany(db, rows);
      const at = (t0: number, lat: number, serverTime: string, extra: Record<string, unknown> = {}) => {
        const r = loc('d1', t0, lat);
        return { ...r, location: { ...r.location, serverTime, ...extra } };
      };
      t.is((await write([at(1000, 1, 'first'), at(2000, 2, 'first', { attributes: { a: 1, b: [1, 2] } })])).length, 2);
      t.deepEqual(
        await write([at(2000, 2, 'later', { attributes: { b: [1, 2], a: 1 } })]),
        [],
        'same values (serverTime and key order aside): nothing written',
      );
      const stored = JSON.parse((await locations.lastWithOwner(db, 'd1'))!.data!);
      t.is(stored.serverTime, 'first', 'the identical resend left the stored row alone');
      const nulls = JSON.parse(JSON.stringify({ ...at(1000, 1, 'later').location, speed: null }));
      t.deepEqual(
        await write([{ ...loc('d1', 1000, 1), location: nulls }]),
        [],
        'null is no value: the same as absent',
      );
      const corrected = await write([at(2000, 2.5, 'later')]);
      t.deepEqual(
        corrected.map((r) => r.location.latitude),
        [2.5],
      );
      const last = JSON.parse((await locations.lastWithOwner(db, 'd1'))!.data!);
      t.like(last, { latitude: 2.5, serverTime: 'later' }, 'correcting the last fix corrects the last location');
      t.false('attributes' in last, 'the correction replaces the whole location');
      await write([at(1000, 1.5, 'later')]);
      t.is(
        JSON.parse((await locations.lastWithOwner(db, 'd1'))!.data!).latitude,
        2.5,
        'correcting an older fix leaves the last location',
      );
      t.deepEqual(
        (await locations.findMany(db, 'd1', [1000, 2000])).map((l) => l.latitude),
        [1.5, 2.5],
      );
    });
  }

  test(`repositories (${backend}): a row the database refuses is told apart from an unreachable database`, async (t) => {
    const db = await openFresh(t, backend);
    const refused = await locations
      .insertMany(db, [{ ...loc('d1', 1000), deviceId: null as unknown as string }])
      .catch((e: unknown) => e);
    t.true(locations.isRefusedRow(refused), String(refused));
    t.false(locations.isRefusedRow(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
    t.false(locations.isRefusedRow(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })));
  });

  test(`repositories (${backend}): devices by status and group; licences counted at an instant`, async (t) => {
    const db = await openFresh(t, backend);
    await devices.insert(db, dev('a'));
    await devices.insert(db, dev('b', 1000));
    await devices.insert(db, dev('c', 5000));
    const ids = async (status: 'active' | 'expired' | 'all', nowMs: number, groupId?: string) =>
      (await devices.list(db, { accountId: 'acc', status, nowMs, groupId })).map((d) => d.id);
    t.deepEqual(await ids('active', 2000), ['a', 'c']);
    t.deepEqual(await ids('expired', 2000), ['b']);
    t.deepEqual(await ids('all', 2000), ['a', 'b', 'c']);
    t.is(await accounts.countActiveDevices(db, 'acc', 999), 3);
    t.is(await accounts.countActiveDevices(db, 'acc', 1000), 2, 'a device expires at its instant');
    t.is(await accounts.countActiveDevices(db, 'acc', 6000), 1);
    await groups.insert(db, { id: 'g', accountId: 'acc', name: 'G', description: null, creation: 0, lastModified: 0 });
    await groups.setDevices(db, 'g', ['c', 'b']);
    t.deepEqual(await ids('all', 2000, 'g'), ['b', 'c']);
    t.deepEqual(Object.fromEntries(await devices.groupsOf(db, ['a', 'b'])), { b: ['g'] });
    await devices.remove(db, 'c');
    t.deepEqual((await groups.devicesOf(db, ['g'])).get('g'), ['b']);
  });

  test(`repositories (${backend}): alerts in time order, filtered by name, found again by device, time and name`, async (t) => {
    const db = await openFresh(t, backend);
    const base = {
      deviceId: 'd1',
      latitude: null,
      longitude: null,
      text: null,
      alerts: [],
      notifications: [],
      suppressed: {},
      createdAt: 0,
    };
    await alerts.insert(db, { ...base, dateTime: 3000, alertName: 'SpeedLimit' });
    const sos = await alerts.insert(db, { ...base, dateTime: 1000, alertName: 'SOSButton' });
    await alerts.insert(db, { ...base, dateTime: 2000, alertName: 'SOSButton' });
    t.deepEqual(
      (await alerts.range(db, { deviceId: 'd1', fromMs: 0, toMs: 9999, limit: 10 })).alerts.map((a) => a.alertName),
      ['SOSButton', 'SOSButton', 'SpeedLimit'],
    );
    t.is(
      (await alerts.range(db, { deviceId: 'd1', fromMs: 0, toMs: 9999, alertName: 'SOSButton', limit: 10 })).alerts
        .length,
      2,
    );
    t.is((await alerts.findSame(db, 'd1', 1000, 'SOSButton'))?.id, sos.id);
    t.is(await alerts.findSame(db, 'd1', 1000, 'SpeedLimit'), undefined);
  });

  test(`repositories (${backend}): an outbox message is leased by one worker at a time`, async (t) => {
    const db = await openFresh(t, backend);
    const row = {
      alertId: 1,
      deviceId: 'd1',
      channel: 'Email' as const,
      subject: 's',
      body: 'b',
      html: null,
      alertName: 'X',
      quotaKey: 'k',
      quotaLimit: 1,
      quotaExpiresAt: 9e12,
      nextAttemptAt: 0,
      createdAt: 0,
    };
    await outbox.insertMany(
      db,
      Array.from({ length: 20 }, (_, i) => ({ ...row, recipient: `r${i}@example.com` })),
    );
    const [a, b] = await Promise.all([outbox.leaseDue(db, 1000, 61_000, 50), outbox.leaseDue(db, 1000, 61_000, 50)]);
    t.is(a.length + b.length, 20);
    t.is(new Set([...a, ...b].map((r) => r.id)).size, 20, 'no message leased twice');
    t.is((await outbox.leaseDue(db, 2000, 62_000, 50)).length, 0, 'leases hold');
    const busy = [a[0]?.id ?? b[0].id, (b[0] ?? a[1]).id];
    const again = await outbox.leaseDue(db, 61_001, 121_000, 50, busy);
    t.is(again.length, 18, 'expired leases are taken again, but not the ones the worker says it is still sending');
    t.false(again.some((r) => busy.includes(r.id)));
    t.is((await outbox.leaseDue(db, 121_001, 181_000, 50)).length, 20);
    await outbox.markSent(db, a[0]?.id ?? b[0].id, 5);
    t.is(await outbox.countHolding(db, 'k', 'd1', 0), 20);
    t.is(await outbox.countHolding(db, 'k', 'd1', 1), 0, 'rows older than the day asked for are not read');
  });

  test(`repositories (${backend}): unknown identifiers add up their attempts`, async (t) => {
    const db = await openFresh(t, backend);
    const s = {
      identifier: '123',
      protocol: 'gt06',
      reason: 'unknown' as const,
      remoteAddress: '10.0.0.1',
      firstSeen: 1000,
      lastSeen: 1000,
      attempts: 2,
    };
    await unknown.upsertMany(db, [s]);
    await unknown.upsertMany(db, [{ ...s, lastSeen: 5000, attempts: 3, remoteAddress: '10.0.0.2' }]);
    t.like((await unknown.recent(db, 10))[0], {
      identifier: '123',
      attempts: 5,
      remoteAddress: '10.0.0.2',
      firstSeen: new Date(1000).toISOString(),
      lastSeen: new Date(5000).toISOString(),
    });
  });

  test(`repositories (${backend}): zones and alert rules come back as stored; the engine reads enabled rules and the account's zones`, async (t) => {
    const db = await openFresh(t, backend);
    await accounts.insert(db, { id: 'other', name: 'B', licenses: 5, timeZone: 'UTC', createdAt: 0 });
    const circle = {
      id: 'z1',
      accountId: 'acc',
      name: 'Depot',
      type: 'circle' as const,
      center: { latitude: 40.416_812_345, longitude: -3.703_812_345 },
      radius: 250.5,
      polygon: null,
      created: 1,
    };
    const polygon = {
      id: 'z2',
      accountId: 'acc',
      name: 'Yard',
      type: 'polygon' as const,
      center: null,
      radius: null,
      polygon: [
        [0, 0],
        [1.5, 0],
        [0, 1.25],
        [0, 0],
      ] as [number, number][],
      created: 2,
    };
    await zones.insert(db, polygon);
    await zones.insert(db, circle);
    await zones.insert(db, { ...circle, id: 'z3', accountId: 'other' });
    t.deepEqual(await zones.zonesOfAccount(db, 'acc'), [circle, polygon], 'oldest first, coordinates exact');
    t.deepEqual(await zones.zonesByIds(db, 'acc', ['z2', 'z3']), [polygon], "another account's id is left out");
    const rule: AlertRule = {
      id: 'r1',
      accountId: 'acc',
      name: 'Speeding',
      alertName: 'SpeedLimit',
      devices: ['d1', 'd2'],
      group: null,
      enabled: true,
      params: { speed: 90 },
      minDurationSeconds: 60,
      schedule: { days: [1, 2], from: '08:00', to: '18:00' },
      notify: { email: true, sms: false },
      command: { command: 'stop', format: 'Text', delaySeconds: 5 },
      created: 1,
    };
    const zoned: AlertRule = {
      ...rule,
      id: 'r2',
      name: 'Zone',
      alertName: 'ForbiddenArea',
      devices: ['d1'],
      params: { zone: 'z1' },
      schedule: null,
      command: null,
      notify: { email: false, sms: true },
      created: 2,
    };
    const off: AlertRule = { ...rule, id: 'r3', name: 'Off', enabled: false, created: 3 };
    for (const r of [off, zoned, rule]) await rules.insert(db, r);
    t.deepEqual(await rules.listEnabledRules(db, 'acc'), [rule, zoned]);
    t.deepEqual(await rules.listByAccount(db, 'acc'), [rule, zoned, off]);
    t.deepEqual(await rules.namesUsingZone(db, 'z1'), ['Zone']);
    t.deepEqual(await rules.namesUsingZone(db, 'z2'), []);
    t.is(await rules.forgetDevice(db, 'acc', 'd1'), 3);
    t.deepEqual(
      (await rules.listByAccount(db, 'acc')).map((r) => r.devices),
      [['d2'], null, ['d2']],
    );
  });

  test(`repositories (${backend}): a deleted device leaves the rules' device lists; what names a group is read from the groups' side`, async (t) => {
    const db = await openFresh(t, backend);
    const rule: AlertRule = {
      id: 'r1',
      accountId: 'acc',
      name: 'Speeding',
      alertName: 'SpeedLimit',
      devices: ['d1', 'd2'],
      group: null,
      enabled: true,
      params: { speed: 90 },
      minDurationSeconds: 0,
      schedule: null,
      notify: { email: false, sms: false },
      command: null,
      created: 1,
    };
    for (const r of [
      rule,
      { ...rule, id: 'r2', name: 'Only d1', devices: ['d1'], created: 2 },
      { ...rule, id: 'r3', name: 'Other', devices: ['d3'], created: 3 },
    ])
      await rules.insert(db, r);
    t.is(await devices.forgetInRules(db, 'acc', 'd1'), 2);
    t.deepEqual(
      (await rules.listByAccount(db, 'acc')).map((r) => r.devices),
      [['d2'], null, ['d3']],
      'null once empty',
    );
    t.is(await devices.forgetInRules(db, 'acc', 'd1'), 0);
    await groups.insert(db, {
      id: 'g1',
      accountId: 'acc',
      name: 'Fleet',
      description: null,
      creation: 1,
      lastModified: 1,
    });
    t.deepEqual(await groups.ruleNamesUsing(db, 'g1'), []);
    await rules.insert(db, { ...rule, id: 'r4', name: 'Fleet speed', devices: null, group: 'g1', created: 4 });
    t.deepEqual(await groups.ruleNamesUsing(db, 'g1'), ['Fleet speed']);
    t.deepEqual(await groups.forwardNamesUsing(db, 'g1'), []);
    t.deepEqual(await groups.usersRestrictedTo(db, 'g1'), []);
  });

  test(`repositories (${backend}): a batch of more rows than 65,535 parameters can carry is stored in one go: one statement on PostgreSQL, one per step when some rows are resends`, async (t) => {
    const db = await openFresh(t, backend);
    const n = 20_000; // 65,535 / 4 columns = 16,383 rows per statement at most with one parameter per value
    const devicesCount = 50;
    for (let d = 0; d < devicesCount; d++) await devices.insert(db, dev(`d${d}`));
    const rows = Array.from({ length: n }, (_, i) =>
      loc(`d${i % devicesCount}`, 1_700_000_000_000 + Math.floor(i / devicesCount) * 1000, i / 1000),
    );
    const { result: written, sql } = await statements(db, () =>
      db.transaction((trx) => locations.insertMany(trx, rows)),
    );
    t.is(written.length, n);
    if (backend === 'postgres')
      t.is(sql.length, 1, `one statement inserts the history and upserts the last locations, not ${sql.length}`);
    const count = (await db('locations').count({ n: '*' }).first()) as { n: number | string };
    t.is(Number(count.n), n);
    const last = JSON.parse((await locations.lastWithOwner(db, 'd7'))!.data!) as Location;
    t.is(last.latitude, (n - devicesCount + 7) / 1000, "each device's last location is its latest fix");
    // the same batch again: every row is an identical resend (one read, nothing written)
    const again = await statements(db, () => db.transaction((trx) => locations.insertMany(trx, rows)));
    t.deepEqual(again.result, []);
    if (backend === 'postgres')
      t.is(
        again.sql.length,
        3,
        'the insert of new rows (refused: a key is stored), the insert that skips stored rows, one read of the stored rows',
      );
    // every row corrected: one update for all of them
    const corrected = rows.map((r) => ({ ...r, location: { ...r.location, speed: 3 } }));
    const third = await statements(db, () => db.transaction((trx) => locations.insertMany(trx, corrected)));
    t.is(third.result.length, n);
    if (backend === 'postgres')
      t.is(third.sql.length, 5, 'both inserts, one read, one update, one upsert of the last locations');
    t.is((await locations.findMany(db, 'd3', [1_700_000_000_000]))[0].speed, 3);
  });

  test(`repositories (${backend}): a location comes back exactly as stored: nulls, nested attributes, times, unicode and characters arrays must escape`, async (t) => {
    const db = await openFresh(t, backend);
    await devices.insert(db, dev('dé 🚚'));
    const tricky =
      'quote " backslash \\ braces {} comma , NULL null \u0000 nul tab\t newline\n emoji 🚚 accents ñandú 東京';
    const full: Location = {
      dateTime: '2026-11-21T08:00:00.123Z',
      serverTime: '2026-11-21T08:00:01.456Z',
      latitude: -33.868_820_123_456,
      longitude: 151.209_295_987_654,
      speed: 0,
      course: 359.9,
      altitude: null as unknown as number,
      attributes: {
        text: tricky,
        nested: { list: [1, 'two', null, { three: [true, false] }], empty: {} },
        big: 2 ** 53 - 1,
        tiny: 1e-12,
        NULL: 'NULL',
      },
      warningTexts: ['{"a":1}', 'NULL', ''],
      inputs: [true, false],
      accessoriesAttributes: [{ name: tricky }],
    } as Location;
    const rows = [
      {
        deviceId: 'dé 🚚',
        dateTime: Date.parse(full.dateTime),
        serverTime: Date.parse(full.serverTime!),
        location: full,
      },
      {
        deviceId: 'dé 🚚',
        dateTime: Date.parse(full.dateTime) - 1,
        serverTime: 1,
        location: {
          dateTime: new Date(Date.parse(full.dateTime) - 1).toISOString(),
          latitude: 0.1,
          longitude: -0.1,
        } as Location,
      },
    ];
    for (const where of ['in a transaction', 'outside a transaction']) {
      const written =
        where === 'in a transaction'
          ? await db.transaction((trx) => locations.insertMany(trx, rows))
          : await locations.insertMany(db, rows);
      t.is(written.length, where === 'in a transaction' ? 2 : 0, `${where}: the second time, identical resends`);
    }
    const back = await locations.findMany(db, 'dé 🚚', rows.map((r) => r.dateTime).reverse());
    t.deepEqual(
      back,
      [rows[1].location, full].map((l) => JSON.parse(JSON.stringify(l))),
      'oldest first, every value as given (JSON null kept as stored)',
    );
    t.deepEqual(JSON.parse((await locations.lastWithOwner(db, 'dé 🚚'))!.data!), JSON.parse(JSON.stringify(full)));
    const range = await locations.range(db, {
      deviceId: 'dé 🚚',
      fromMs: rows[1].dateTime,
      toMs: rows[0].dateTime,
      limit: 10,
    });
    t.is(range.lastMs, rows[0].dateTime, 'millisecond fix times');
  });

  test(`repositories (${backend}): written rows come back in the order given, across devices, with duplicates, resends and corrections mixed`, async (t) => {
    const db = await openFresh(t, backend);
    for (const id of ['aa', 'bb', 'mm', 'zz']) await devices.insert(db, dev(id));
    const rows = [loc('zz', 3000), loc('aa', 2000), loc('mm', 1000), loc('aa', 1000), loc('zz', 1000)];
    t.deepEqual(
      (await db.transaction((trx) => locations.insertMany(trx, rows))).map((r) => [r.deviceId, r.dateTime]),
      rows.map((r) => [r.deviceId, r.dateTime]),
    );
    const next = [
      loc('zz', 4000),
      loc('aa', 2000),
      loc('mm', 1000, 5),
      loc('aa', 500),
      loc('zz', 4000, 8),
      loc('bb', 1),
    ];
    for (const write of [
      (r: typeof next) => db.transaction((trx) => locations.insertMany(trx, r)),
      (r: typeof next) => locations.insertMany(db, r),
    ]) {
      await db('locations')
        .where({ device_id: 'aa', date_time: 500 })
        .orWhere({ device_id: 'bb' })
        .orWhere({ device_id: 'zz', date_time: 4000 })
        .delete();
      await db('locations')
        .where({ device_id: 'mm' })
        .update({ data: JSON.stringify(loc('mm', 1000).location) });
      const written = await write(next);
      t.deepEqual(
        written.map((r) => [r.deviceId, r.dateTime, r.location.latitude]),
        [
          ['zz', 4000, 8],
          ['mm', 1000, 5],
          ['aa', 500, 1],
          ['bb', 1, 1],
        ],
        'the duplicate key at the place of the first with the last values; the identical resend left out',
      );
    }
    const lastOf = async (id: string) =>
      (JSON.parse((await locations.lastWithOwner(db, id))?.data ?? 'null') as Location | null)?.latitude;
    t.is(await lastOf('zz'), 8);
  });

  test(`repositories (${backend}): forward events get increasing ids in the order given, many in one statement on PostgreSQL`, async (t) => {
    const db = await openFresh(t, backend);
    const n = 15_000; // 65,535 / 5 columns = 13,107 rows per statement at most with one parameter per value
    const events = Array.from({ length: n }, (_, i) => ({
      accountId: i % 3 === 0 ? 'acc' : 'other',
      deviceId: `d${(n - i) % 7}`,
      kind: (i % 5 ? 'location' : 'alert') as 'location' | 'alert',
      body: `{"i":${i},"s":"é\\"{,}"}`,
      createdAt: 1000 + i,
    }));
    const { sql } = await statements(db, () =>
      db.transaction(async (trx) => {
        await forwardsRepo.lockStreams(trx, ['other', 'acc', 'other']);
        await forwardsRepo.insertEvents(trx, events);
      }),
    );
    if (backend === 'postgres') t.is(sql.length, 2, 'one statement locks the streams, one inserts the events');
    for (const account of ['acc', 'other']) {
      const read = await forwardsRepo.readEvents(db, account, 0, n);
      const expected = events.filter((e) => e.accountId === account);
      t.deepEqual(
        read.map((e) => [e.deviceId, e.kind, e.body, e.createdAt]),
        expected.map((e) => [e.deviceId, e.kind, e.body, e.createdAt]),
        `${account}: in the order given, values exact`,
      );
      t.true(read.every((e, i) => i === 0 || e.id > read[i - 1].id));
    }
  });

  if (backend === 'postgres') {
    test('repositories (postgres): two transactions writing the same keys in opposite orders at once both commit (rows locked in one order: no deadlock)', async (t) => {
      const db = await openFresh(t, backend);
      const rows = Array.from({ length: 20_000 }, (_, i) => loc(`d${i % 40}`, 1000 + Math.floor(i / 40) * 1000));
      let arrived = 0;
      let go!: () => void;
      const bothIn = new Promise<void>((r) => (go = r));
      const write = (batch: typeof rows) =>
        db.transaction(async (trx) => {
          await trx.raw('select 1');
          if (++arrived === 2) go();
          await bothIn;
          return locations.insertMany(trx, batch);
        });
      const [a, b] = await Promise.all([write(rows), write([...rows].reverse())]);
      t.is(
        a.length + b.length,
        rows.length,
        'each row written once: by whichever committed first; the other found an identical resend',
      );
      const count = (await db('locations').count({ n: '*' }).first()) as { n: number | string };
      t.is(Number(count.n), rows.length);
    });
  }
}
