/**
 * The only place that reads the environment. `loadConfig(env)` validates every TRACKGATE_* value
 * (docs/contract.md §1) and returns a frozen, typed Config; a bad value throws ConfigError naming it.
 */
import os from 'node:os';
import path from 'node:path';
import { DISK_ERROR_DEFAULT, DISK_WARN_DEFAULT, type DiskThreshold, parseDiskThreshold } from './disk-threshold.js';

/** The usual port of each tracker protocol (docs/contract.md §1): what deployed trackers are set to. */
export const PROTOCOL_DEFAULT_PORTS: Readonly<Record<string, number>> = Object.freeze({
  teltonika: 5027,
  gt06: 5023,
  h02: 5013,
  gps103: 5001,
  tk103: 5002,
  jt808: 5015,
  gl200: 5004,
  meitrack: 5020,
  suntech: 5011,
  watch: 5093,
  ruptela: 5046,
  galileo: 5034,
  navis: 5019,
  castel: 5086,
  trv: 5010,
  tlt2h: 5030,
  meiligao: 5009,
  eelink: 5064,
  osmand: 5055,
  atrack: 5044,
  wialon: 5039,
  laipac: 5048,
  startek: 5222,
  t55: 5005,
  xexun: 5006,
  totem: 5007,
  minifinder2: 5187,
  flespi: 5149,
});

/** Tracker protocols served over HTTP (OsmAnd, flespi): no TLS tracker port of their own (TRACKGATE_<P>_TLS_PORT). */
export const HTTP_TRACKER_PROTOCOLS: readonly string[] = Object.freeze(['osmand', 'flespi']);

export interface Config {
  host: string;
  /** the REST API over plain HTTP; off (only with HTTPS on) serves it over HTTPS only */
  httpPort: number | 'off';
  /** the REST API, console and docs over TLS (TRACKGATE_HTTPS_PORT): 8443 when a certificate is set, else off */
  httpsPort: number | 'off';
  /** the box's PEM certificate (chain allowed) and key files (TRACKGATE_TLS_CERT, TRACKGATE_TLS_KEY) */
  tlsCert?: string;
  tlsKey?: string;
  /** how often the certificate and key files are checked for a renewal */
  tlsCheckSeconds: number;
  /** addresses and CIDR ranges of reverse proxies whose X-Forwarded-For is believed (TRACKGATE_TRUSTED_PROXIES) */
  trustedProxies: readonly string[];
  mqttPort: number | 'off';
  mqttWsPort: number | 'off';
  mqttTlsPort: number | 'off';
  mqttTlsCert?: string;
  mqttTlsKey?: string;
  /** the largest MQTT packet a client may send, in bytes */
  mqttMaxPacketBytes: number;
  /** protocol name -> port; `off` disables the listener */
  protocolPorts: Readonly<Record<string, number | 'off'>>;
  /** protocol name -> its decoder behind TLS (TRACKGATE_<P>_TLS_PORT), for every TCP protocol; off by default */
  protocolTlsPorts: Readonly<Record<string, number | 'off'>>;
  dataDir: string;
  databaseUrl?: string;
  /** PostgreSQL: most connections this instance opens */
  databasePool: number;
  redisUrl?: string;
  redisPrefix: string;
  /** longest wait for one Redis command (or connection) before the caller's fallback applies */
  redisTimeoutMs: number;
  adminUser: string;
  adminApiKey?: string;
  licenses: number;
  tokenTtlSeconds: number;
  jwtSecret?: string;
  rateLimitPerMinute: number;
  failedTokenLimit: number;
  bodyLimitBytes: number;
  smtpUrl?: string;
  mailFrom: string;
  smsUrl?: string;
  /** longest wait for one e-mail or SMS hand-over before it counts as failed (and is retried) */
  notifyTimeoutMs: number;
  logLevel: string;
  /** TRACKGATE_LOG_FORMAT: JSON lines (for machines), or one readable line each (a person at a terminal) */
  logFormat: 'json' | 'pretty';
  /** pretty lines may colour their level on a terminal (NO_COLOR, https://no-color.org, unset) */
  logColour: boolean;
  checksum: 'accept' | 'strict';
  idleTimeoutSeconds: number;
  /** a tracker connection that has not named a known device this long after it opened is closed */
  identifyTimeoutSeconds: number;
  /** how long sendCommand waits for a connected device's reply (docs/contract.md "Commands") */
  commandWaitSeconds: number;
  /** forwards: the longest wait for a target's connection, and for its answer (response, PUBACKs, confirms) */
  forwardTimeoutMs: number;
  /** forwards: undelivered messages stored longer ago than this are dropped (logged, counted) */
  forwardRetentionDays: number;
  /** forwards: undelivered messages beyond the newest this many of an account are dropped (logged, counted) */
  forwardMaxPending: number;
  /**
   * days of locations and alerts kept (TRACKGATE_RETENTION_DAYS; an account's own retention wins);
   * undefined or 0: everything is kept
   */
  retentionDays?: number;
  /**
   * forwards: host names, addresses and CIDR ranges they may reach although loopback, link-local or
   * private (TRACKGATE_FORWARD_ALLOW, normalized: lower case, IPv4 dotted, IPv6 without brackets)
   */
  forwardAllow: readonly string[];
  /** PostgreSQL: the span of one partition of locations and alerts (TRACKGATE_PG_PARTITION_INTERVAL) */
  pgPartitionInterval: 'month' | 'day';
  /** `GET /metrics` (Prometheus text format) and the counting behind it; false: neither */
  metrics: boolean;
  /**
   * tracker listener processes beside the core (TRACKGATE_GATEWAY_PROCESSES): 0 runs every
   * listener in the core's process; `auto` (the default) is one per core of the box but the
   * core's own (0 on a one-core box)
   */
  gatewayProcesses: number;
  /** the core's TCP port for edge gateways (`trackgate gateway --core`); off: none */
  gatewayLinkPort: number | 'off';
  /** what an edge gateway presents to the core (both sides set it) */
  gatewaySecret?: string;
  /** core: PEM certificate and key: the edge gateways' link is served over TLS */
  gatewayTlsCert?: string;
  gatewayTlsKey?: string;
  /** edge gateway: connect over TLS, trusting this PEM file (the core's certificate or its CA) */
  gatewayTlsCa?: string;
  /** free space on the database's file system below which a warn line is logged (config/disk-threshold.ts) */
  diskWarn: DiskThreshold;
  /** ... an error line is logged and health says degraded */
  diskError: DiskThreshold;
  /** how often free space and the database's size are checked */
  diskCheckSeconds: number;
  /** the console's map tiles (TRACKGATE_CONSOLE_TILE_URL, a Leaflet URL template); undefined: no tiles */
  consoleTileUrl?: string;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a whole number (expected ${min}..${max})`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `${n} is out of range (expected ${min}..${max})`);
  return n;
}

function port(env: Env, name: string, fallback: number | 'off'): number | 'off' {
  const raw = text(env, name);
  if (raw?.toLowerCase() === 'off') return 'off';
  if (raw === undefined) return fallback;
  return integer(env, name, 0, 0, 65535);
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigError(name, `"${raw}" is not one of on, off`);
}

/**
 * `auto`: one per core, none on one core. The gateway processes run below the core's priority
 * (gateway-pool.ts GATEWAY_NICE), so they take the CPU time the core (REST, MQTT, SQLite writes)
 * leaves, on its core too: since they run the ingest steps, the core only writes, and on 2 cores
 * TCP ingest took 41,000-57,000 positions/s with two gateway processes against 34,000-41,000
 * with one and 41,000-42,000 with three, in quick runs of one half-hour (BENCHMARKS.md).
 */
export const autoGatewayProcesses = (cores = os.availableParallelism()): number => (cores >= 2 ? cores : 0);

function gatewayProcesses(env: Env): number {
  const name = 'TRACKGATE_GATEWAY_PROCESSES';
  const raw = text(env, name);
  if (raw === undefined || raw.toLowerCase() === 'auto') return autoGatewayProcesses();
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is neither auto nor a whole number (0..64)`);
  return integer(env, name, 0, 0, 64);
}

const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/**
 * A host name, address or CIDR range of TRACKGATE_FORWARD_ALLOW, normalized; undefined if it is
 * none. The WHATWG URL parser reads the addresses (`2130706433`, `[::1]`), as forwards' URLs are read.
 */
function allowEntry(entry: string): string | undefined {
  const [host, prefix, more] = entry.split('/');
  const v6 = host.includes(':');
  if (more !== undefined || /[?#@\\\s%]/.test(host) || (v6 && !/^\[?[0-9a-f:.]+\]?$/i.test(host))) return undefined;
  let name: string;
  try {
    name = new URL(v6 ? `http://[${host.replace(/^\[|\]$/g, '')}]/` : `http://${host}/`).hostname
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '');
  } catch {
    return undefined;
  }
  const bits = v6 ? 128 : /^\d+(\.\d+){3}$/.test(name) ? 32 : 0;
  if (prefix === undefined) return bits || HOST_NAME.test(name) ? name : undefined;
  return bits && /^\d{1,3}$/.test(prefix) && Number(prefix) <= bits ? `${name}/${Number(prefix)}` : undefined;
}

function forwardAllow(env: Env): string[] {
  const entries = (text(env, 'TRACKGATE_FORWARD_ALLOW') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries.map((e) => {
    const normal = allowEntry(e);
    if (normal === undefined)
      throw new ConfigError(
        'TRACKGATE_FORWARD_ALLOW',
        `"${e}" is not a host name, an address or a CIDR range (such as rabbit.internal, 10.0.0.5 or fd00::/8)`,
      );
    return normal;
  });
}

function logFormat(env: Env): 'json' | 'pretty' {
  const raw = (text(env, 'TRACKGATE_LOG_FORMAT') ?? 'json').toLowerCase();
  if (raw !== 'json' && raw !== 'pretty')
    throw new ConfigError('TRACKGATE_LOG_FORMAT', `"${raw}" is not one of json, pretty`);
  return raw;
}

function url(env: Env, name: string, schemes: string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `"${raw}" is not a URL (expected ${schemes.map((s) => `${s}//…`).join(' or ')})`);
  }
  if (!schemes.includes(parsed.protocol)) {
    throw new ConfigError(name, `scheme "${parsed.protocol}" is not supported (expected ${schemes.join(' or ')})`);
  }
  return raw;
}

function protocolTlsPortsOf(env: Env): Readonly<Record<string, number | 'off'>> {
  const out: Record<string, number | 'off'> = {};
  for (const name of Object.keys(PROTOCOL_DEFAULT_PORTS)) {
    if (HTTP_TRACKER_PROTOCOLS.includes(name)) continue;
    out[name] = port(env, `TRACKGATE_${name.toUpperCase()}_TLS_PORT`, 'off');
  }
  return Object.freeze(out);
}

/** TRACKGATE_TRUSTED_PROXIES: addresses and CIDR ranges only (a proxy is known by the address it connects from). */
function trustedProxies(env: Env): string[] {
  const name = 'TRACKGATE_TRUSTED_PROXIES';
  const entries = (text(env, name) ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries.map((e) => {
    const normal = allowEntry(e);
    if (normal === undefined || !/^[0-9.]+(\/\d+)?$|:/.test(normal))
      throw new ConfigError(
        name,
        `"${e}" is not an address or a CIDR range (such as 10.0.0.5, 10.0.0.0/8 or fd00::/8)`,
      );
    return normal;
  });
}

function protocolPortsOf(env: Env): Readonly<Record<string, number | 'off'>> {
  const protocolPorts: Record<string, number | 'off'> = {};
  for (const [name, usual] of Object.entries(PROTOCOL_DEFAULT_PORTS)) {
    protocolPorts[name] = port(env, `TRACKGATE_${name.toUpperCase()}_PORT`, usual);
  }
  return Object.freeze(protocolPorts);
}

/** A secret that, when set, must be this long at least. */
function secret(env: Env, name: string, minLength: number): string | undefined {
  const value = text(env, name);
  if (value !== undefined && value.length < minLength)
    throw new ConfigError(name, `must be at least ${minLength} characters`);
  return value;
}

function diskThreshold(env: Env, name: string, fallback: string): DiskThreshold {
  const raw = text(env, name) ?? fallback;
  const t = parseDiskThreshold(raw);
  if (typeof t === 'string') throw new ConfigError(name, t);
  return Object.freeze(t);
}

export const CONSOLE_TILE_URL_DEFAULT = 'https://tile.openstreetmap.org/{z}/{x}/{y}.png';

/** TRACKGATE_CONSOLE_TILE_URL: an http(s) template with {z}, {x} and {y}; `off`: the console's map has no tiles. */
function consoleTileUrl(env: Env): string | undefined {
  const name = 'TRACKGATE_CONSOLE_TILE_URL';
  const raw = text(env, name) ?? CONSOLE_TILE_URL_DEFAULT;
  if (raw.toLowerCase() === 'off') return undefined;
  url(env, name, ['http:', 'https:']);
  if (!['{z}', '{x}', '{y}'].every((part) => raw.includes(part)))
    throw new ConfigError(name, `"${raw}" must contain {z}, {x} and {y} (or be off)`);
  return raw;
}

function checksumPolicy(env: Env): 'accept' | 'strict' {
  const checksum = (text(env, 'TRACKGATE_CHECKSUM') ?? 'accept').toLowerCase();
  if (checksum !== 'accept' && checksum !== 'strict') {
    throw new ConfigError('TRACKGATE_CHECKSUM', `"${checksum}" is not one of accept, strict`);
  }
  return checksum;
}

/** The box's certificate and what needs it. */
function checkTls(config: Config): void {
  if ((config.tlsCert === undefined) !== (config.tlsKey === undefined)) {
    throw new ConfigError(
      config.tlsCert ? 'TRACKGATE_TLS_KEY' : 'TRACKGATE_TLS_CERT',
      'TLS needs both a certificate and a key',
    );
  }
  if (!config.tlsCert) {
    if (config.httpsPort !== 'off')
      throw new ConfigError(
        'TRACKGATE_HTTPS_PORT',
        'HTTPS needs a certificate: set TRACKGATE_TLS_CERT and TRACKGATE_TLS_KEY',
      );
    const tlsPort = Object.entries(config.protocolTlsPorts).find(([, p]) => p !== 'off');
    if (tlsPort)
      throw new ConfigError(
        `TRACKGATE_${tlsPort[0].toUpperCase()}_TLS_PORT`,
        'a TLS tracker port needs a certificate: set TRACKGATE_TLS_CERT and TRACKGATE_TLS_KEY',
      );
  }
  if (config.httpPort === 'off' && config.httpsPort === 'off')
    throw new ConfigError('TRACKGATE_HTTP_PORT', 'off needs HTTPS on (TRACKGATE_TLS_CERT and TRACKGATE_HTTPS_PORT)');
}

/** What only the settings together can say is wrong. */
function checkTogether(config: Config): void {
  checkTls(config);
  if ((config.mqttTlsCert === undefined) !== (config.mqttTlsKey === undefined)) {
    throw new ConfigError(
      config.mqttTlsCert ? 'TRACKGATE_MQTT_TLS_KEY' : 'TRACKGATE_MQTT_TLS_CERT',
      'TLS needs both a certificate and a key',
    );
  }
  if (config.gatewaySecret !== undefined && config.gatewaySecret.length < 32) {
    throw new ConfigError('TRACKGATE_GATEWAY_SECRET', 'must be at least 32 characters');
  }
  if (config.gatewayLinkPort !== 'off' && config.gatewaySecret === undefined) {
    throw new ConfigError(
      'TRACKGATE_GATEWAY_SECRET',
      'is needed when TRACKGATE_GATEWAY_LINK_PORT is set: edge gateways present it',
    );
  }
  if ((config.gatewayTlsCert === undefined) !== (config.gatewayTlsKey === undefined)) {
    throw new ConfigError(
      config.gatewayTlsCert ? 'TRACKGATE_GATEWAY_TLS_KEY' : 'TRACKGATE_GATEWAY_TLS_CERT',
      'TLS needs both a certificate and a key',
    );
  }
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(config.logLevel)) {
    throw new ConfigError('TRACKGATE_LOG_LEVEL', `"${config.logLevel}" is not one of ${levels.join(', ')}`);
  }
}

/** TRACKGATE_PG_PARTITION_INTERVAL: `month` (default) or `day`. */
function pgPartitionInterval(env: Env): 'month' | 'day' {
  const raw = text(env, 'TRACKGATE_PG_PARTITION_INTERVAL')?.toLowerCase() ?? 'month';
  if (raw !== 'month' && raw !== 'day')
    throw new ConfigError('TRACKGATE_PG_PARTITION_INTERVAL', `"${raw}" is not one of month, day`);
  return raw;
}

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Readonly<Config> {
  // read in this order, so that of several bad settings the same one is named first
  const protocolPorts = protocolPortsOf(env);
  const protocolTlsPorts = protocolTlsPortsOf(env);
  const tlsCert = text(env, 'TRACKGATE_TLS_CERT');
  const adminUser = text(env, 'TRACKGATE_ADMIN_USER') ?? 'admin';
  const adminApiKey = secret(env, 'TRACKGATE_ADMIN_API_KEY', 16);
  const jwtSecret = secret(env, 'TRACKGATE_JWT_SECRET', 32);
  const checksum = checksumPolicy(env);
  const config: Config = {
    host: text(env, 'TRACKGATE_HOST') ?? '0.0.0.0',
    httpPort: port(env, 'TRACKGATE_HTTP_PORT', 8080),
    httpsPort: port(env, 'TRACKGATE_HTTPS_PORT', tlsCert ? 8443 : 'off'),
    tlsCert,
    tlsKey: text(env, 'TRACKGATE_TLS_KEY'),
    // a renewal is taken once its files have stayed the same for one check: within two of them
    tlsCheckSeconds: integer(env, 'TRACKGATE_TLS_CHECK_INTERVAL', 20, 1, 3600),
    trustedProxies: Object.freeze(trustedProxies(env)),
    mqttPort: port(env, 'TRACKGATE_MQTT_PORT', 1883),
    mqttWsPort: port(env, 'TRACKGATE_MQTT_WS_PORT', 8083),
    mqttTlsPort: port(env, 'TRACKGATE_MQTT_TLS_PORT', 8883),
    mqttTlsCert: text(env, 'TRACKGATE_MQTT_TLS_CERT'),
    mqttTlsKey: text(env, 'TRACKGATE_MQTT_TLS_KEY'),
    // 1 KiB holds any CONNECT we accept; MQTT 3.1.1 §2.2.3 caps a packet at 256 MiB + 5 bytes
    mqttMaxPacketBytes: integer(env, 'TRACKGATE_MQTT_MAX_PACKET', 256 * 1024, 1024, 268_435_460),
    protocolPorts,
    protocolTlsPorts,
    dataDir: path.resolve(cwd, text(env, 'TRACKGATE_DATA_DIR') ?? './data'),
    databaseUrl: url(env, 'TRACKGATE_DATABASE_URL', ['postgres:', 'postgresql:']),
    // two group-commit writers, the forward, rule and outbox loops and REST share them
    databasePool: integer(env, 'TRACKGATE_DATABASE_POOL', 10, 4, 1000),
    redisUrl: url(env, 'TRACKGATE_REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: text(env, 'TRACKGATE_REDIS_PREFIX') ?? 'trackgate:',
    redisTimeoutMs: integer(env, 'TRACKGATE_REDIS_TIMEOUT_MS', 1000, 50, 60_000),
    adminUser,
    adminApiKey,
    licenses: integer(env, 'TRACKGATE_LICENSES', 10, 0, 10_000_000),
    tokenTtlSeconds: integer(env, 'TRACKGATE_TOKEN_TTL', 3600, 60, 31 * 24 * 3600),
    jwtSecret,
    rateLimitPerMinute: integer(env, 'TRACKGATE_RATE_LIMIT', 600, 0, 10_000_000),
    failedTokenLimit: integer(env, 'TRACKGATE_FAILED_TOKEN_LIMIT', 10, 1, 10_000),
    bodyLimitBytes: integer(env, 'TRACKGATE_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    smtpUrl: url(env, 'TRACKGATE_SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: text(env, 'TRACKGATE_MAIL_FROM') ?? 'trackgate@localhost',
    smsUrl: url(env, 'TRACKGATE_SMS_URL', ['http:', 'https:']),
    notifyTimeoutMs: integer(env, 'TRACKGATE_NOTIFY_TIMEOUT_MS', 30_000, 100, 600_000),
    // INFO as info, as TRACKGATE_CHECKSUM and TRACKGATE_METRICS take either case
    logLevel: (text(env, 'TRACKGATE_LOG_LEVEL') ?? 'info').toLowerCase(),
    logFormat: logFormat(env),
    logColour: env.NO_COLOR === undefined || env.NO_COLOR === '',
    checksum,
    idleTimeoutSeconds: integer(env, 'TRACKGATE_IDLE_TIMEOUT', 600, 10, 86400),
    // trackers log in right after they connect; an idle or half-sent connection must not hold a descriptor for the idle timeout
    identifyTimeoutSeconds: integer(env, 'TRACKGATE_IDENTIFY_TIMEOUT', 60, 1, 86400),
    commandWaitSeconds: integer(env, 'TRACKGATE_COMMAND_WAIT', 15, 1, 120),
    forwardTimeoutMs: integer(env, 'TRACKGATE_FORWARD_TIMEOUT_MS', 10_000, 100, 600_000),
    forwardRetentionDays: integer(env, 'TRACKGATE_FORWARD_RETENTION_DAYS', 7, 1, 365),
    forwardMaxPending: integer(env, 'TRACKGATE_FORWARD_MAX_PENDING', 1_000_000, 1000, 100_000_000),
    // unset keeps everything, as before retention existed; 36,500 days is the accounts' bound too
    retentionDays: text(env, 'TRACKGATE_RETENTION_DAYS')
      ? integer(env, 'TRACKGATE_RETENTION_DAYS', 0, 0, 36_500)
      : undefined,
    forwardAllow: Object.freeze(forwardAllow(env)),
    metrics: onOff(env, 'TRACKGATE_METRICS', true),
    gatewayProcesses: gatewayProcesses(env),
    gatewayLinkPort: port(env, 'TRACKGATE_GATEWAY_LINK_PORT', 'off'),
    gatewaySecret: text(env, 'TRACKGATE_GATEWAY_SECRET'),
    gatewayTlsCert: text(env, 'TRACKGATE_GATEWAY_TLS_CERT'),
    gatewayTlsKey: text(env, 'TRACKGATE_GATEWAY_TLS_KEY'),
    gatewayTlsCa: text(env, 'TRACKGATE_GATEWAY_TLS_CA'),
    diskWarn: diskThreshold(env, 'TRACKGATE_DISK_WARN', DISK_WARN_DEFAULT),
    diskError: diskThreshold(env, 'TRACKGATE_DISK_ERROR', DISK_ERROR_DEFAULT),
    diskCheckSeconds: integer(env, 'TRACKGATE_DISK_CHECK_INTERVAL', 30, 1, 3600),
    pgPartitionInterval: pgPartitionInterval(env),
    consoleTileUrl: consoleTileUrl(env),
  };
  checkTogether(config);
  return Object.freeze(config);
}

/** the variable that sets each listener's port, beside the port `config` gives it */
function portSettings(
  config:
    | Pick<
        Config,
        'httpPort' | 'httpsPort' | 'mqttPort' | 'mqttWsPort' | 'mqttTlsPort' | 'protocolPorts' | 'gatewayLinkPort'
      >
    | Pick<Config, 'protocolPorts'>,
): [string, number | 'off'][] {
  const c = config as Partial<Config> & Pick<Config, 'protocolPorts'>;
  const all: [string, number | 'off' | undefined][] = [
    ['TRACKGATE_HTTP_PORT', c.httpPort],
    ['TRACKGATE_HTTPS_PORT', c.httpsPort],
    ['TRACKGATE_MQTT_PORT', c.mqttPort],
    ['TRACKGATE_MQTT_WS_PORT', c.mqttWsPort],
    ['TRACKGATE_MQTT_TLS_PORT', c.mqttTlsCert || c.tlsCert ? c.mqttTlsPort : 'off'],
    ['TRACKGATE_GATEWAY_LINK_PORT', c.gatewayLinkPort],
    ...Object.entries(c.protocolPorts).map(([p, port]): [string, number | 'off'] => [
      `TRACKGATE_${p.toUpperCase()}_PORT`,
      port,
    ]),
    ...Object.entries(c.protocolTlsPorts ?? {}).map(([p, port]): [string, number | 'off'] => [
      `TRACKGATE_${p.toUpperCase()}_TLS_PORT`,
      port,
    ]),
  ];
  return all.filter((e): e is [string, number | 'off'] => e[1] !== undefined);
}

/**
 * A listener that could not bind, said with the variables that chose its address: Node's own
 * message ("listen EADDRINUSE: address already in use 0.0.0.0:5027") names neither the
 * listener nor the setting to change. Undefined for any other error.
 */
export function bindProblem(
  e: unknown,
  config: Pick<Config, 'host' | 'protocolPorts'> & Partial<Config>,
): string | undefined {
  const err = e as NodeJS.ErrnoException & { port?: number; hostname?: string };
  const port = err.port;
  if ((err.code === 'EADDRINUSE' || err.code === 'EACCES') && typeof port === 'number') {
    const names = portSettings(config)
      .filter(([, p]) => p === port)
      .map(([n]) => n);
    const who = names.length ? names.join(' and ') : `port ${port}`;
    const twice = names.length > 1 ? ' (one port cannot serve two listeners)' : '';
    return err.code === 'EADDRINUSE'
      ? `${who}: port ${port} on ${config.host} is already in use${twice}; stop what holds it (\`ss -ltnup 'sport = :${port}'\`) or set another port${names.includes('TRACKGATE_HTTP_PORT') ? '' : ' (or off)'}`
      : `${who}: port ${port} on ${config.host} needs privileges this process does not have (ports below 1024 need root or CAP_NET_BIND_SERVICE); set a port from 1024`;
  }
  if (
    err.code === 'EADDRNOTAVAIL' ||
    ((err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') && err.hostname === config.host)
  ) {
    return `TRACKGATE_HOST: "${config.host}" is not an address of this machine (${err.code}); set one of its addresses, 0.0.0.0 (every IPv4 address) or :: (every address)`;
  }
  return undefined;
}

/** Levenshtein distance, for the nearest known name of a misspelt variable */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/**
 * The TRACKGATE_* variables of `env` that trackgate does not read (a typo: TRACKGATE_TELTONKA_PORT
 * left the listener on 5027 without a word), each with the known name nearest to it when one is
 * close. The known names are those loadConfig reads, whatever the values.
 */
export function unknownVariables(env: Env): { name: string; nearest?: string }[] {
  const read = new Set<string>();
  const tracked = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return target[key as string];
    },
  });
  // called once the configuration loaded: every known name was read
  loadConfig(tracked);
  return Object.keys(env)
    .filter((name) => name.startsWith('TRACKGATE_') && !read.has(name))
    .map((name) => {
      const [best] = [...read]
        .filter((k) => k.startsWith('TRACKGATE_'))
        .map((k) => ({ k, d: distance(name, k) }))
        .sort((x, y) => x.d - y.d);
      return best && best.d <= 2 ? { name, nearest: best.k } : { name };
    });
}
