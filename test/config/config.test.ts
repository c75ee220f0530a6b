import test from 'ava';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { loadConfig, ConfigError, autoGatewayProcesses } from '../../config/config.js';
import { PATIENCE_MS } from '../helpers/wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('config: defaults follow docs/contract.md', (t) => {
  const c = loadConfig({}, '/srv');
  t.like(c, {
    host: '0.0.0.0',
    httpPort: 8080,
    mqttPort: 1883,
    dataDir: '/srv/data',
    adminUser: 'admin',
    licenses: 10,
    tokenTtlSeconds: 3600,
    rateLimitPerMinute: 600,
    mailFrom: 'trackgate@localhost',
  });
  t.like(c.protocolPorts, { teltonika: 5027, gt06: 5023, h02: 5013, gps103: 5001, jt808: 5015, osmand: 5055 });
  t.true(Object.isFrozen(c));
  t.true(c.metrics, 'GET /metrics is on unless TRACKGATE_METRICS=off');
  t.false(loadConfig({ TRACKGATE_METRICS: 'OFF' }).metrics);
  t.is(
    loadConfig({ TRACKGATE_LOG_LEVEL: 'WARN' }).logLevel,
    'warn',
    'a level in capitals, as TRACKGATE_CHECKSUM takes one',
  );
});

test('config: ports take a number, 0 or off', (t) => {
  const c = loadConfig({ TRACKGATE_GT06_PORT: '0', TRACKGATE_H02_PORT: 'off', TRACKGATE_MQTT_PORT: '1884' });
  t.is(c.protocolPorts.gt06, 0);
  t.is(c.protocolPorts.h02, 'off');
  t.is(c.mqttPort, 1884);
});

test('config: a bad value names the variable and what is wrong', (t) => {
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ TRACKGATE_HTTP_PORT: 'abc' }, 'TRACKGATE_HTTP_PORT', /not a whole number/],
    [{ TRACKGATE_HTTP_PORT: '70000' }, 'TRACKGATE_HTTP_PORT', /out of range/],
    [{ TRACKGATE_GT06_PORT: 'yes' }, 'TRACKGATE_GT06_PORT', /not a whole number/],
    [{ TRACKGATE_DATABASE_URL: 'mysql://x' }, 'TRACKGATE_DATABASE_URL', /not supported/],
    [{ TRACKGATE_REDIS_URL: 'nonsense' }, 'TRACKGATE_REDIS_URL', /not a URL/],
    [{ TRACKGATE_LICENSES: '-1' }, 'TRACKGATE_LICENSES', /whole number/],
    [{ TRACKGATE_ADMIN_API_KEY: 'short' }, 'TRACKGATE_ADMIN_API_KEY', /16/],
    [{ TRACKGATE_SMTP_URL: 'http://x' }, 'TRACKGATE_SMTP_URL', /scheme/],
    [{ TRACKGATE_METRICS: 'maybe' }, 'TRACKGATE_METRICS', /not one of on, off/],
    [{ TRACKGATE_CONSOLE_TILE_URL: 'ftp://tiles/{z}/{x}/{y}.png' }, 'TRACKGATE_CONSOLE_TILE_URL', /scheme/],
    [{ TRACKGATE_CONSOLE_TILE_URL: 'https://tiles.example/{z}.png' }, 'TRACKGATE_CONSOLE_TILE_URL', /\{x\}/],
  ];
  for (const [env, variable, reason] of cases) {
    const e = t.throws(() => loadConfig(env), { instanceOf: ConfigError });
    t.is(e?.variable, variable);
    t.regex(e?.message ?? '', reason);
  }
});

test('config: the console tiles are OpenStreetMap unless set, and off turns them off', (t) => {
  t.is(loadConfig({}).consoleTileUrl, 'https://tile.openstreetmap.org/{z}/{x}/{y}.png');
  t.is(loadConfig({ TRACKGATE_CONSOLE_TILE_URL: 'OFF' }).consoleTileUrl, undefined);
  const own = 'http://tiles.internal:8081/{z}/{x}/{y}.png';
  t.is(loadConfig({ TRACKGATE_CONSOLE_TILE_URL: own }).consoleTileUrl, own);
});

function serve(env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import=tsx', 'cli.ts', 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      TRACKGATE_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'tg-cfg-')),
      TRACKGATE_LOG_LEVEL: 'silent',
      ...env,
    },
    encoding: 'utf8',
    timeout: PATIENCE_MS,
  });
}

test('config: starting with a bad value stops with one line naming the variable', (t) => {
  const r = serve({ TRACKGATE_HTTP_PORT: 'abc' });
  t.not(r.status, 0);
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1, r.stderr);
  t.regex(lines[0], /TRACKGATE_HTTP_PORT: "abc" is not a whole number/);
});

test('config: an unreachable database stops the process with one line naming TRACKGATE_DATABASE_URL', (t) => {
  const r = serve({ TRACKGATE_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
  t.not(r.status, 0);
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1, r.stderr);
  t.regex(lines[0], /TRACKGATE_DATABASE_URL: the database does not answer/);
});

test('config: the Redis and notification timeouts are milliseconds with defaults and bounds', (t) => {
  t.like(loadConfig({}), { redisTimeoutMs: 1000, notifyTimeoutMs: 30_000 });
  t.like(loadConfig({ TRACKGATE_REDIS_TIMEOUT_MS: '250', TRACKGATE_NOTIFY_TIMEOUT_MS: '5000' }), {
    redisTimeoutMs: 250,
    notifyTimeoutMs: 5000,
  });
  t.is(
    t.throws(() => loadConfig({ TRACKGATE_REDIS_TIMEOUT_MS: '0' }), { instanceOf: ConfigError })?.variable,
    'TRACKGATE_REDIS_TIMEOUT_MS',
  );
  t.is(
    t.throws(() => loadConfig({ TRACKGATE_NOTIFY_TIMEOUT_MS: '2s' }), { instanceOf: ConfigError })?.variable,
    'TRACKGATE_NOTIFY_TIMEOUT_MS',
  );
});

test('config: TRACKGATE_GATEWAY_PROCESSES is auto by default (one per core, none on one core), a number, or 0 for one process', (t) => {
  t.is(loadConfig({}).gatewayProcesses, os.availableParallelism() >= 2 ? os.availableParallelism() : 0);
  t.is(loadConfig({ TRACKGATE_GATEWAY_PROCESSES: 'auto' }).gatewayProcesses, autoGatewayProcesses());
  t.is(autoGatewayProcesses(1), 0);
  t.is(autoGatewayProcesses(2), 2);
  t.is(autoGatewayProcesses(16), 16);
  t.is(loadConfig({ TRACKGATE_GATEWAY_PROCESSES: '0' }).gatewayProcesses, 0);
  t.is(loadConfig({ TRACKGATE_GATEWAY_PROCESSES: '3' }).gatewayProcesses, 3);
  t.throws(() => loadConfig({ TRACKGATE_GATEWAY_PROCESSES: 'many' }), {
    instanceOf: ConfigError,
    message: /TRACKGATE_GATEWAY_PROCESSES: "many" is neither auto nor a whole number/,
  });
  t.throws(() => loadConfig({ TRACKGATE_GATEWAY_PROCESSES: '65' }), {
    instanceOf: ConfigError,
    message: /TRACKGATE_GATEWAY_PROCESSES: 65 is out of range/,
  });
});

test('config: the edge gateways link is off by default; when on it needs TRACKGATE_GATEWAY_SECRET (≥ 32 characters), and TLS both a certificate and a key', (t) => {
  const secret = 'a-shared-secret-of-32-characters!';
  t.is(loadConfig({}).gatewayLinkPort, 'off');
  t.like(loadConfig({ TRACKGATE_GATEWAY_LINK_PORT: '5100', TRACKGATE_GATEWAY_SECRET: secret }), {
    gatewayLinkPort: 5100,
    gatewaySecret: secret,
  });
  t.throws(() => loadConfig({ TRACKGATE_GATEWAY_LINK_PORT: '5100' }), {
    instanceOf: ConfigError,
    message: /TRACKGATE_GATEWAY_SECRET: is needed when TRACKGATE_GATEWAY_LINK_PORT is set/,
  });
  t.throws(() => loadConfig({ TRACKGATE_GATEWAY_SECRET: 'short' }), {
    instanceOf: ConfigError,
    message: /TRACKGATE_GATEWAY_SECRET: must be at least 32 characters/,
  });
  t.throws(
    () =>
      loadConfig({
        TRACKGATE_GATEWAY_LINK_PORT: '5100',
        TRACKGATE_GATEWAY_SECRET: secret,
        TRACKGATE_GATEWAY_TLS_CERT: '/c.pem',
      }),
    { instanceOf: ConfigError, message: /TRACKGATE_GATEWAY_TLS_KEY: TLS needs both/ },
  );
});

test('config: TRACKGATE_DATABASE_POOL sets the PostgreSQL connections of an instance (10 by default, 4-1000)', (t) => {
  t.is(loadConfig({}).databasePool, 10);
  t.is(loadConfig({ TRACKGATE_DATABASE_POOL: '4' }).databasePool, 4);
  t.is(
    t.throws(() => loadConfig({ TRACKGATE_DATABASE_POOL: '1' }), { instanceOf: ConfigError })?.variable,
    'TRACKGATE_DATABASE_POOL',
  );
});

test('config: TRACKGATE_RETENTION_DAYS is unset (keep everything) by default, whole days 0–36500 otherwise', (t) => {
  t.is(loadConfig({}).retentionDays, undefined);
  t.is(loadConfig({ TRACKGATE_RETENTION_DAYS: '365' }).retentionDays, 365);
  t.is(loadConfig({ TRACKGATE_RETENTION_DAYS: '0' }).retentionDays, 0);
  for (const bad of ['30d', '-1', '36501', '1.5']) {
    const e = t.throws(() => loadConfig({ TRACKGATE_RETENTION_DAYS: bad }), { instanceOf: ConfigError });
    t.is(e?.variable, 'TRACKGATE_RETENTION_DAYS', bad);
    t.regex(e?.message ?? '', /^TRACKGATE_RETENTION_DAYS: /);
  }
});
