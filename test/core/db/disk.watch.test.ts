import test, { type ExecutionContext } from 'ava';
import { closeSync, openSync, statfsSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { closeDb, migrate, openDb, type Db } from '../../../core/db/db.js';
import { daysLeft, formatBytes, thresholdBytes, watchDisk, type DiskWatchDeps } from '../../../core/db/disk.watch.js';
import * as settings from '../../../core/settings/settings.repository.js';
import { backends, createStorage } from '../../helpers/backends.js';
import { capturingLogger, type CapturingLogger } from '../../helpers/capture-logger.js';
import { canMountTmpfs, smallDisk } from '../../helpers/small-disk.js';
import { until } from '../../helpers/wait.js';

const MiB = 2 ** 20;
const covered = await backends();
const tmpfs = canMountTmpfs() ? test.serial : test.skip;

/** free bytes of the file system of `dir`, as an unprivileged process may use them */
const freeOf = (dir: string) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

/** Writes a file of zeros into `dir` until `leaveBytes` are left free (tmpfs: written blocks, not a sparse file). */
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

async function sqliteOn(t: ExecutionContext, dataDir: string): Promise<Db> {
  const db = openDb({ dataDir });
  await migrate(db);
  t.teardown(() => closeDb(db));
  return db;
}

async function watching(t: ExecutionContext, deps: Partial<DiskWatchDeps> & { db: Db; logger: CapturingLogger }) {
  const w = await watchDisk({
    warn: { percent: 0, bytes: 8 * MiB },
    error: { percent: 0, bytes: 4 * MiB },
    intervalMs: 100,
    ...deps,
  });
  t.teardown(() => w.stop());
  return w;
}

test('disk watch: thresholds, byte sizes and days left', (t) => {
  t.is(thresholdBytes({ percent: 10, bytes: 2 * 2 ** 30 }, 100 * 2 ** 30), 10 * 2 ** 30, '10 % of 100 GiB is larger');
  t.is(thresholdBytes({ percent: 10, bytes: 2 * 2 ** 30 }, 8 * 2 ** 30), 2 * 2 ** 30, '2 GiB is larger on 8 GiB');
  t.is(thresholdBytes({ percent: 0, bytes: 0 }, 8 * 2 ** 30), 0, 'off');
  t.is(formatBytes(512), '512 bytes');
  t.is(formatBytes(1536 * MiB), '1.5 GiB');
  t.is(daysLeft(100, undefined), 'unknown');
  t.is(daysLeft(100, 0), 'not growing');
  t.is(daysLeft(100, -5), 'not growing');
  t.is(daysLeft(1000, 400), 2.5);
});

tmpfs(
  'disk watch (sqlite): a disk low at start is said once at error level with the days unknown; filling and freeing a real file system gives one line per change',
  async (t) => {
    const disk = smallDisk(t, 20 * 1024);
    const dataDir = path.join(disk.dir, 'data');
    const db = await sqliteOn(t, dataDir);
    const freeFirst = fillTo(disk.dir, 2 * MiB);
    const logger = capturingLogger();
    // an interval of a minute: the rate needs 10 of them, so it is unknown for this whole test
    const w = await watching(t, { db, logger, intervalMs: 60_000 });
    const [low] = logger.at('error', /^free disk space is very low/);
    t.truthy(low, 'said at start');
    t.is(low.daysLeft, 'unknown');
    t.is(low.growthBytesPerDay, 'unknown');
    t.is(low.dir, dataDir);
    t.is(low.thresholdBytes, 4 * MiB);
    t.true((low.freeBytes as number) <= 2 * MiB && (low.freeBytes as number) > MiB, String(low.freeBytes));
    t.is(low.totalBytes, 20 * MiB);
    t.regex(low.msg, /below TRACKGATE_DISK_ERROR \(4\.0 MiB\); days of ingest left unknown/);
    t.regex(
      w.problem() ?? '',
      /^Free disk space is very low: [12]\.\d MiB left \(below TRACKGATE_DISK_ERROR, 4\.0 MiB\)/,
    );
    const file = path.join(dataDir, 'trackgate.sqlite');
    const wal = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    t.is(await w.databaseBytes(), statSync(file).size + wal, 'the file and its -wal');
    t.true(Math.abs((w.freeBytes() ?? 0) - freeOf(dataDir)) < 64 * 1024);
    freeFirst();
    await w.stop();

    // a watch checking every 100 ms: each change of level is one line
    const log = capturingLogger();
    const w2 = await watching(t, { db, logger: log });
    t.is(log.entries.length, 0, 'nothing to say while space is plenty');
    t.is(w2.problem(), undefined);
    const freeWarn = fillTo(disk.dir, 6 * MiB);
    await until('the warn line', () => log.at('warn').length > 0);
    t.regex(
      log.at('warn')[0].msg,
      /^free disk space is low: [56]\.\d MiB free of 20\.0 MiB .*below TRACKGATE_DISK_WARN \(8\.0 MiB\)/,
    );
    t.is(w2.problem(), undefined, 'a warning is not degraded');
    const freeError = fillTo(disk.dir, 2 * MiB);
    await until('the error line', () => log.at('error').length > 0);
    t.truthy(w2.problem());
    freeError();
    freeWarn();
    await until('the info line', () => log.at('info').length > 0);
    t.regex(log.at('info')[0].msg, /^free disk space is above the thresholds again: 1\d\.\d MiB free/);
    t.is(w2.problem(), undefined);
    t.deepEqual(
      log.entries.map((e) => e.level),
      ['warn', 'error', 'info'],
      'one line per change',
    );
  },
);

tmpfs(
  'disk watch (sqlite): once the database grew over ten checks, a line names the days of ingest the space left holds at that rate',
  async (t) => {
    const disk = smallDisk(t, 20 * 1024);
    const db = await sqliteOn(t, path.join(disk.dir, 'data'));
    const logger = capturingLogger();
    const w = await watching(t, { db, logger, intervalMs: 50 });
    let i = 0;
    const value = 'x'.repeat(16 * 1024);
    await until('the growth measured', async () => {
      await settings.put(db, `grow-${i++}`, value);
      return (w.last()?.growthBytesPerDay ?? 0) > 0;
    });
    const free = fillTo(disk.dir, 6 * MiB);
    t.teardown(free);
    await until('the warn line', async () => {
      await settings.put(db, `grow-${i++}`, value);
      return logger.at('warn').length > 0;
    });
    const [line] = logger.at('warn');
    t.true((line.growthBytesPerDay as number) > 0);
    t.is(typeof line.daysLeft, 'number');
    const expected = (line.freeBytes as number) / (line.growthBytesPerDay as number);
    t.true(Math.abs((line.daysLeft as number) - expected) <= 0.051 + expected * 0.01, `${line.daysLeft} ~ ${expected}`);
    t.regex(line.msg, /; about [\d.]+ days of ingest at the current rate \([\d.]+ \w+\/day\)$/);
  },
);

if (covered.includes('postgres')) {
  test('disk watch (postgres): the size is pg_database_size; free space is that of the data directory of a server on this machine', async (t) => {
    const storage = await createStorage('postgres');
    t.teardown(() => storage.cleanup());
    const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
    t.teardown(() => closeDb(db));
    await migrate(db);
    const c = new pg.Client({ connectionString: storage.env.TRACKGATE_DATABASE_URL });
    await c.connect();
    t.teardown(() => c.end());
    const size = async () => Number((await c.query('select pg_database_size(current_database()) as n')).rows[0].n);

    const elsewhere = await watching(t, { db, logger: capturingLogger(), databaseOnThisHost: false });
    t.is(elsewhere.freeBytes(), undefined, 'a server elsewhere: free space unknown');
    t.is(await elsewhere.databaseBytes(), await size());
    t.is(elsewhere.problem(), undefined, 'no threshold applies where free space is unknown');

    // whether this role may read where the data directory is (a superuser may)
    const dir = (
      await c.query("select current_setting('data_directory', true) as d").catch(() => ({ rows: [{ d: null }] }))
    ).rows[0].d as string | null;
    if (!dir) {
      t.log('the role may not read data_directory: free space stays unknown');
      return;
    }
    const logger = capturingLogger();
    // every free byte is below 100 %: both levels hold at once
    const here = await watching(t, {
      db,
      logger,
      databaseOnThisHost: true,
      warn: { percent: 100, bytes: 0 },
      error: { percent: 100, bytes: 0 },
    });
    t.true(Math.abs((here.freeBytes() ?? 0) - freeOf(dir)) < 64 * MiB, 'the data directory file system');
    const [line] = logger.at('error', /^free disk space is very low/);
    t.is(line.dir, dir);
    t.regex(here.problem() ?? '', /^Free disk space is very low/);
  });
}
