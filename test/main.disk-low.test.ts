import test from 'ava';
import { closeSync, openSync, statfsSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startServer, type TestServer } from './helpers/server.js';
import { backends } from './helpers/backends.js';
import { capturingLogger } from './helpers/capture-logger.js';
import { canMountTmpfs, smallDisk } from './helpers/small-disk.js';
import { until } from './helpers/wait.js';

const MiB = 2 ** 20;
const covered = await backends();
const tmpfs = canMountTmpfs() ? test.serial : test.skip;

const freeOf = (dir: string) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

/** Writes zeros into `dir` until `leaveBytes` are free; returns what deletes them. */
function fillTo(dir: string, leaveBytes: number): () => void {
  const file = path.join(dir, `filler-${leaveBytes}`);
  const fd = openSync(file, 'a');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (let left = freeOf(dir) - leaveBytes; left > 0; left -= block.length)
      writeSync(fd, block, 0, Math.min(block.length, left));
  } finally {
    closeSync(fd);
  }
  return () => unlinkSync(file);
}

/** A sample of GET /metrics without labels, or undefined when there is none. */
async function sample(s: TestServer, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${s.base}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

tmpfs(
  'main (sqlite): free space and the database size in /metrics; below TRACKGATE_DISK_WARN a warn line, below TRACKGATE_DISK_ERROR an error line and health 503 degraded STORAGE_LOW, back above an info line and health ok',
  async (t) => {
    const disk = smallDisk(t, 20 * 1024);
    const dataDir = path.join(disk.dir, 'data');
    const log = capturingLogger();
    const s = await startServer('sqlite', {
      storageEnv: { TRACKGATE_DATA_DIR: dataDir },
      env: { TRACKGATE_DISK_WARN: '8MiB', TRACKGATE_DISK_ERROR: '5%,4MiB', TRACKGATE_DISK_CHECK_INTERVAL: '1' },
      logger: log,
    });
    t.teardown(() => s.stop());
    const diskLines = () => log.entries.filter((e) => /^free disk space/.test(e.msg));

    const free = await sample(s, 'trackgate_storage_free_bytes');
    t.true(free !== undefined && Math.abs(free - freeOf(dataDir)) < MiB, `${free} ~ ${freeOf(dataDir)}`);
    const file = path.join(dataDir, 'trackgate.sqlite');
    const onDisk = () => statSync(file).size + (statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    t.is(await sample(s, 'trackgate_storage_database_bytes'), onDisk());
    t.is((await s.request('GET', '/api/health')).status, 200);
    t.deepEqual(diskLines(), [], 'nothing said while space is plenty');

    const freeWarn = fillTo(disk.dir, 6 * MiB);
    await until('the warn line', () => diskLines().length >= 1);
    const [warn] = diskLines();
    t.is(warn.level, 'warn');
    t.regex(
      warn.msg,
      /^free disk space is low: [56]\.\d MiB free of 20\.0 MiB where the database lives, below TRACKGATE_DISK_WARN \(8\.0 MiB\); /,
    );
    t.true((warn.freeBytes as number) <= 6 * MiB);
    // the days are said as the fields have them
    const days = warn.daysLeft;
    if (days === 'unknown') t.regex(warn.msg, /days of ingest left unknown/);
    else if (days === 'not growing') t.regex(warn.msg, /the database is not growing$/);
    else t.regex(warn.msg, new RegExp(`about ${days} days of ingest at the current rate`));
    const lower = await sample(s, 'trackgate_storage_free_bytes');
    t.true(lower !== undefined && lower <= 6 * MiB, 'the metric follows the file system');
    t.is((await s.request('GET', '/api/health')).status, 200, 'below warn only: health stays ok');

    const freeError = fillTo(disk.dir, 2 * MiB);
    await until('health degraded', async () => (await s.request('GET', '/api/health')).status === 503);
    const health = await s.request('GET', '/api/health');
    t.like(health.body, { success: false, status: 'degraded', code: 'STORAGE_LOW' });
    t.regex(
      health.body.reason,
      /^Free disk space is very low: [12]\.\d MiB left \(below TRACKGATE_DISK_ERROR, 4\.0 MiB\), (days of ingest left unknown|about [\d.]+ days of ingest|the database is not growing)/,
    );
    t.is(health.body.error, health.body.reason);
    // health reads free space at each request; the line comes with the next check
    await until('the error line', () => diskLines().length >= 2);
    t.is(diskLines()[1].level, 'error');
    t.regex(diskLines()[1].msg, /^free disk space is very low: .*GET \/api\/health says degraded/);

    // writes still succeed meanwhile: degraded is said before a write is ever refused
    const created = await s.request('POST', '/api/devices', {
      token: s.adminToken,
      body: { id: '356307042441013', name: 'still' },
    });
    t.is(created.status, 201);

    freeError();
    freeWarn();
    await until('health ok again', async () => (await s.request('GET', '/api/health')).status === 200);
    await until('the info line', () => diskLines().length >= 3);
    t.deepEqual(
      diskLines().map((e) => e.level),
      ['warn', 'error', 'info'],
    );
    t.regex(diskLines()[2].msg, /^free disk space is above the thresholds again: 1\d\.\d MiB free/);
  },
);

test('main (sqlite): on any disk, a TRACKGATE_DISK_ERROR of 100% says degraded STORAGE_LOW at once, with one error line at start; off says nothing', async (t) => {
  const log = capturingLogger();
  const s = await startServer('sqlite', { env: { TRACKGATE_DISK_ERROR: '100%' }, logger: log });
  t.teardown(() => s.stop());
  const health = await s.request('GET', '/api/health');
  t.is(health.status, 503);
  t.like(health.body, { success: false, status: 'degraded', code: 'STORAGE_LOW' });
  t.regex(
    health.body.reason,
    /^Free disk space is very low: .* left \(below TRACKGATE_DISK_ERROR, .*\), days of ingest left unknown/,
  );
  t.is(log.at('error', /^free disk space is very low/).length, 1);

  const quiet = capturingLogger();
  const off = await startServer('sqlite', {
    env: { TRACKGATE_DISK_ERROR: 'off', TRACKGATE_DISK_WARN: 'off' },
    logger: quiet,
  });
  t.teardown(() => off.stop());
  t.is((await off.request('GET', '/api/health')).status, 200);
  t.deepEqual(
    quiet.entries.filter((e) => /^free disk space/.test(e.msg)),
    [],
  );
});

if (covered.includes('postgres')) {
  test('main (postgres): the database size in /metrics is pg_database_size; free space that of the data directory here', async (t) => {
    const s = await startServer('postgres');
    t.teardown(() => s.stop());
    const c = new pg.Client({ connectionString: s.storageEnv.TRACKGATE_DATABASE_URL });
    await c.connect();
    t.teardown(() => c.end());
    const size = Number((await c.query('select pg_database_size(current_database()) as n')).rows[0].n);
    const metric = await sample(s, 'trackgate_storage_database_bytes');
    // autovacuum or the server's own writes may change it by a few pages between the two reads
    t.true(metric !== undefined && Math.abs(metric - size) <= 1024 * 1024, `${metric} ~ ${size}`);
    const dir = (await c.query("select current_setting('data_directory', true) as d")).rows[0].d as string | null;
    const free = await sample(s, 'trackgate_storage_free_bytes');
    if (!dir) t.is(free, undefined, 'the data directory unreadable: no sample');
    else t.true(free !== undefined && Math.abs(free - freeOf(dir)) < 256 * MiB, `${free} ~ ${freeOf(dir)}`);
  });
}
