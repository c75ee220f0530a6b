import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// A process logs 2,000 lines, one per turn of its event loop (a login storm: two lines per
// tracker, trackers one after the other), with the write calls to standard output counted; then,
// without exiting, it waits a moment, and every line must be out by then.
const script = `
import fs from 'node:fs';
let writes = 0;
for (const name of ['write', 'writeSync', 'writev', 'writevSync']) {
  const real = fs[name];
  fs[name] = function (...args) { if (args[0] === 1) writes++; return real.apply(this, args); };
}
const { createLogger } = await import(${JSON.stringify(path.join(root, 'main.ts'))});
const logger = createLogger({ logLevel: 'info' });
for (let i = 0; i < 2000; i++) {
  logger.info({ deviceId: String(356307042441000 + i), protocol: 'teltonika', remote: '127.0.0.1:40000' }, 'tracker identified');
  await new Promise((r) => setImmediate(r));
}
const before = writes;
await new Promise((r) => setTimeout(r, 500));
process.stderr.write(JSON.stringify({ duringBurst: before, after: writes }) + '\\n');
process.exit(0);
`;

test('main.logging: log lines leave in blocks, not one write per line, and are all out within a moment without the process exiting', async (t) => {
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ['--import=tsx', '--input-type=module', '-e', script],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  );
  const counts = JSON.parse(stderr.trim().split('\n').pop()!) as { duringBurst: number; after: number };
  const lines = stdout.trim().split('\n');
  t.is(lines.length, 2000);
  t.is(JSON.parse(lines[1999]).deviceId, String(356307042441000 + 1999));
  t.true(counts.after <= 100, `${counts.after} writes for 2,000 lines`);
  t.true(counts.duringBurst < 2000);
});
