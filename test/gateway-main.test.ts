import test from 'ava';
import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('gateway-main: a gateway process whose core is gone before it asks for its settings exits 0 without an error trace', async (t) => {
  // the core stopped (Ctrl-C right after start) or died while its gateway processes were starting
  const child = fork(path.join(root, 'gateway-main.ts'), [], {
    cwd: root,
    execArgv: ['--import=tsx'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.resume();
  child.disconnect();
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (c, s) => resolve([c, s])),
  );
  t.is(signal, null);
  t.is(code, 0, stderr);
  t.is(stderr, '');
});
