#!/usr/bin/env node
/**
 * `npm test`: type-check, the import rules, the formatter and linter (Biome), then ava (arguments after `--` go to ava), and as the
 * last line `N passed, N failed` (`, N skipped` when some were). ava says how many passed only when
 * none failed, and nothing when a check before it failed; CI (.ci/run) and a developer read the
 * counts from this line. Exit status: 0 only when every step passed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function summary(counts) {
  const line = `${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`;
  process.stdout.write(`${line}\n`);
}

for (const script of ['typecheck', 'lint:imports', 'lint']) {
  const step = spawnSync(npm, ['run', '--silent', script], { cwd: root, stdio: 'inherit' });
  if (step.status !== 0) {
    process.stdout.write(`npm run ${script} failed: no test ran\n`);
    summary({ passed: 0, failed: 1, skipped: 0 });
    process.exit(1);
  }
}

// One line per test (ava's default reporter, also when its output is not a terminal):
// "✔ file › title", "✘ [fail]: file › title", "- file › title" (skipped), "◌ file › title" (todo).
const ansi = /\u001b\[[0-9;]*m/g;
const counts = { passed: 0, failed: 0, skipped: 0 };
let avaPassed;
const ava = spawn(
  process.execPath,
  [path.join(root, 'node_modules/ava/entrypoints/cli.mjs'), ...process.argv.slice(2)],
  {
    cwd: root,
    stdio: ['inherit', 'pipe', 'pipe'],
    env: { ...process.env, ...(process.stdout.isTTY && !process.env.NO_COLOR && { FORCE_COLOR: '1' }) },
  },
);
ava.stderr.pipe(process.stderr);
createInterface({ input: ava.stdout }).on('line', (raw) => {
  process.stdout.write(`${raw}\n`);
  const line = raw.replace(ansi, '');
  if (/^\s+✔ \[expected fail\]/.test(line))
    counts.failed++; // test.failing: the suite has none, and one would check nothing
  else if (/^\s+✔ /.test(line)) counts.passed++;
  else if (/^\s+✘ /.test(line)) counts.failed++;
  else if (/^\s+[-◌] /.test(line)) counts.skipped++;
  const total = /^\s+(\d+) tests? passed/.exec(line);
  if (total) avaPassed = Number(total[1]);
});
ava.on('close', (code, signal) => {
  // ava's own count, when it gives one, is the one to trust (a title could start like a result line)
  if (avaPassed !== undefined) counts.passed = avaPassed;
  // ava failed without a failed test: a file that crashed, a timeout, an unhandled rejection
  if ((code !== 0 || signal) && counts.failed === 0) counts.failed = 1;
  summary(counts);
  process.exit(code === 0 && !signal && counts.failed === 0 ? 0 : 1);
});
