import test from 'ava';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { backends, createStorage } from './helpers/backends.js';
import { startServer, testEnv } from './helpers/server.js';
import { redisUrl, testPrefix, useRedis } from './helpers/redis.js';
import { capturingLogger } from './helpers/capture-logger.js';
import { watchOutput } from './helpers/child-output.js';
import { PATIENCE_MS } from './helpers/wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('main: the start-up log names the storage (file, or host and database without the password) and Redis', async (t) => {
  for (const backend of await backends()) {
    const storage = await createStorage(backend);
    t.teardown(() => storage.cleanup());
    const env = { ...storage.env };
    // trust authentication ignores the password: it is there to prove it is not logged
    if (env.TRACKGATE_DATABASE_URL)
      env.TRACKGATE_DATABASE_URL = env.TRACKGATE_DATABASE_URL.replace('://postgres@', '://postgres:s3cret-pw@');
    const withRedis = await useRedis('main start-up log');
    const log = capturingLogger();
    const s = await startServer(backend, {
      storageEnv: env,
      env: withRedis ? { TRACKGATE_REDIS_URL: `${redisUrl}/0`, TRACKGATE_REDIS_PREFIX: testPrefix() } : {},
      logger: log,
    });
    await s.stop();
    const line = log.at('info', 'storage ready');
    t.is(line.length, 1, backend);
    t.false(JSON.stringify(line[0]).includes('s3cret'), 'no password in the log');
    if (backend === 'sqlite')
      t.deepEqual(line[0].storage, { kind: 'sqlite', file: path.join(env.TRACKGATE_DATA_DIR, 'trackgate.sqlite') });
    else
      t.like(line[0].storage, {
        kind: 'postgres',
        host: '127.0.0.1',
        port: 5432,
        database: new URL(env.TRACKGATE_DATABASE_URL).pathname.slice(1),
        user: 'postgres',
      });
    if (withRedis)
      t.like(line[0].redis, {
        enabled: true,
        host: new URL(redisUrl).hostname,
        port: Number(new URL(redisUrl).port || 6379),
        db: 0,
      });
    const off = capturingLogger();
    const plain = await startServer(backend, { storageEnv: env, logger: off });
    await plain.stop();
    t.deepEqual(off.at('info', 'storage ready')[0].redis, { enabled: false });
  }
});

test("main: the start-up line says whether e-mail and SMS are on and where they go, never a password or the SMS URL's query", async (t) => {
  const on = capturingLogger();
  const s = await startServer('sqlite', {
    logger: on,
    env: {
      TRACKGATE_SMTP_URL: 'smtps://alerts:s3cret-pw@mail.example.com',
      TRACKGATE_MAIL_FROM: 'alerts@example.com',
      TRACKGATE_SMS_URL: 'https://sms.example.com/send?apikey=s3cret-key',
    },
  });
  await s.stop();
  const [line] = on.at('info', 'listening');
  t.deepEqual(line.notifications, {
    email: {
      enabled: true,
      host: 'mail.example.com',
      port: 465,
      secure: true,
      user: 'alerts',
      from: 'alerts@example.com',
    },
    sms: { enabled: true, url: 'https://sms.example.com/send' },
  });
  t.false(JSON.stringify(on.entries).includes('s3cret'), 'no password or key in the log');
  const off = capturingLogger();
  const plain = await startServer('sqlite', { logger: off });
  await plain.stop();
  t.deepEqual(off.at('info', 'listening')[0].notifications, { email: { enabled: false }, sms: { enabled: false } });
});

test('main.serve: an unhandled rejection is logged and the service keeps serving; SIGTERM stops it with JSON log lines only', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { ...process.env, ...testEnv({ TRACKGATE_DATA_DIR: dataDir, TRACKGATE_LOG_LEVEL: 'info' }) };
  // serve() as `trackgate serve` runs it, then a bug somewhere: a promise rejected and never observed
  const script = `const m = await import(${JSON.stringify(path.join(root, 'main.ts'))}); await m.serve(process.env); Promise.reject(new Error('a bug somewhere'));`;
  const child = spawn(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  const out = watchOutput(child);
  const listening = await out.seen('listening');
  t.truthy(listening, `listening (stderr: ${out.stderr()})`);
  const rejection = await out.seen(/^unhandled promise rejection/);
  t.like(rejection, { level: 50, err: { message: 'a bug somewhere' } });
  const ports = (listening as { ports: Record<string, number> }).ports;
  t.is(
    (await fetch(`http://127.0.0.1:${ports.http}/api/health`)).status,
    200,
    'and serving after the rejection was handled',
  );
  t.is(child.exitCode, null, 'still running');
  child.kill('SIGTERM');
  t.deepEqual(await out.ended, [0, null]);
  t.like(
    out.entries.find((e) => e.msg === 'stopping'),
    { level: 30, signal: 'SIGTERM' },
  );
  t.truthy(out.entries.find((e) => e.msg === 'stopped'));
  t.is(out.entries.length, out.lines.length, 'every stdout line is a JSON log line');
  t.is(out.stderr(), '', 'nothing on stderr');
});

test('main.serve: SIGTERM during start-up waits for it, then stops the gateway processes it started, with no error trace', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    ...process.env,
    ...testEnv({
      TRACKGATE_DATA_DIR: dataDir,
      TRACKGATE_LOG_LEVEL: 'info',
      TRACKGATE_GATEWAY_PROCESSES: '2',
      TRACKGATE_TELTONIKA_PORT: '0',
    }),
  };
  const child = spawn(process.execPath, ['--import=tsx', path.join(root, 'main.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  // storage is open and the gateway processes are being forked: the core is not listening yet
  const out = watchOutput(child, (entry) => entry.msg === 'storage ready' && child.kill('SIGTERM'));
  const [code, signal] = await out.ended;
  const messages = out.entries.map((e) => e.msg);
  t.is(signal, null, 'not ended by the signal itself');
  t.is(code, 0, out.stderr());
  t.true(
    messages.includes('stopping') && messages.indexOf('stopping') < messages.indexOf('stopped'),
    messages.join(', '),
  );
  t.true(messages.includes('gateway processes listening'), 'the start-up it waited for');
  t.is(out.stderr(), '', 'no error trace from a gateway process left behind');
});

for (const gatewayProcesses of ['0', '2']) {
  test(`main.serve: with the reader of its standard output gone (a log pipe that died), SIGTERM still stops it (${gatewayProcesses} gateway processes)`, async (t) => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-serve-'));
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      ...process.env,
      ...testEnv({
        TRACKGATE_DATA_DIR: dataDir,
        TRACKGATE_LOG_LEVEL: 'info',
        TRACKGATE_GATEWAY_PROCESSES: gatewayProcesses,
        TRACKGATE_TELTONIKA_PORT: '0',
      }),
    };
    const child = spawn(process.execPath, ['--import=tsx', path.join(root, 'main.ts')], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    // the whole group: a gateway process left behind would be killed too
    t.teardown(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    });
    const out = watchOutput(child);
    t.truthy(await out.seen('listening'), `listening (stderr: ${out.stderr()})`);
    // the log reader dies: the pipe has no reader any more, and every write to it fails (EPIPE)
    child.stdout!.destroy();
    child.kill('SIGTERM');
    const stopped = await Promise.race([
      out.ended,
      new Promise<'hung'>((r) => setTimeout(() => r('hung'), PATIENCE_MS)),
    ]);
    t.deepEqual(stopped, [0, null], 'stopped cleanly');
    // its stop ran to its end (the data directory released), not cut short by its own 10 s stop timeout
    t.false(existsSync(path.join(dataDir, 'trackgate.pid')), 'its pid file removed');
    t.regex(out.stderr(), /log lines can no longer be written \(EPIPE/, 'said on standard error');
  });
}

test('main.serve: SIGHUP (a closed terminal, a kill -HUP for log rotation) stops trackgate cleanly, gateway processes included, with its log lines, as SIGTERM does', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    ...process.env,
    ...testEnv({
      TRACKGATE_DATA_DIR: dataDir,
      TRACKGATE_LOG_LEVEL: 'info',
      TRACKGATE_GATEWAY_PROCESSES: '1',
      TRACKGATE_TELTONIKA_PORT: '0',
    }),
  };
  const child = spawn(process.execPath, ['--import=tsx', path.join(root, 'main.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  const out = watchOutput(child);
  t.truthy(await out.seen('listening'), out.stderr());
  child.kill('SIGHUP');
  const [code, signal] = await out.ended;
  t.is(signal, null, 'not ended by the signal itself');
  t.is(code, 0, out.stderr());
  t.like(
    out.entries.find((e) => e.msg === 'stopping'),
    { signal: 'SIGHUP' },
  );
  t.truthy(out.entries.find((e) => e.msg === 'stopped'));
  t.false(existsSync(path.join(dataDir, 'trackgate.pid')), 'its pid file removed');
});
