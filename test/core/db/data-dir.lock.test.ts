import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { lockDataDir } from '../../../core/db/data-dir.lock.js';
import { PATIENCE_MS } from '../../helpers/wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** lockDataDir(dir) in a process of its own, released as it exits. */
function lockIn(dir: string) {
  const script = `import { lockDataDir } from './core/db/data-dir.lock.ts'; lockDataDir(${JSON.stringify(dir)})();`;
  return spawnSync(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: PATIENCE_MS,
  });
}

test('data-dir.lock: a second start in the same process is refused, whatever the pid file says, until the first releases', (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-lock-unit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const release = lockDataDir(dir);
  t.is(readFileSync(path.join(dir, 'trackgate.pid'), 'utf8'), String(process.pid));
  t.throws(() => lockDataDir(dir), {
    message: `is in use by another trackgate process (pid ${process.pid}); run one process per data directory`,
  });
  // a holder of another PID namespace, or a pid file removed by hand: the OS lock still decides
  writeFileSync(path.join(dir, 'trackgate.pid'), 'not a pid');
  t.throws(() => lockDataDir(dir), {
    message: 'is in use by another trackgate process; run one process per data directory',
  });
  writeFileSync(path.join(dir, 'trackgate.pid'), String(process.pid));
  t.regex(
    lockIn(dir).stderr,
    /is in use by another trackgate process/,
    'the refused tries closed their own file, and the lock held for other processes',
  );
  release();
  t.is(lockIn(dir).status, 0, 'another process takes it after the release');
  t.false(existsSync(path.join(dir, 'trackgate.pid')), 'the pid file is removed');
  t.true(
    existsSync(path.join(dir, 'trackgate.lock')),
    'the lock file stays (removing it would let two holders lock two files)',
  );
  t.deepEqual(readdirSync(dir), ['trackgate.lock'], 'no journal beside it');
  release();
  const again = lockDataDir(dir);
  again();
});
