import test from 'ava';
import { migrationSource } from '../../core/db/migrations/index.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { testEnv } from '../helpers/server.js';
import { runCli } from '../helpers/run-cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// without blocking: a synchronous spawn held this process's event loop (other tests' servers) for as long as it took
const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { TRACKGATE_LOG_LEVEL: 'silent', ...env });

test('cli: migrate, then account create prints {accountId, userId, userName, apiKey}', async (t) => {
  const env = { TRACKGATE_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'tg-cli-')) };
  const m = await cli(['migrate'], env);
  t.is(m.status, 0, m.stderr);
  t.regex(m.stdout, new RegExp(`applied ${(await migrationSource.getMigrations([])).length} migration`));
  t.regex((await cli(['migrate'], env)).stdout, /up to date/);
  const r = await cli(
    [
      'account',
      'create',
      '--name',
      'Acme',
      '--licenses',
      '5',
      '--admin-user',
      'acme-admin',
      '--admin-api-key',
      'acme-key-0123456789',
    ],
    env,
  );
  t.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as Record<string, string>;
  t.deepEqual(Object.keys(out).sort(), ['accountId', 'apiKey', 'userId', 'userName']);
  t.like(out, { userName: 'acme-admin', apiKey: 'acme-key-0123456789' });
  const again = await cli(
    ['account', 'create', '--name', 'Acme', '--licenses', '5', '--admin-user', 'acme-admin'],
    env,
  );
  t.is(again.status, 1);
  t.regex(again.stderr, /already exists/);
});

test('cli: decode prints identity, messages and hex replies; a malformed frame exits 1 with one line', async (t) => {
  const login = await cli(['decode', '--protocol', 'gt06', '78780d01012345678901234500018cdd0d0a']);
  t.is(login.status, 0, login.stderr);
  t.deepEqual(JSON.parse(login.stdout), {
    identity: '123456789012345',
    messages: [],
    replies: ['787805010001d9dc0d0a'],
  });
  const text = await cli([
    'decode',
    '--protocol',
    'gps103',
    'imei:359587010124900,tracker,0809231929,13554900601,F,112909.397,A,2234.4669,N,11354.3287,E,0.11,;',
  ]);
  t.is(text.status, 0, text.stderr);
  const decoded = JSON.parse(text.stdout);
  t.is(decoded.identity, '359587010124900');
  // positions under the REST names (docs/contract.md §5), as GET …/locations shows them
  t.like(decoded.messages[0], { latitude: 22.5744483, longitude: 113.9054783, speed: 0.2, valid: true });
  t.is(decoded.messages[0].latitudeDeg, undefined);
  t.is(decoded.messages[0].location, undefined);
  t.regex(decoded.messages[0].dateTime, /^\d{4}-\d\d-\d\dT.*Z$/);
  const bad = await cli(['decode', '--protocol', 'gt06', 'zz']);
  t.is(bad.status, 1);
  t.is(bad.stderr.trim().split('\n').length, 1);
  t.is((await cli(['decode', '--protocol', 'nope', '00'])).status, 1);
});

test('cli: decode takes several frames and decodes them in order on one session, a line each; a bad one gets its reason', async (t) => {
  const login = '78780d01012345678901234500018cdd0d0a';
  const position = '787821121303120b2524c70138e363085b549003d43301940057d200cd52c000006aa1ca0d0a';
  const r = await cli(['decode', '--protocol', 'gt06', login, 'zz', position]);
  t.is(r.status, 1, 'a frame could not be read');
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.is(lines.length, 3);
  t.is(lines[0].identity, '123456789012345');
  t.deepEqual(lines[0].replies, ['787805010001d9dc0d0a']);
  t.deepEqual(lines[1], { messages: [], replies: [], error: 'gt06: the frame must be hex digits (two per byte)' });
  t.like(lines[2].messages[0], { latitude: 11.3919128, longitude: 77.89064, dateTime: '2019-03-18T11:37:36.000Z' });
  t.deepEqual(lines[2].replies, ['78780512006a6ef80d0a']);
  t.is(r.stderr.trim().split('\n').length, 1);
  const both = await cli(['decode', '--protocol', 'gt06', login, position]);
  t.is(both.status, 0, both.stderr);
  t.is(both.stdout.trim().split('\n').length, 2);
  const unknown = await cli(['decode', '--protocol', 'gt06', '--option', 'custom=true', login]);
  t.is(unknown.status, 1);
  t.regex(unknown.stderr, /gt06 has no setting "custom"/);
  t.is(unknown.stdout, '', 'nothing decoded');
  const malformed = await cli(['decode', '--protocol', 'gt06', '--option', 'custom', login]);
  t.not(malformed.status, 0);
  t.regex(malformed.stderr, /NAME=VALUE/);
});

test("cli: decode keeps a session across frames: a Wialon #SD# after #L# is the login's device, alone it is nothing", async (t) => {
  const login = '#L#2.0;42001300083;;CE45';
  const data = '#SD#300924;154245;5554.350052;N;3644.670410;E;2.92;NA;NA;NA;7A01';
  const both = await cli(['decode', '--protocol', 'wialon', login, data]);
  t.is(both.status, 0, both.stderr);
  const [first, second] = both.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.deepEqual(first.replies, [Buffer.from('#AL#1\r\n').toString('hex')]);
  t.like(second.messages[0], { latitude: 55.9058342, longitude: 36.7445068, dateTime: '2024-09-30T15:42:45.000Z' });
  t.deepEqual(second.replies, [Buffer.from('#AD#1\r\n').toString('hex')]);
  const alone = JSON.parse((await cli(['decode', '--protocol', 'wialon', data])).stdout);
  t.deepEqual(alone.messages, [], 'no login: nothing to tie it to');
  t.deepEqual(alone.replies, []);
});

test('cli: decode --hex reads the binary frame of a text protocol (a Suntech universal binary report) as hex', async (t) => {
  const frame =
    '81004e05200013383fffff3401000301130a0512080400000000000000000000000047f9d5846a06810072225214010100020300a8002604c1000004b000000470000025a100000000000025c4000000a6';
  const r = await cli(['decode', '--protocol', 'suntech', '--hex', frame]);
  t.is(r.status, 0, r.stderr);
  const decoded = JSON.parse(r.stdout);
  t.truthy(decoded.identity);
  t.is(decoded.messages.length, 1);
  t.is(typeof decoded.messages[0].latitude, 'number');
  const asText = await cli(['decode', '--protocol', 'suntech', frame]);
  t.not(asText.stdout.includes('"location"') && asText.status === 0, true, 'without --hex the digits are read as text');
});

test('cli: serve refuses a data directory another live trackgate holds, and takes over one left by a killed process', async (t) => {
  const env = {
    ...testEnv({ TRACKGATE_LOG_LEVEL: 'info' }),
    TRACKGATE_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'tg-lock-')),
  };
  const first = await listening(env);
  t.teardown(() => first.kill('SIGKILL'));
  const second = await cli(['serve'], env);
  t.is(second.status, 78);
  t.regex(second.stderr, /TRACKGATE_DATA_DIR.*in use by another trackgate process \(pid \d+\)/);
  first.kill('SIGKILL');
  await once(first, 'exit');
  const third = await listening(env);
  t.teardown(() => third.kill('SIGKILL'));
  t.pass('the pid file of a killed process is taken over');
});

// Above the kernel's largest pid_max (2^22): no process here has this pid, as a holder in another
// PID namespace (another container on the same volume) is not seen from this one.
const PID_OF_ANOTHER_NAMESPACE = 2 ** 22 + 1;

test('cli: serve refuses a data directory held by a live trackgate whose pid this namespace does not see, and takes it once that one is killed', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tg-lock-ns-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { ...testEnv({ TRACKGATE_LOG_LEVEL: 'info' }), TRACKGATE_DATA_DIR: dataDir };
  const first = await listening(env);
  t.teardown(() => first.kill('SIGKILL'));
  writeFileSync(path.join(dataDir, 'trackgate.pid'), String(PID_OF_ANOTHER_NAMESPACE));
  const second = await listeningOrExit(env);
  if ('child' in second) {
    t.teardown(() => second.child.kill('SIGKILL'));
    t.fail('a second trackgate started on the data directory the first still holds');
    return;
  }
  t.is(second.code, 78);
  t.regex(
    second.stderr,
    new RegExp(
      `TRACKGATE_DATA_DIR.*in use by another trackgate process \\(pid ${PID_OF_ANOTHER_NAMESPACE}\\); run one process per data directory`,
    ),
  );
  first.kill('SIGKILL');
  await once(first, 'exit');
  const third = await listening(env);
  t.teardown(() => third.kill('SIGKILL'));
  t.is(
    readFileSync(path.join(dataDir, 'trackgate.pid'), 'utf8'),
    String(third.pid),
    'the pid file names the new holder',
  );
});

/** `trackgate serve` in its own process, once it logs `listening`. */
function listening(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import=tsx', 'cli.ts', 'serve'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"msg":"listening"')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`trackgate exited with ${code} before listening`)));
  });
}

/** `trackgate serve` in its own process: the process once it logs `listening`, or its exit code and standard error when it stops first. */
function listeningOrExit(
  env: Record<string, string>,
): Promise<{ child: ChildProcess } | { code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import=tsx', 'cli.ts', 'serve'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"msg":"listening"')) resolve({ child });
    });
    // 'close': after its standard error is read to the end
    child.once('close', (code) => resolve({ code, stderr }));
  });
}
