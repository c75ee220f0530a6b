import test from 'ava';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { PATIENCE_MS } from '../../helpers/wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const cli = (args: string[]) =>
  spawnSync(process.execPath, ['--import=tsx', 'cli.ts', ...args], {
    cwd: root,
    env: { ...process.env, TRACKGATE_LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: PATIENCE_MS,
  });

test('cli: decode --protocol gl200 reads a text report and a hex binary frame; a non-report exits 1', (t) => {
  const hbd = cli(['decode', '--protocol', 'gl200', '+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$']);
  t.is(hbd.status, 0, hbd.stderr);
  const decoded = JSON.parse(hbd.stdout);
  t.is(decoded.identity, '135790246811220');
  t.deepEqual(decoded.replies, [Buffer.from('+SACK:GTHBD,1A0401,11F0$').toString('hex')]);
  const evt = cli([
    'decode',
    '--protocol',
    'gl200',
    '2b4556540c00fc1fbf005c4501010108563254030003430564312a41090100000000003f007dff75a11a025c6a7807e1070a14041202680003189c1ac500000000000000000000000000000000000007e1070b041134054e5c6e0d0a',
  ]);
  t.is(evt.status, 0, evt.stderr);
  t.is(JSON.parse(evt.stdout).messages[0].dateTime, '2017-07-10T20:04:18.000Z');
  const bad = cli(['decode', '--protocol', 'gl200', 'hello']);
  t.is(bad.status, 1);
  t.regex(bad.stderr, /gl200: not a \+RESP/);
});
