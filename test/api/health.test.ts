import test from 'ava';
import { copyFileSync, renameSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { startServer } from '../helpers/server.js';
import { capturingLogger } from '../helpers/capture-logger.js';
import { teltonikaSession } from '../helpers/tracker-client.js';
import * as F from '../helpers/frames.js';
import { PATIENCE_MS, until } from '../helpers/wait.js';

/** how often the SQLite file's path is compared with the file open (core/db/storage.watch.ts) */
const FILE_CHECK_MS = 2_000;

const IMEI = '356307042441013';
const T0 = Date.UTC(2026, 2, 1, 9);

test('health: storage that answers reads but refuses writes (SQLite full: its page limit reached) is "degraded" (503), and "ok" again once a write succeeds', async (t) => {
  const log = capturingLogger();
  const s = await startServer('sqlite', { logger: log, env: { TRACKGATE_TELTONIKA_PORT: '0' } });
  t.teardown(() => s.stop());
  t.is(
    (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: IMEI, name: 'full' } })).status,
    201,
  );
  const health = () => s.request('GET', '/api/health');
  t.like((await health()).body, { status: 'ok' });

  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  const avl = (i: number) => F.teltonikaAvl([{ time: new Date(T0 + i * 1000), lat: 40, lon: -3 }]);
  c.write(avl(0));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]));

  // the writer's database may not grow by a page: SQLite answers SQLITE_FULL, as on a full disk
  const db = s.running.db;
  const pages = Number((await db.raw('PRAGMA page_count'))[0].page_count);
  await db.raw(`PRAGMA max_page_count = ${pages}`);
  for (let i = 1; i <= 200 && (await health()).status === 200; i++) {
    c.write(
      F.teltonikaAvl(
        Array.from({ length: 20 }, (_, k) => ({ time: new Date(T0 + (i * 20 + k) * 1000), lat: 40, lon: -3 })),
      ),
    );
    await new Promise((r) => setTimeout(r, 20));
  }
  const degraded = await health();
  t.is(degraded.status, 503);
  t.like(degraded.body, { success: false, status: 'degraded', code: 'STORAGE_UNAVAILABLE' });
  t.regex(degraded.body.error, /^Storage refuses writes: .*disk is full/);

  await db.raw('PRAGMA max_page_count = 1073741823');
  const again = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  again.write(avl(10_000));
  t.deepEqual(await again.read(4), Buffer.from([0, 0, 0, 1]));
  t.like((await health()).body, { status: 'ok' });
});

test('health: the SQLite database file deleted while trackgate runs is "degraded" (503) with the reason, said once in the log; the tracker frame in flight and those after get no ack, REST writes answer 503, reads go on from the file still open', async (t) => {
  const log = capturingLogger();
  const s = await startServer('sqlite', { logger: log, env: { TRACKGATE_TELTONIKA_PORT: '0' } });
  t.teardown(() => s.stop());
  t.is(
    (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: IMEI, name: 'deleted' } })).status,
    201,
  );
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  const avl = (i: number) => F.teltonikaAvl([{ time: new Date(T0 + i * 1000), lat: 40, lon: -3 }]);
  c.write(avl(0));
  t.deepEqual(await c.read(4), Buffer.from([0, 0, 0, 1]));

  // the frame is on its way when the file goes (`rm trackgate.sqlite`): its write lands in the unlinked inode
  c.write(avl(1));
  unlinkSync(path.join(s.storageEnv.TRACKGATE_DATA_DIR, 'trackgate.sqlite'));
  t.true(await c.nothingFor(1500), 'a frame stored in a deleted file is not acknowledged');

  const health = await s.request('GET', '/api/health');
  t.is(health.status, 503);
  t.like(health.body, { success: false, status: 'degraded', code: 'STORAGE_UNAVAILABLE' });
  t.regex(
    health.body.error,
    /^Storage refuses writes: the database file .*trackgate\.sqlite was deleted \(or moved\) while trackgate ran/,
  );
  const write = await s.request('POST', '/api/devices', {
    token: s.adminToken,
    body: { id: '356307042441099', name: 'lost' },
  });
  t.is(write.status, 503);
  t.is(write.body.code, 'STORAGE_UNAVAILABLE');
  const read = await s.request('GET', '/api/devices', { token: s.adminToken });
  t.is(read.status, 200);
  t.deepEqual(
    read.body.devices.map((d: { id: string }) => d.id),
    [IMEI],
  );

  // later frames: no ack either, and the periodic check does not say it again
  await new Promise((r) => setTimeout(r, FILE_CHECK_MS + 500));
  c.write(avl(2));
  t.true(await c.nothingFor(1000));
  t.false(c.closed, 'the connection stays open');
  t.is(log.at('error', /^the database file is gone/).length, 1, 'said once');
});

test('health: the SQLite database file replaced while trackgate runs (a backup copied over it) is "degraded" (503) within the file check', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const file = path.join(s.storageEnv.TRACKGATE_DATA_DIR, 'trackgate.sqlite');
  copyFileSync(file, `${file}.copy`);
  renameSync(`${file}.copy`, file);
  await until('health degraded', async () => (await s.request('GET', '/api/health')).status === 503, PATIENCE_MS, 100);
  t.regex(
    (await s.request('GET', '/api/health')).body.error,
    /^Storage refuses writes: the database file .* was replaced by another file while trackgate ran/,
  );
});
