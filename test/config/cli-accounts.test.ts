import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { backends } from '../helpers/backends.js';
import { startServer } from '../helpers/server.js';
import { runCli } from '../helpers/run-cli.js';
import { until } from '../helpers/wait.js';

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { TRACKGATE_LOG_LEVEL: 'silent', ...env });

for (const backend of await backends()) {
  test(`cli (${backend}): more licences given with account update are usable at once by a running trackgate`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_LICENSES: '1' } });
    t.teardown(() => s.stop());
    t.is(
      (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd1', name: 'one' } })).status,
      201,
    );
    const refused = await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd2', name: 'two' } });
    t.is(refused.status, 409);
    t.is(refused.body.code, 'NO_LICENSE_AVAILABLE');

    const [account] = JSON.parse((await cli(['account', 'list'], s.storageEnv)).stdout) as {
      id: string;
      licenses: number;
      licensesUsed: number;
    }[];
    t.like(account, { licenses: 1, licensesUsed: 1 });
    const r = await cli(['account', 'update', '--id', account.id, '--licenses', '2'], s.storageEnv);
    t.is(r.status, 0, r.stderr);
    t.is(
      (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd2', name: 'two' } })).status,
      201,
    );
    t.like((await s.request('GET', '/api/account', { token: s.adminToken })).body, { success: true });
  });
}

test('cli: account list prints every account, account update changes licences, name and time zone', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tg-cli-acc-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { TRACKGATE_DATA_DIR: dataDir };
  const created = JSON.parse(
    (await cli(['account', 'create', '--name', 'Acme', '--licenses', '5', '--admin-user', 'acme-admin'], env)).stdout,
  ) as { accountId: string };
  await cli(['account', 'create', '--name', 'Globex', '--licenses', '2', '--admin-user', 'globex-admin'], env);

  const list = await cli(['account', 'list'], env);
  t.is(list.status, 0, list.stderr);
  const accounts = JSON.parse(list.stdout) as {
    id: string;
    name: string;
    licenses: number;
    timeZone: string;
    licensesUsed: number;
  }[];
  t.deepEqual(
    accounts.map((a) => [a.name, a.licenses, a.timeZone, a.licensesUsed]),
    [
      ['Acme', 5, 'UTC', 0],
      ['Globex', 2, 'UTC', 0],
    ],
  );

  const updated = await cli(
    [
      'account',
      'update',
      '--id',
      created.accountId,
      '--licenses',
      '12',
      '--name',
      'Acme Ltd',
      '--time-zone',
      'Europe/Madrid',
    ],
    env,
  );
  t.is(updated.status, 0, updated.stderr);
  t.like(JSON.parse(updated.stdout), {
    id: created.accountId,
    name: 'Acme Ltd',
    licenses: 12,
    timeZone: 'Europe/Madrid',
  });
  t.like(JSON.parse((await cli(['account', 'list'], env)).stdout)[0], { name: 'Acme Ltd', licenses: 12 });

  const unknown = await cli(['account', 'update', '--id', 'no-such-account', '--licenses', '3'], env);
  t.is(unknown.status, 1);
  t.regex(unknown.stderr, /no account no-such-account/);
  const nothing = await cli(['account', 'update', '--id', created.accountId], env);
  t.is(nothing.status, 1);
  t.regex(nothing.stderr, /--licenses/);
  const badZone = await cli(['account', 'update', '--id', created.accountId, '--time-zone', 'Mars/Olympus'], env);
  t.is(badZone.status, 1);
  t.regex(badZone.stderr, /IANA/);
  t.is((await cli(['account', 'update', '--id', created.accountId, '--licenses', '-1'], env)).status, 1);
});

test('cli: unknown-devices lists, for the operator, identifiers of every account and of none', async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_GT06_PORT: '0' } });
  t.teardown(() => s.stop());
  const { connect } = await import('node:net');
  // a GT06 login of an IMEI that is no device of any account
  const socket = connect({ host: '127.0.0.1', port: s.running.ports.gt06 });
  await new Promise((r) => socket.once('connect', r));
  socket.write(Buffer.from('78780d01012345678901234500018cdd0d0a', 'hex'));
  await until('the login seen', async () =>
    (await s.running.services.directory.recentUnknown(100)).some((u) => u.identifier === '123456789012345'),
  );
  socket.destroy();
  await s.running.services.directory.flush();
  const r = await cli(['unknown-devices'], s.storageEnv);
  t.is(r.status, 0, r.stderr);
  const list = JSON.parse(r.stdout) as { identifier: string; protocol: string; reason: string }[];
  t.like(
    list.find((u) => u.identifier === '123456789012345'),
    { protocol: 'gt06', reason: 'unknown' },
  );
  // and no account sees it
  const api = await s.request('GET', '/api/unknownDevices', { token: s.adminToken });
  t.false(JSON.stringify(api.body).includes('123456789012345'));
});

test('cli: account update --retention-days sets the account own retention, 0 keeps everything, default follows the variable; a bad value is refused', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tg-cli-ret-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { TRACKGATE_DATA_DIR: dataDir };
  const created = JSON.parse(
    (await cli(['account', 'create', '--name', 'Acme', '--licenses', '5', '--admin-user', 'acme-admin'], env)).stdout,
  ) as { accountId: string };
  const update = (days: string) => cli(['account', 'update', '--id', created.accountId, '--retention-days', days], env);
  for (const [given, stored] of [
    ['90', 90],
    ['0', 0],
    ['default', null],
  ] as const) {
    const r = await update(given);
    t.is(r.status, 0, r.stderr);
    t.is(JSON.parse(r.stdout).retentionDays, stored);
  }
  await update('30');
  const listed = JSON.parse((await cli(['account', 'list'], env)).stdout) as { retentionDays: number | null }[];
  t.is(listed[0].retentionDays, 30);
  for (const bad of ['-1', 'forever', '36501']) {
    const r = await update(bad);
    t.is(r.status, 1);
    t.regex(r.stderr, /--retention-days.*must be a whole number of days/);
  }
});
