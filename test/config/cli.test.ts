import test from 'ava';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import=tsx', 'cli.ts', ...args], { cwd: root, env: { ...process.env, TRACKGATE_LOG_LEVEL: 'silent', ...env }, encoding: 'utf8', timeout: 30_000 });
}

test('cli: migrate, then account create prints {accountId, userId, userName, apiKey}', (t) => {
  const env = { TRACKGATE_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'tg-cli-')) };
  const m = cli(['migrate'], env);
  t.is(m.status, 0, m.stderr);
  t.regex(m.stdout, /applied 3 migration/);
  t.regex(cli(['migrate'], env).stdout, /up to date/);
  const r = cli(['account', 'create', '--name', 'Acme', '--licenses', '5', '--admin-user', 'acme-admin', '--admin-api-key', 'acme-key-0123456789'], env);
  t.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as Record<string, string>;
  t.deepEqual(Object.keys(out).sort(), ['accountId', 'apiKey', 'userId', 'userName']);
  t.like(out, { userName: 'acme-admin', apiKey: 'acme-key-0123456789' });
  const again = cli(['account', 'create', '--name', 'Acme', '--licenses', '5', '--admin-user', 'acme-admin'], env);
  t.is(again.status, 1);
  t.regex(again.stderr, /already exists/);
});

test('cli: decode prints identity, messages and hex replies; a malformed frame exits 1 with one line', (t) => {
  const login = cli(['decode', '--protocol', 'gt06', '78780d01012345678901234500018cdd0d0a']);
  t.is(login.status, 0, login.stderr);
  t.deepEqual(JSON.parse(login.stdout), { identity: '123456789012345', messages: [], replies: ['787805010001d9dc0d0a'] });
  const text = cli(['decode', '--protocol', 'gps103', 'imei:359587010124900,tracker,0809231929,13554900601,F,112909.397,A,2234.4669,N,11354.3287,E,0.11,;']);
  t.is(text.status, 0, text.stderr);
  const decoded = JSON.parse(text.stdout);
  t.is(decoded.identity, '359587010124900');
  t.true(decoded.messages[0].location.latitudeDeg > 22.5);
  const bad = cli(['decode', '--protocol', 'gt06', 'zz']);
  t.is(bad.status, 1);
  t.is(bad.stderr.trim().split('\n').length, 1);
  t.is(cli(['decode', '--protocol', 'nope', '00']).status, 1);
});
