import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { testEnv } from '../helpers/server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The trackgate command, killed after `timeoutMs` (status null then). */
function cli(args: string[], env: Record<string, string>, timeoutMs = 30_000) {
  return spawnSync(process.execPath, ['--import=tsx', 'cli.ts', ...args], { cwd: root, env: { ...process.env, ...testEnv(env) }, encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' });
}

// Node 20's mkdirSync(dir, { recursive: true }) loops for ever when mkdir answers ENOENT under an existing parent (/proc)
const procDir = '/proc/trackgate-operator-test';
test('operator: a data directory the kernel will not create (under /proc) stops serve, account list and migrate at once, naming it', (t) => {
  if (!existsSync('/proc/self')) {
    t.pass('no /proc here');
    return;
  }
  const env = { TRACKGATE_DATA_DIR: procDir };
  const serve = cli(['serve'], env, 20_000);
  t.is(serve.status, 78, `serve: ${serve.stderr}`);
  t.regex(serve.stderr, /configuration error: TRACKGATE_DATA_DIR: .*trackgate-operator-test/);
  const list = cli(['account', 'list'], env, 20_000);
  t.is(list.status, 1, `account list: ${list.stderr}`);
  t.regex(list.stderr, /TRACKGATE_DATA_DIR: .*trackgate-operator-test/);
  const migrate = cli(['migrate'], env, 20_000);
  t.is(migrate.status, 1, `migrate: ${migrate.stderr}`);
  t.regex(migrate.stderr, /TRACKGATE_DATA_DIR: .*trackgate-operator-test/);
});
