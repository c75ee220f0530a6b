import test from 'ava';
import net from 'node:net';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, testEnv } from '../helpers/server.js';
import { runCli } from '../helpers/run-cli.js';
import { capturingLogger } from '../helpers/capture-logger.js';
import { loadConfig } from '../../config/config.js';
import { startTrackgate } from '../../main.js';

/** The trackgate command, without holding this process's event loop (a server of another test runs in it). */
const cli = (args: string[], env: Record<string, string>) => runCli(args, testEnv(env));

/** A port nothing listens on, for a moment. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Node 20's mkdirSync(dir, { recursive: true }) loops for ever when mkdir answers ENOENT under an existing parent (/proc)
const procDir = '/proc/trackgate-operator-test';
test('operator: a data directory the kernel will not create (under /proc) stops serve, account list and migrate at once, naming it', async (t) => {
  if (!existsSync('/proc/self')) {
    t.pass('no /proc here');
    return;
  }
  const env = { TRACKGATE_DATA_DIR: procDir };
  const serve = await cli(['serve'], env);
  t.is(serve.status, 78, `serve: ${serve.stderr}`);
  t.regex(serve.stderr, /configuration error: TRACKGATE_DATA_DIR: .*trackgate-operator-test/);
  const list = await cli(['account', 'list'], env);
  t.is(list.status, 1, `account list: ${list.stderr}`);
  t.regex(list.stderr, /TRACKGATE_DATA_DIR: .*trackgate-operator-test/);
  const migrate = await cli(['migrate'], env);
  t.is(migrate.status, 1, `migrate: ${migrate.stderr}`);
  t.regex(migrate.stderr, /TRACKGATE_DATA_DIR: .*trackgate-operator-test/);
});

test('operator: trackgate backup copies the running database, WAL included, and the copy restored as trackgate.sqlite starts with everything in it', async (t) => {
  const server = await startServer('sqlite');
  t.teardown(() => server.stop());
  const dataDir = server.storageEnv.TRACKGATE_DATA_DIR;
  const device = await server.request('POST', '/api/devices', {
    token: server.adminToken,
    body: { id: '356307042441013', name: 'Truck 1' },
  });
  t.is(device.status, 201, JSON.stringify(device.body));
  const stored = await server.request('POST', '/api/devices/356307042441013/locations', {
    token: server.adminToken,
    body: { location: { dateTime: '2026-11-21T08:00:00Z', latitude: 40.4168, longitude: -3.7038, speed: 42 } },
  });
  t.is(stored.status, 201, JSON.stringify(stored.body));
  // what an operator would copy first holds none of it: it still sits in the WAL
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'tg-backup-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const file = path.join(scratch, 'trackgate-backup.sqlite');
  const backup = await runCli(['backup', file], testEnv({ TRACKGATE_DATA_DIR: dataDir }));
  t.is(backup.status, 0, backup.stderr);
  t.like(JSON.parse(backup.stdout), { file });
  const again = await runCli(['backup', file], testEnv({ TRACKGATE_DATA_DIR: dataDir }));
  t.is(again.status, 1);
  t.regex(again.stderr, /exists already/);
  await server.stop();

  const restoredDir = path.join(scratch, 'restored');
  mkdirSync(restoredDir);
  copyFileSync(file, path.join(restoredDir, 'trackgate.sqlite'));
  const restored = await startServer('sqlite', { storageEnv: { TRACKGATE_DATA_DIR: restoredDir } });
  t.teardown(() => restored.stop());
  const last = await restored.request('GET', '/api/devices/356307042441013/lastLocation', {
    token: restored.adminToken,
  });
  t.is(last.status, 200, JSON.stringify(last.body));
  t.like(last.body, { lastLocation: { dateTime: '2026-11-21T08:00:00.000Z', latitude: 40.4168, speed: 42 } });
});

test('operator: account create refuses an empty name and more licences than 10,000,000 (stored 1e23 before), as account update does', async (t) => {
  const env = { TRACKGATE_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'tg-accounts-')) };
  t.teardown(() => rmSync(env.TRACKGATE_DATA_DIR, { recursive: true, force: true }));
  const blank = await cli(['account', 'create', '--name', ' ', '--licenses', '5', '--admin-user', 'blank-admin'], env);
  t.is(blank.status, 1, blank.stdout);
  t.regex(blank.stderr, /account name must not be empty/);
  const huge = await cli(
    ['account', 'create', '--name', 'Huge', '--licenses', '99999999999999999999999', '--admin-user', 'huge-admin'],
    env,
  );
  t.is(huge.status, 1, huge.stdout);
  t.regex(huge.stderr, /licenses must be a whole number from 0 to 10,000,000/);
  const ok = await cli(
    ['account', 'create', '--name', 'Fleet', '--licenses', '10000000', '--admin-user', 'fleet-admin'],
    env,
  );
  t.is(ok.status, 0, ok.stderr);
  const { accountId } = JSON.parse(ok.stdout) as { accountId: string };
  const more = await cli(['account', 'update', '--id', accountId, '--licenses', '10000001'], env);
  t.is(more.status, 1, more.stdout);
  t.regex(more.stderr, /licenses must be a whole number from 0 to 10,000,000/);
  const list = JSON.parse((await cli(['account', 'list'], env)).stdout) as { name: string; licenses: number }[];
  t.deepEqual(
    list.map((a) => [a.name, a.licenses]),
    [['Fleet', 10_000_000]],
  );
});

test('operator: a listener that cannot bind stops the start naming the variables of its port or TRACKGATE_HOST, and a TLS file that cannot be read names its variable', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-bind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const held = net.createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  t.teardown(() => held.close());
  const heldPort = String((held.address() as net.AddressInfo).port);
  const http = await cli(['serve'], { TRACKGATE_DATA_DIR: dir, TRACKGATE_HTTP_PORT: heldPort });
  t.is(http.status, 1);
  t.regex(
    http.stderr,
    new RegExp(
      `^trackgate: could not start: TRACKGATE_HTTP_PORT: port ${heldPort} on 127\\.0\\.0\\.1 is already in use; stop what holds it`,
    ),
  );
  const shared = String(await freePort());
  const twice = await cli(['serve'], {
    TRACKGATE_DATA_DIR: dir,
    TRACKGATE_TELTONIKA_PORT: shared,
    TRACKGATE_OSMAND_PORT: shared,
  });
  t.is(twice.status, 1);
  t.regex(
    twice.stderr,
    /TRACKGATE_TELTONIKA_PORT and TRACKGATE_OSMAND_PORT: port \d+ on 127\.0\.0\.1 is already in use \(one port cannot serve two listeners\)/,
  );
  // a tracker port in use in a gateway process: the start fails, and no process is said to have died and been started again
  const inWorker = await cli(['serve'], {
    TRACKGATE_DATA_DIR: dir,
    TRACKGATE_GATEWAY_PROCESSES: '1',
    TRACKGATE_LOG_LEVEL: 'info',
    TRACKGATE_TELTONIKA_PORT: heldPort,
  });
  t.is(inWorker.status, 1);
  t.regex(
    inWorker.stderr,
    new RegExp(`TRACKGATE_TELTONIKA_PORT: port ${heldPort} on 127\\.0\\.0\\.1 is already in use`),
  );
  t.regex(
    inWorker.stderr,
    new RegExp(
      `^trackgate: could not start: TRACKGATE_TELTONIKA_PORT: port ${heldPort} on 127\\.0\\.0\\.1 is already in use`,
      'm',
    ),
    "the core's own line gives the gateway process's reason",
  );
  t.notRegex(inWorker.stdout, /gateway process died/, 'a start that fails restarts no gateway process');
  // TEST-NET-1 (RFC 5737): no interface has it
  const host = await cli(['serve'], { TRACKGATE_DATA_DIR: dir, TRACKGATE_HOST: '192.0.2.1' });
  t.is(host.status, 1);
  t.regex(host.stderr, /TRACKGATE_HOST: "192\.0\.2\.1" is not an address of this machine \(EADDRNOTAVAIL\)/);
  const tls = await cli(['serve'], {
    TRACKGATE_DATA_DIR: dir,
    TRACKGATE_MQTT_TLS_PORT: '0',
    TRACKGATE_MQTT_TLS_CERT: path.join(dir, 'missing.pem'),
    TRACKGATE_MQTT_TLS_KEY: path.join(dir, 'missing.key'),
  });
  t.is(tls.status, 78);
  t.regex(tls.stderr, /configuration error: TRACKGATE_MQTT_TLS_CERT: cannot read .*missing\.pem/);
});

test('operator: a misspelt TRACKGATE_ variable is named at start with the setting it resembles (a typo left the listener on its usual port without a word)', async (t) => {
  const { unknownVariables } = await import('../../config/config.js');
  t.deepEqual(
    unknownVariables(
      testEnv({
        TRACKGATE_TELTONKA_PORT: 'off',
        TRACKGATE_LOGLEVEL: 'debug',
        TRACKGATE_SOMETHING_ELSE: '1',
        OTHER: 'x',
      }),
    ),
    [
      { name: 'TRACKGATE_TELTONKA_PORT', nearest: 'TRACKGATE_TELTONIKA_PORT' },
      { name: 'TRACKGATE_LOGLEVEL', nearest: 'TRACKGATE_LOG_LEVEL' },
      { name: 'TRACKGATE_SOMETHING_ELSE' },
    ],
  );
  t.deepEqual(
    unknownVariables(
      testEnv({ TRACKGATE_MQTT_TLS_CERT: '/c.pem', TRACKGATE_MQTT_TLS_KEY: '/k.pem', TRACKGATE_REDIS_PREFIX: 'x:' }),
    ),
    [],
    'every setting trackgate reads is known',
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-typo-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // the warning comes before the start; a port held by another makes the start stop right after it
  const held = net.createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  t.teardown(() => held.close());
  const serve = await cli(['serve'], {
    TRACKGATE_DATA_DIR: dir,
    TRACKGATE_LOG_LEVEL: 'warn',
    TRACKGATE_HTTP_PORT: String((held.address() as net.AddressInfo).port),
    TRACKGATE_TELTONKA_PORT: 'off',
  });
  t.is(serve.status, 1);
  t.regex(
    serve.stdout,
    /"msg":"TRACKGATE_TELTONKA_PORT is not a trackgate setting and is ignored \(did you mean TRACKGATE_TELTONIKA_PORT\?\)"/,
  );
});

test('operator: TRACKGATE_ADMIN_API_KEY on a later start naming a TRACKGATE_ADMIN_USER that does not exist says it is not applied', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-admin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = await startTrackgate(loadConfig(testEnv({ TRACKGATE_DATA_DIR: dir })), { logger: capturingLogger() });
  await first.stop();
  const logger = capturingLogger();
  const later = await startTrackgate(
    loadConfig(
      testEnv({
        TRACKGATE_DATA_DIR: dir,
        TRACKGATE_ADMIN_USER: 'boss',
        TRACKGATE_ADMIN_API_KEY: 'boss-key-0123456789abcdef',
      }),
    ),
    { logger },
  );
  t.teardown(() => later.stop());
  t.like(logger.at('warn', /TRACKGATE_ADMIN_API_KEY is not applied: there is no user "boss"/)[0], {
    variable: 'TRACKGATE_ADMIN_USER',
    userName: 'boss',
  });
  const same = capturingLogger();
  await later.stop();
  const again = await startTrackgate(
    loadConfig(testEnv({ TRACKGATE_DATA_DIR: dir, TRACKGATE_ADMIN_API_KEY: 'admin-key-0123456789abcdef' })),
    { logger: same },
  );
  t.teardown(() => again.stop());
  t.deepEqual(same.at('warn', /is not applied/), [], 'the existing admin takes the new key without a word');
});

test('operator: account list, account update and unknown-devices on a data directory without a database stop naming it, and make none (a misspelt directory printed [] and left a new empty database)', async (t) => {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'tg-nodb-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const env = { TRACKGATE_DATA_DIR: path.join(parent, 'dta') };
  for (const args of [
    ['account', 'list'],
    ['account', 'update', '--id', 'x', '--licenses', '3'],
    ['unknown-devices'],
  ]) {
    const r = await cli(args, env);
    t.is(r.status, 1, `${args.join(' ')}: ${r.stdout}`);
    t.regex(
      r.stderr,
      /configuration error: TRACKGATE_DATA_DIR: there is no database at .*dta\/trackgate\.sqlite/,
      args.join(' '),
    );
  }
  t.false(existsSync(env.TRACKGATE_DATA_DIR));
  t.is(
    (await cli(['account', 'create', '--name', 'Fleet', '--licenses', '3', '--admin-user', 'fleet-admin'], env)).status,
    0,
    'account create makes the database, before the first start',
  );
  t.is((await cli(['account', 'list'], env)).status, 0);
});

test('operator: a first start at TRACKGATE_LOG_LEVEL=warn or error still shows the generated API key once (at error), not at info where it was dropped', async (t) => {
  for (const level of ['warn', 'error']) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-key-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const logger = capturingLogger();
    const env = testEnv({ TRACKGATE_DATA_DIR: dir, TRACKGATE_LOG_LEVEL: level });
    delete env.TRACKGATE_ADMIN_API_KEY;
    const running = await startTrackgate(loadConfig(env), { logger });
    await running.stop();
    const [shown] = logger.at('error', /^first start: created the account and its admin; this API key is shown once/);
    t.regex(String(shown?.apiKey), /^tg_/, level);
    t.is(shown?.apiKey, running.bootstrap?.apiKey);
  }
});

test('operator: trackgate restore refuses while trackgate runs and a file that is not a trackgate database, then puts the backup in place with the old database and its WAL kept aside', async (t) => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'tg-restore-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  // a data directory of this test's own: the helper's is removed when its server stops
  const dataDir = path.join(scratch, 'data');
  const env = { TRACKGATE_DATA_DIR: dataDir };
  const server = await startServer('sqlite', { storageEnv: env });
  t.teardown(() => server.stop());
  t.is(
    (
      await server.request('POST', '/api/devices', {
        token: server.adminToken,
        body: { id: '356307042441013', name: 'Truck 1' },
      })
    ).status,
    201,
  );
  const file = path.join(scratch, 'backup.sqlite');
  t.is((await cli(['backup', file], env)).status, 0);
  t.is((await server.request('DELETE', '/api/devices/356307042441013', { token: server.adminToken })).status, 200);
  const running = await cli(['restore', file], env);
  t.is(running.status, 1);
  t.regex(running.stderr, /TRACKGATE_DATA_DIR: .* is in use by another trackgate process .*stop it before a restore/);
  await server.stop();

  const junk = path.join(scratch, 'junk.sqlite');
  writeFileSync(junk, 'not a database at all, but long enough to be read as one: '.repeat(100));
  const refused = await cli(['restore', junk], env);
  t.is(refused.status, 1);
  t.regex(refused.stderr, /is not a whole trackgate database .*nothing was changed/);
  // a WAL beside the database, as an unclean stop leaves it: it must not be replayed into the backup
  writeFileSync(path.join(dataDir, 'trackgate.sqlite-wal'), Buffer.alloc(4096, 7));
  const restored = await cli(['restore', file], env);
  t.is(restored.status, 0, restored.stderr);
  const { keptAs } = JSON.parse(restored.stdout) as { keptAs: string };
  t.true(existsSync(keptAs) && existsSync(`${keptAs}-wal`), restored.stdout);
  t.false(existsSync(path.join(dataDir, 'trackgate.sqlite-wal')));
  const again = await startServer('sqlite', { storageEnv: env });
  t.teardown(() => again.stop());
  t.is(
    (await again.request('GET', '/api/devices/356307042441013', { token: again.adminToken })).status,
    200,
    'the device deleted after the backup is back',
  );
  const missing = await cli(['restore', path.join(scratch, 'no-such-backup.sqlite')], {
    TRACKGATE_DATA_DIR: path.join(scratch, 'elsewhere'),
  });
  t.is(missing.status, 1);
  t.regex(missing.stderr, /there is no file .*no-such-backup\.sqlite; nothing was changed/);
  t.false(existsSync(path.join(scratch, 'elsewhere')), 'no data directory is made for a restore that cannot happen');
});
