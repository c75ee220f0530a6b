import test from 'ava';
import { startServer } from '../helpers/server.js';
import { capturingLogger } from '../helpers/capture-logger.js';
import { teltonikaSession } from '../helpers/tracker-client.js';
import * as F from '../helpers/frames.js';

const IMEI = '356307042441013';
const T0 = Date.UTC(2026, 2, 1, 9);

test('health: storage that answers reads but refuses writes (SQLite full: its page limit reached) is "degraded" (503), and "ok" again once a write succeeds', async (t) => {
  const log = capturingLogger();
  const s = await startServer('sqlite', { logger: log, env: { TRACKGATE_TELTONIKA_PORT: '0' } });
  t.teardown(() => s.stop());
  t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: IMEI, name: 'full' } })).status, 201);
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
    c.write(F.teltonikaAvl(Array.from({ length: 20 }, (_, k) => ({ time: new Date(T0 + (i * 20 + k) * 1000), lat: 40, lon: -3 }))));
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
