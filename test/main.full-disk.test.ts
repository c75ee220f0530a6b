import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, testEnv, type TestServer } from './helpers/server.js';
import { capturingLogger } from './helpers/capture-logger.js';
import { teltonikaSession, type TrackerClient } from './helpers/tracker-client.js';
import { spawnTrackgate } from './helpers/spawn-trackgate.js';
import { canMountTmpfs, smallDisk } from './helpers/small-disk.js';
import { PATIENCE_MS, until } from './helpers/wait.js';
import * as F from './helpers/frames.js';
import { loadConfig } from '../config/config.js';
import { startTrackgate } from '../main.js';
import { closeDb, openDb } from '../core/db/db.js';
import { migrationSource } from '../core/db/migrations/index.js';

const IMEI = '356307042441013';
const T0 = Date.UTC(2026, 2, 1, 9);
const avl = (i: number) => F.teltonikaAvl([{ time: new Date(T0 + i * 1000), lat: 40 + i / 1e4, lon: -3 }]);
const ACK_ONE = Buffer.from([0, 0, 0, 1]);
const tmpfs = canMountTmpfs() ? test.serial : test.skip;

/** Resends `frame` every 500 ms, as a tracker does without an ack, until the ack arrives. */
async function resendUntilAcked(c: TrackerClient, frame: Buffer, ms = PATIENCE_MS): Promise<Buffer> {
  const end = Date.now() + ms;
  for (;;) {
    c.write(frame);
    try {
      return await c.read(4, 500);
    } catch (e) {
      if (Date.now() > end || c.closed) throw e;
    }
  }
}

/**
 * What a start on a full disk must do: answer reads, say `degraded` (503) with the reason, take no
 * tracker frame it cannot store (no ack), and recover by itself once space is freed.
 */
async function servesReadsThenRecovers(
  t: ExecutionContext,
  s: TestServer,
  freeSpace: () => void,
  stored: number,
): Promise<void> {
  const devices = await s.request('GET', '/api/devices', { token: s.adminToken });
  t.is(devices.status, 200);
  t.deepEqual(
    devices.body.devices.map((d: { id: string }) => d.id),
    [IMEI],
  );
  const range = { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z', limit: 100 };
  const before = await s.request('POST', `/api/devices/${IMEI}/locations`, { token: s.adminToken, body: range });
  t.is(before.status, 200, JSON.stringify(before.body));
  t.is(before.body.locations.length, stored, 'what was stored before the disk filled is read');

  const health = await s.request('GET', '/api/health');
  t.is(health.status, 503);
  t.like(health.body, { success: false, status: 'degraded', code: 'STORAGE_UNAVAILABLE' });
  t.regex(health.body.error, /^Storage refuses writes: database or disk is full$/);

  const write = await s.request('POST', '/api/devices', {
    token: s.adminToken,
    body: { id: '356307042441099', name: 'later' },
  });
  t.is(write.status, 503, 'a REST write is refused');
  t.is(write.body.code, 'STORAGE_UNAVAILABLE');

  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  c.write(avl(100));
  t.true(await c.nothingFor(1500), 'a frame that cannot be stored is not acknowledged');
  t.false(c.closed, 'the connection stays open');

  freeSpace();
  t.deepEqual(await resendUntilAcked(c, avl(100)), ACK_ONE, 'the resend is stored once space is freed');
  await until(
    'health ok once space is freed',
    async () => (await s.request('GET', '/api/health')).status === 200,
    10_000,
  );
  const after = await s.request('POST', `/api/devices/${IMEI}/locations`, { token: s.adminToken, body: range });
  t.is(after.body.locations.length, stored + 1);
}

tmpfs(
  "main: a start after a clean stop on a disk that filled meanwhile (no room for SQLite's -shm file) serves reads, says degraded (503) and acknowledges no frame; it recovers once space is freed",
  async (t) => {
    const disk = smallDisk(t, 8192);
    const storageEnv = { TRACKGATE_DATA_DIR: path.join(disk.dir, 'data') };
    // thresholds for an 8 MiB disk: free space low says STORAGE_LOW, which would keep health from 200 once space is freed
    const env = { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_DISK_WARN: '2MiB', TRACKGATE_DISK_ERROR: '1MiB' };
    const first = await startServer('sqlite', { storageEnv, env });
    t.is(
      (await first.request('POST', '/api/devices', { token: first.adminToken, body: { id: IMEI, name: 'full' } }))
        .status,
      201,
    );
    const c = await teltonikaSession(t, first.running.ports.teltonika, IMEI);
    c.write(avl(0));
    t.deepEqual(await c.read(4), ACK_ONE);
    c.end();
    await first.stop();
    t.false(
      existsSync(path.join(storageEnv.TRACKGATE_DATA_DIR, 'trackgate.sqlite-shm')),
      'a clean stop removes the -shm file',
    );

    disk.fill();
    const log = capturingLogger();
    // a new admin key that cannot be stored: the stored one (the helper's token request) stays valid
    const s = await startServer('sqlite', {
      storageEnv,
      env: { ...env, TRACKGATE_ADMIN_API_KEY: 'a-new-admin-key-0123456789abcdef' },
      logger: log,
    });
    t.teardown(() => s.stop());
    t.is(log.at('warn', /^the new admin API key cannot be stored/).length, 1);
    t.is(log.at('warn', /^SQLite cannot create its shared-memory file/).length, 1, 'the exclusive open is said');
    t.is(log.at('error', /^storage refuses writes/).length, 1, 'the refusal is said once');
    // no block for the pid file's text: the pid is a link's target, and still keeps a second process out
    const pidFile = path.join(storageEnv.TRACKGATE_DATA_DIR, 'trackgate.pid');
    t.is(readlinkSync(pidFile), String(process.pid));
    const second = spawnSync(
      process.execPath,
      [
        '--import=tsx',
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(fileURLToPath(new URL('../core/db/data-dir.lock.ts', import.meta.url)))}); m.lockDataDir(${JSON.stringify(storageEnv.TRACKGATE_DATA_DIR)});`,
      ],
      { encoding: 'utf8' },
    );
    t.not(second.status, 0);
    t.regex(second.stderr, new RegExp(`is in use by another trackgate process \\(pid ${process.pid}\\)`));
    await servesReadsThenRecovers(t, s, () => disk.free(), 1);
    t.is(log.at('info', 'storage takes writes again').length, 1);
  },
);

tmpfs(
  'main: a start after a power cut (SIGKILL) on a full disk serves reads, says degraded (503) and acknowledges no frame; it recovers once space is freed',
  async (t) => {
    const disk = smallDisk(t, 8192);
    const storageEnv = { TRACKGATE_DATA_DIR: path.join(disk.dir, 'data') };
    // thresholds for an 8 MiB disk: free space low says STORAGE_LOW, which would keep health from 200 once space is freed
    const env = { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_DISK_WARN: '2MiB', TRACKGATE_DISK_ERROR: '1MiB' };
    const { child, ports } = await spawnTrackgate(testEnv({ ...storageEnv, ...env, TRACKGATE_LOG_LEVEL: 'info' }));
    t.teardown(() => child.kill('SIGKILL'));
    const token = (
      (await (
        await fetch(`http://127.0.0.1:${ports.http}/api/Auth/Token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ userName: 'admin', apiKey: loadConfig(testEnv()).adminApiKey }),
        })
      ).json()) as { token: string }
    ).token;
    const created = await fetch(`http://127.0.0.1:${ports.http}/api/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ id: IMEI, name: 'full' }),
    });
    t.is(created.status, 201);
    const c = await teltonikaSession(t, ports.teltonika, IMEI);
    c.write(avl(0));
    t.deepEqual(await c.read(4), ACK_ONE);
    c.write(avl(1));
    t.deepEqual(await c.read(4), ACK_ONE);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;

    disk.fill();
    const log = capturingLogger();
    const s = await startServer('sqlite', { storageEnv, env, logger: log });
    t.teardown(() => s.stop());
    t.is(log.at('error', /^storage refuses writes/).length, 1, 'the refusal is said once');
    await servesReadsThenRecovers(t, s, () => disk.free(), 2);
  },
);

tmpfs(
  'main: a database that needs a migration it cannot write (a full disk) stops the start, naming the migration',
  async (t) => {
    const disk = smallDisk(t, 8192);
    const dataDir = path.join(disk.dir, 'data');
    const first = await startServer('sqlite', { storageEnv: { TRACKGATE_DATA_DIR: dataDir } });
    await first.stop();
    // the database of the version before the latest migration
    const latest = (await migrationSource.getMigrations([])).at(-1)!;
    const older = openDb({ dataDir });
    await older.migrate.down({ migrationSource });
    await closeDb(older);

    disk.fill();
    const config = loadConfig(testEnv({ TRACKGATE_DATA_DIR: dataDir }));
    const e = await t.throwsAsync(startTrackgate(config, { logger: capturingLogger() }));
    t.regex(
      e!.message,
      new RegExp(
        `^the database needs 1 migration\\(s\\) \\(${latest}\\) and refuses to write them \\(database or disk is full\\); free disk space`,
      ),
    );
    t.false(existsSync(path.join(dataDir, 'trackgate.pid')), 'the data directory is released');
  },
);
