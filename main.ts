/**
 * The one composition root: config -> logger -> db -> stores -> services -> gateway + api.
 * `startTrackgate` is also what tests start (with port 0 everywhere) and what `trackgate serve` runs.
 */
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Registry } from 'prom-client';
import { bindProblem, loadConfig, unknownVariables, ConfigError, type Config } from './config/config.js';
import { openDb, migrate, pendingMigrations, ping, closeDb, sqlitePath, type Db } from './core/db/db.js';
import { describeStorageError, isSqliteSharedMemoryRefused, isStorageUnavailable } from './core/db/storage-errors.js';
import { systemClock, type Clock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { LogOutput } from './core/log-output.js';
import { EventBus } from './core/events/event-bus.js';
import { randomSecret } from './core/secrets.js';
import { createMemoryLimiters } from './core/quota/rate-limiter.memory.js';
import { createRedisFailedLogins, createRedisLimiters } from './core/quota/rate-limiter.redis.js';
import { keepDailyUsage } from './core/quota/daily-usage.keeper.js';
import { createMemoryQuotaStore } from './core/quota/quota-store.memory.js';
import { createRedisQuotaStore } from './core/quota/quota-store.redis.js';
import type { QuotaStore } from './core/quota/quota-store.js';
import type { RequestLimiter } from './core/quota/rate-limiter.js';
import type { LicenseStore } from './core/licenses/license-store.js';
import { createMemoryLicenseStore } from './core/licenses/license-store.memory.js';
import { createRedisLicenseStore } from './core/licenses/license-store.redis.js';
import { connectRedis, closeRedis, type RedisClient } from './core/redis/redis-client.redis.js';
import { createSmtpNotifier } from './core/notify/notifier.smtp.js';
import { createSmsHttpNotifier } from './core/notify/notifier.sms-http.js';
import { createNotificationsService, type NotificationsService } from './core/notify/notifications.service.js';
import * as outboxRepo from './core/notify/outbox.repository.js';
import * as accountsRepo from './core/accounts/accounts.repository.js';
import * as usersRepo from './core/users/users.repository.js';
import * as devicesRepo from './core/devices/devices.repository.js';
import { createTokensService, type TokensService } from './core/auth/tokens.service.js';
import { openTokenSecrets } from './core/auth/token-secrets.js';
import { createAccountsService, type AccountsService } from './core/accounts/accounts.service.js';
import { createDevicesService, type DevicesService } from './core/devices/devices.service.js';
import { createLocationsService, type LocationsService } from './core/locations/locations.service.js';
import { createAlertsService, type AlertsService } from './core/alerts/alerts.service.js';
import { createAlertRecorder, type AlertRecorder } from './core/alerts/alert.recorder.js';
import { startRulesEngine, type RulesEngine } from './core/rules/rules.engine.js';
import { createRuleSource, timeZones } from './core/rules/rule-source.js';
import { findById as findDevice } from './core/devices/devices.repository.js';
import { createGroupsService, type GroupsService } from './core/groups/groups.service.js';
import { createZonesService, type ZonesService } from './core/rules/zones.service.js';
import { createAlertRulesService, type AlertRulesService } from './core/rules/alert-rules.service.js';
import { createUsersService, type UsersService } from './core/users/users.service.js';
import { createForwardsService, type ForwardsService } from './core/forward/forwards.service.js';
import { createForwardJournal } from './core/forward/forward.journal.js';
import { startForwardRunner, type ForwardRunner } from './core/forward/forward.runner.js';
import { openForwarder } from './core/forward/open-forwarder.js';
import { createForwardTargets, type ForwardTargets } from './core/forward/forward.targets.js';
import { COMMAND_UPKEEP_MS, createCommandsService, present as presentCommand, type CommandCheck, type CommandsService } from './core/commands/commands.service.js';
import type { CommandFormat } from './core/model/command.js';
import { createApi } from './api/app.js';
import { createDeviceDirectory, type DeviceDirectory } from './core/devices/device-directory.js';
import { createIngestService, type IngestService } from './core/ingest/ingest.service.js';
import { createMetrics, type Metrics } from './core/metrics/metrics.js';
import { startTrackerGateway, type TrackerGateway } from './gateway/tracker-gateway.js';
import { tlsPairProblem } from './gateway/shared/stream-server.js';
import { startCoreLink, startLocalCoreLink, type CoreLink } from './gateway/ipc/core-link.server.js';
import { startGatewayPool, type GatewayPool } from './gateway/ipc/gateway-pool.js';
import { concretePorts } from './gateway/ipc/free-ports.js';
import { startMqttGateway } from './gateway/mqtt/mqtt.gateway.js';
import { relayFrames } from './gateway/shared/frame-relay.redis.js';
import { PROTOCOL as MQTT_PROTOCOL, MQTT_LOGIN_LIMITS, memoryLoginLimiters, type MqttLoginLimiters } from './gateway/mqtt/mqtt.auth.js';
import { FrameTap } from './gateway/shared/frame-tap.js';
import { listen } from './gateway/shared/listen.js';
import { relayEvents } from './core/events/event-relay.redis.js';
import { lockDataDir } from './core/db/data-dir.lock.js';
import { watchStorage, type StorageWatch } from './core/db/storage.watch.js';
import { getProtocol, protocols } from './protocols/index.js';
import { CommandError } from './protocols/types.js';
import { PROTOCOL_DEFAULT_PORTS } from './config/config.js';

/** The User-Agent of webhook forwards (and the AMQP connection name). */
export const USER_AGENT = `trackgate/${(JSON.parse(readFileSync(new URL(existsSync(new URL('./package.json', import.meta.url)) ? './package.json' : '../package.json', import.meta.url), 'utf8')) as { version: string }).version}`;

export interface StartOptions {
  logger?: Logger;
  clock?: Clock;
}

/** Everything createServices made: the core's services and stores, shared by the API and the gateways. */
export interface Services {
  /** The in-process event bus (relayed through Redis when configured). */
  events: EventBus;
  /** The one writer of alerts (the ingest's, and the alert rules'). */
  alertRecorder: AlertRecorder;
  /** The raw-frame feed (live/{deviceId}/frames): local to this process, offered only when someone listens. */
  frames: FrameTap;
  /** Issues and checks tokens and API keys. */
  tokens: TokensService;
  /** Accounts, their licences and the first start's bootstrap. */
  accounts: AccountsService;
  /** The gateway's view of devices by identifier, and the unknown devices seen. */
  directory: DeviceDirectory;
  /** The one path into the core for every report. */
  ingest: IngestService;
  /** Devices over REST. */
  devices: DevicesService;
  /** Locations over REST. */
  locations: LocationsService;
  /** Alerts over REST. */
  alerts: AlertsService;
  /** Commands to devices: the queue REST fills and the tracker gateway delivers. */
  commands: CommandsService;
  /** Groups over REST. */
  groups: GroupsService;
  /** Users over REST. */
  users: UsersService;
  /** Zones over REST (*ext*): what alert rules watch. */
  zones: ZonesService;
  /** Alert rules over REST (*ext*). */
  alertRules: AlertRulesService;
  /** Forwards over REST (*ext*): the account's stream pushed downstream. */
  forwards: ForwardsService;
  /** Where forwards may connect (TRACKGATE_FORWARD_ALLOW; never this service's own listeners). */
  forwardTargets: ForwardTargets;
  /** The notification outbox and its worker. */
  notifications: NotificationsService;
  /** Daily per-device send counters (in-process, or Redis). */
  quota: QuotaStore;
  /** Where licences are counted (in-process, or Redis). */
  licenses: LicenseStore;
  /** REST requests per user per minute and day (in-process, or Redis). */
  limiter: RequestLimiter;
  /** Failed MQTT logins per address and per identity from an address (in-process, or Redis). */
  mqttLogins: MqttLoginLimiters;
  /** The process's logger. */
  logger: Logger;
  /** Waits for the commits of locations in progress (up to INGEST_DRAIN_MS), stops the outbox worker and timers, flushes what is pending and closes Redis. */
  close(): Promise<void>;
}

export interface Running {
  config: Readonly<Config>;
  db: Db;
  ports: Record<string, number>;
  /** the tracker listeners: in this process, or the gateway processes' (TRACKGATE_GATEWAY_PROCESSES) as the core sees them */
  gateway: Pick<TrackerGateway, 'ports' | 'deliverCommands' | 'connectedDevices' | 'stop'>;
  /** the gateway processes and the core's link to them, when they run */
  gatewayPool?: GatewayPool;
  gatewayLink?: CoreLink;
  /** the core's link for edge gateways (TRACKGATE_GATEWAY_LINK_PORT) */
  edgeLink?: CoreLink;
  services: Services;
  /** the alert-rule engine (tests wait for it and make it evaluate the time passing) */
  rules: RulesEngine;
  /** the forwards' delivery loops (tests apply retention at once) */
  forwarding: ForwardRunner;
  /** set when this start created the first account */
  bootstrap?: { accountId: string; userName: string; apiKey: string; generated: boolean };
  stop(): Promise<void>;
}

/**
 * JSON lines on standard output, written in blocks (core/log-output.ts). What is left is written
 * when the process exits (a clean stop, an uncaught exception); a process killed outright
 * (SIGKILL) loses at most the last LOG_FLUSH_MS of lines; a reader of standard output that is gone
 * or stalls never keeps the process from running or from stopping.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat' | 'logColour'>): Logger {
  const base = { service: 'trackgate' };
  return pino({ level: config.logLevel, base }, new LogOutput({ base, format: config.logFormat, colour: config.logColour })) as unknown as Logger;
}

/**
 * What the start-up log says about the storage and Redis in use: kind and where, never a
 * password (only the parts of each URL an operator needs to find the server).
 */
export function describeBackends(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'redisUrl' | 'redisPrefix'>): { storage: Record<string, unknown>; redis: Record<string, unknown> } {
  const where = (url: string, defaultPort: number) => {
    try {
      const u = new URL(url);
      return { host: u.hostname, port: Number(u.port || defaultPort), path: decodeURIComponent(u.pathname.slice(1)), user: decodeURIComponent(u.username) };
    } catch {
      return { host: 'unreadable URL', port: defaultPort, path: '', user: '' };
    }
  };
  let storage: Record<string, unknown>;
  if (config.databaseUrl) {
    const pg = where(config.databaseUrl, 5432);
    storage = { kind: 'postgres', host: pg.host, port: pg.port, database: pg.path, ...(pg.user && { user: pg.user }) };
  } else {
    storage = { kind: 'sqlite', file: sqlitePath(config.dataDir) };
  }
  let redis: Record<string, unknown> = { enabled: false };
  if (config.redisUrl) {
    const r = where(config.redisUrl, 6379);
    redis = { enabled: true, host: r.host, port: r.port, db: Number(r.path || 0), tls: config.redisUrl.startsWith('rediss:'), prefix: config.redisPrefix };
  }
  return { storage, redis };
}

/**
 * What the start-up log says about the notification channels: whether e-mail and SMS are on, and
 * where they go, never a password or the SMS URL's query (gateways put their keys there). Without
 * it nobody knew a channel was off until an alert was suppressed as `notConfigured`.
 */
export function describeNotifications(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'smsUrl'>): { email: Record<string, unknown>; sms: Record<string, unknown> } {
  let email: Record<string, unknown> = { enabled: false };
  if (config.smtpUrl) {
    const u = new URL(config.smtpUrl);
    const secure = u.protocol === 'smtps:';
    // nodemailer's defaults: 465 with TLS from the start, 587 otherwise
    email = { enabled: true, host: u.hostname, port: Number(u.port || (secure ? 465 : 587)), secure, ...(u.username && { user: decodeURIComponent(u.username) }), from: config.mailFrom };
  }
  let sms: Record<string, unknown> = { enabled: false };
  if (config.smsUrl) {
    const u = new URL(config.smsUrl);
    sms = { enabled: true, url: `${u.origin}${u.pathname}` };
  }
  return { email, sms };
}

/**
 * Opens the database and brings its schema up to date; a database that does not answer names the
 * variable. A database that answers reads but refuses writes (a full disk, a read-only file
 * system) opens: only a migration it needs and cannot write stops the start.
 */
export async function openStorage(config: Readonly<Config>, logger?: Logger): Promise<Db> {
  const variable = config.databaseUrl ? 'TRACKGATE_DATABASE_URL' : 'TRACKGATE_DATA_DIR';
  const answering = async (sqliteExclusive: boolean): Promise<Db> => {
    const db = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteExclusive, poolMax: config.databasePool });
    try {
      await ping(db);
      return db;
    } catch (e) {
      await closeDb(db).catch(() => {});
      throw e;
    }
  };
  const unanswered = (e: unknown) => new ConfigError(variable, `the database does not answer (${(e as Error).message.split('\n')[0]})`);
  let db: Db;
  try {
    db = await answering(false);
  } catch (e) {
    // A WAL database stopped cleanly has no -shm file; on a disk without its 32 KiB SQLite cannot
    // open it shared, but can exclusively, the WAL index in this process's memory.
    if (config.databaseUrl || !isSqliteSharedMemoryRefused(e)) throw unanswered(e);
    db = await answering(true).catch((again: unknown) => {
      throw unanswered(again);
    });
    logger?.warn({ err: (e as Error).message, code: (e as { code?: string }).code }, 'SQLite cannot create its shared-memory file (-shm; a full disk?): the database is held exclusively by this process until it stops: `trackgate account` commands cannot open it meanwhile');
  }
  let pending: string[] = [];
  try {
    pending = await pendingMigrations(db);
    if (pending.length) await migrate(db);
  } catch (e) {
    await closeDb(db).catch(() => {});
    if (pending.length && isStorageUnavailable(e)) {
      throw new Error(`the database needs ${pending.length} migration(s) (${pending.join(', ')}) and refuses to write them (${describeStorageError(e).split('\n')[0]}); free disk space (or make it writable) and start again`, { cause: e });
    }
    throw e;
  }
  return db;
}

/**
 * An outbound TCP connection without Nagle's algorithm (SMTP: see createSmtpNotifier), returned
 * while it connects: nodemailer's connection and greeting timeouts and error handling apply to it.
 */
function connectNoDelay(host: string, port: number): net.Socket {
  const socket = net.connect({ host, port, noDelay: true });
  // nodemailer listens for errors while it uses the socket; one after it let go must not stop the process.
  socket.on('error', () => {});
  return socket;
}

/** Redis when configured: waits a few seconds for it, then carries on (stores fail over as documented). */
async function openRedis(config: Readonly<Config>, logger: Logger): Promise<RedisClient | undefined> {
  if (!config.redisUrl) return undefined;
  // No offline queue: while Redis is down a command fails at once and the caller's fallback applies;
  // while it hangs, after the command timeout.
  const redis = connectRedis(config.redisUrl, { enableOfflineQueue: false, commandTimeout: config.redisTimeoutMs });
  let lastError = '';
  redis.on('error', (e: Error) => {
    if (e.message !== lastError) logger.warn({ err: e.message }, 'redis');
    lastError = e.message;
  });
  redis.on('ready', () => {
    lastError = '';
  });
  const ready = await new Promise<boolean>((resolve) => {
    const t = setTimeout(() => resolve(false), 5000);
    redis.once('ready', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
  if (!ready) logger.warn({ variable: 'TRACKGATE_REDIS_URL' }, 'redis does not answer yet; notifications wait in the outbox and licences cannot be claimed until it does');
  return redis;
}

/**
 * A command checked with the device protocol's own encoder before it is queued (core knows no
 * protocols): a protocol without `encodeCommand` carries none (OsmAnd, OwnTracks phones), and a
 * Text it cannot carry names the CommandError's reason. MQTT devices take any command: it goes in
 * JSON as it is (gateway/mqtt/mqtt.commands.ts).
 */
export function checkCommand(protocol: string, deviceId: string, format: CommandFormat, text: string): CommandCheck {
  if (protocol === MQTT_PROTOCOL) return 'ok';
  const module = getProtocol(protocol);
  if (!module?.encodeCommand) return 'unsupported';
  if (format !== 'Text') return 'ok';
  try {
    module.encodeCommand(text, { deviceId, now: new Date(0), serial: 0 });
    return 'ok';
  } catch (e) {
    if (e instanceof CommandError) return { reason: e.reason, message: e.message };
    throw e;
  }
}

/** how long a stop waits for the commits in progress before it closes the database (within STOP_TIMEOUT_MS) */
const INGEST_DRAIN_MS = 5000;

export async function createServices(config: Readonly<Config>, db: Db, clock: Clock, logger: Logger, metrics?: Metrics, storage?: StorageWatch): Promise<Services> {
  const events = new EventBus();
  // the token secret the instances on this database share; TRACKGATE_JWT_SECRET replaces it when set
  const secret = await openTokenSecrets({ db, clock, logger, configured: config.jwtSecret, ttlSeconds: config.tokenTtlSeconds });
  const redis = await openRedis(config, logger);
  const limitSettings = { perMinute: config.rateLimitPerMinute, failedTokenLimit: config.failedTokenLimit };
  const memoryLimiters = redis ? undefined : createMemoryLimiters(limitSettings);
  const limiters = memoryLimiters ?? createRedisLimiters(redis!, config.redisPrefix, limitSettings);
  // Without Redis, today's request counts are saved now and then, so apiDailyUsage survives a restart.
  const { identity, address, windowSeconds } = MQTT_LOGIN_LIMITS;
  const mqttLogins: MqttLoginLimiters = redis
    ? { address: createRedisFailedLogins(redis, `${config.redisPrefix}mqtt:fail:addr`, address, windowSeconds), identity: createRedisFailedLogins(redis, `${config.redisPrefix}mqtt:fail:id`, identity, windowSeconds) }
    : memoryLoginLimiters();
  const usageKeeper = memoryLimiters ? await keepDailyUsage({ db, clock, logger, limiters: memoryLimiters }) : undefined;
  const memoryQuota = redis ? undefined : createMemoryQuotaStore({ clock });
  const quota: QuotaStore = redis ? createRedisQuotaStore(redis, config.redisPrefix) : memoryQuota!;
  const licenses = redis ? createRedisLicenseStore(redis, config.redisPrefix) : createMemoryLicenseStore();
  const nowMs = clock.now().getTime();
  if (memoryQuota) {
    // In-process counters start from what the outbox already holds today: a restart does not reset them.
    for (const h of await outboxRepo.liveQuotaHolders(db, nowMs)) await memoryQuota.reserve(h.quotaKey, Number.MAX_SAFE_INTEGER, new Date(h.quotaExpiresAt));
  }
  for (const accountId of await accountsRepo.listIds(db)) {
    await licenses.load(accountId, await devicesRepo.licenseHolders(db, accountId)).catch((e: Error) => logger.warn({ err: e.message }, 'licence store not loaded'));
  }
  const notifications = createNotificationsService({
    db, clock, logger, quota, sendTimeoutMs: config.notifyTimeoutMs,
    channels: {
      Email: config.smtpUrl ? createSmtpNotifier({ url: config.smtpUrl, from: config.mailFrom, timeoutMs: config.notifyTimeoutMs, openSocket: connectNoDelay }) : undefined,
      SMS: config.smsUrl ? createSmsHttpNotifier({ url: config.smsUrl, timeoutMs: config.notifyTimeoutMs }) : undefined,
    },
  });
  const tokens = createTokensService({ db, clock, secret, ttlSeconds: config.tokenTtlSeconds, failedLogins: limiters.failedLogins });
  const accounts = createAccountsService(db, clock, { onCreated: (id) => licenses.load(id, []) });
  const directory = createDeviceDirectory({ db, clock, logger, events });
  const devices = createDevicesService({ db, clock, licenses, counters: notifications.counters, onChange: (id) => events.deviceChanged(id) });
  // what accounts with a forward store is journaled in the same transaction (core/forward/)
  const journal = createForwardJournal({ db, clock, events });
  const alertRecorder = createAlertRecorder({ db, clock, events, notifier: notifications.notifier, afterInsert: journal.alert });
  const ingest = createIngestService({ db, clock, events, alerts: alertRecorder, logger, afterWrite: journal.locations, counts: metrics?.ingest, fileLost: storage?.fileLost });
  // On SQLite this process is the only writer, so the REST read path may remember last locations.
  const locations = createLocationsService({ db, clock, events, ingest, cacheLastLocations: !config.databaseUrl });
  const alerts = createAlertsService({ db, ingest });
  // Every cache is cleared through the event bus (and so, with Redis, on every instance).
  events.onUserChanged((userId) => tokens.forget(userId));
  events.onAccountChanged((accountId) => notifications.forgetZone(accountId));
  const groups = createGroupsService({
    db, clock,
    onDevicesChanged: (ids) => ids.forEach((id) => events.deviceChanged(id)),
  });
  const users = createUsersService({ db, clock, onChange: (id) => events.userChanged(id) });
  // a zone or rule changed: every instance's rule engine reads the account's rules again
  const zones = createZonesService({ db, clock, onChanged: (accountId) => events.rulesChanged(accountId) });
  const alertRules = createAlertRulesService({ db, clock, onChanged: (accountId) => events.rulesChanged(accountId) });
  const forwardTargets = createForwardTargets({ allow: config.forwardAllow, timeoutMs: config.forwardTimeoutMs });
  const forwards = createForwardsService({ db, clock, targets: forwardTargets, onChanged: (accountId) => events.forwardsChanged(accountId) });
  const commandSms = config.smsUrl ? createSmsHttpNotifier({ url: config.smsUrl, timeoutMs: config.notifyTimeoutMs }) : undefined;
  const commands = createCommandsService({
    db, clock, logger, waitMs: config.commandWaitSeconds * 1000, check: checkCommand, sms: commandSms,
    announce: (deviceId) => events.commandsQueued(deviceId),
    // On PostgreSQL other instances may hold the device's connection (a TCP connection silent for
    // TRACKGATE_IDLE_TIMEOUT is closed, so an older last connection is offline); their upkeep finds
    // the command within COMMAND_UPKEEP_MS without Redis.
    ...(config.databaseUrl && { remote: { pickupMs: COMMAND_UPKEEP_MS + 1000, recentMs: config.idleTimeoutSeconds * 1000, pollMs: 200 } }),
    onChange: (c) => events.commandChanged({ accountId: c.accountId, deviceId: c.deviceId, command: presentCommand(c) }),
  });
  return {
    events, tokens, accounts, directory, ingest, devices, locations, alerts, groups, users, zones, alertRules, forwards, forwardTargets, commands, notifications, quota, licenses, alertRecorder,
    // the raw-frame feed: the tracker listeners offer frames, the MQTT live feed shows them
    frames: new FrameTap(),
    limiter: limiters.requests, mqttLogins, logger,
    async close(): Promise<void> {
      // every listener is closed by now: what they submitted is committed before the database closes
      if (!(await ingest.drain(INGEST_DRAIN_MS))) logger.warn({ waitedMs: INGEST_DRAIN_MS }, 'stopping: locations still not committed; the database is closed under them (nothing of them was acknowledged)');
      journal.close();
      await commandSms?.close();
      await notifications.stop();
      await usageKeeper?.close();
      await directory.close();
      memoryQuota?.close();
      if (redis) await closeRedis(redis);
    },
  };
}

export async function startTrackgate(config: Readonly<Config>, options: StartOptions = {}): Promise<Running> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  let unlock: (() => void) | undefined;
  if (!config.databaseUrl) {
    try {
      unlock = lockDataDir(config.dataDir);
    } catch (e) {
      throw new ConfigError('TRACKGATE_DATA_DIR', `${config.dataDir} ${(e as Error).message}`);
    }
  }
  const db = await openStorage(config, logger).catch((e: unknown) => {
    unlock?.();
    throw e;
  });
  logger.info(describeBackends(config), 'storage ready');
  // What is open so far, closed in reverse order by stop() or by a start that fails half-way.
  const closers: (() => Promise<void>)[] = [
    async () => {
      await closeDb(db);
      unlock?.();
    },
  ];
  const closeAll = async () => {
    while (closers.length) await closers.pop()!().catch((e: Error) => logger.warn({ err: e.message }, 'closing failed'));
  };

  try {
    // a database that refuses writes (a full disk) is said at start, and a SQLite file deleted later
    const storage = await watchStorage({ db, clock, logger });
    closers.push(() => storage.stop());
    // GET /metrics: one registry; each part counts its own (core/metrics/counts.ts), read at each scrape
    const metrics = config.metrics ? createMetrics(new Registry()) : undefined;
    metrics?.readAtScrape({ outboxPending: () => outboxRepo.countPending(db) });
    const services = await createServices(config, db, clock, logger, metrics, storage);
    closers.push(() => services.close());

    // Every listener is bound before the first account exists: a port in use stops the first start
    // before a generated API key is printed, so the key is never shown by a start that then dies.
    // Until then (seconds with gateway processes) health says "starting" and the rest of the API 503.
    let started = false;
    const api = createApi({ ...services, clock, logger, bodyLimitBytes: config.bodyLimitBytes, starting: () => !started, ping: () => ping(db), writesFailing: () => storage.problem() ?? services.ingest.writesFailing(), unknownDevices: services.directory.recentUnknown, onTimeZoneChanged: (accountId) => services.events.accountChanged(accountId), metrics });
    // The API's server is made here, beside every other listener: api/ builds the Koa app only.
    const server = http.createServer(api.callback());
    server.keepAliveTimeout = 65_000;
    const apiListener = await listen(server, { port: config.httpPort, host: config.host });
    closers.push(() => apiListener.close());
    const trackers = await startTrackers(config, services, clock, logger, metrics);
    closers.push(() => trackers.gateway.stop());
    const { pool: gatewayPool, link: gatewayLink } = trackers;
    // the gateway processes' (and edge gateways') listener counts, summed into this GET /metrics
    metrics?.readAtScrape({ remoteTrackers: () => [...(trackers.link?.trackerCounts() ?? []), ...(edge?.link.trackerCounts() ?? [])] });
    // edge gateways (`trackgate gateway --core`) on their own link: commands go through whichever side holds the device
    const edge = await startEdgeLink(config, services, clock, logger);
    if (edge) {
      closers.push(() => edge.link.close());
      // a tracker that moves between the core's own listeners and an edge gateway: its connection on the side it left is stale
      trackers.onOnline((deviceId) => edge.link.drop(deviceId));
      edge.link.onOnline((deviceId) => trackers.drop(deviceId));
    }
    const gateway: Running['gateway'] = edge
      ? {
          ports: { ...trackers.gateway.ports, gatewayLink: edge.port },
          deliverCommands: (deviceId) => trackers.gateway.deliverCommands(deviceId) || edge.link.deliverCommands(deviceId),
          connectedDevices: () => [...trackers.gateway.connectedDevices(), ...edge.link.connectedDevices()],
          stop: () => trackers.gateway.stop(),
        }
      : trackers.gateway;
    // MQTT over TLS: its files said wrong at start (the MQTT gateway reads them again, by their paths)
    if (config.mqttTlsCert && config.mqttTlsKey && config.mqttTlsPort !== 'off') readTlsPair('TRACKGATE_MQTT_TLS', config.mqttTlsCert, config.mqttTlsKey);
    const mqtt = await startMqttGateway({
      host: config.host,
      port: config.mqttPort,
      wsPort: config.mqttWsPort,
      tlsPort: config.mqttTlsPort,
      tlsCert: config.mqttTlsCert,
      tlsKey: config.mqttTlsKey,
      maxPacketBytes: config.mqttMaxPacketBytes,
      ...services,
      commandWaitMs: config.commandWaitSeconds * 1000,
      clock,
      logger,
      counts: metrics?.mqtt,
    });
    closers.push(() => mqtt.stop());
    metrics?.readAtScrape({ mqttClients: () => mqtt.connectedClients(), mqttOutcomes: () => ({ ...mqtt.stats }) });
    // A device's commands go through whichever side holds it: a tracker connection or an MQTT client.
    const deliverCommands = (deviceId: string) => gateway.deliverCommands(deviceId) || mqtt.deliverCommands(deviceId);
    services.commands.attach({ deliver: deliverCommands });
    // a command queued on another instance (relayed through Redis) for a device connected here
    const offQueued = services.events.onCommandsQueued((deviceId, remote) => {
      if (remote) deliverCommands(deviceId);
    });
    // Expiry in the background, and without Redis the commands queued on other instances for the
    // devices connected here: one indexed query every COMMAND_UPKEEP_MS, never two at once.
    let upkeeping = false;
    const upkeep = setInterval(() => {
      if (upkeeping) return;
      upkeeping = true;
      services.commands
        .upkeep([...gateway.connectedDevices(), ...mqtt.connectedDevices()])
        .then((ids) => ids.forEach(deliverCommands))
        .catch((e: Error) => logger.warn({ err: e.message }, 'command upkeep failed; tried again shortly'))
        .finally(() => {
          upkeeping = false;
        });
    }, COMMAND_UPKEEP_MS);
    upkeep.unref();
    closers.push(async () => {
      clearInterval(upkeep);
      offQueued();
    });
    // alert rules: positions stored here, and the time passing under a lease (one instance at a time)
    const rules = startRulesEngine({
      db, clock, logger, events: services.events, alerts: services.alertRecorder, source: createRuleSource(db),
      device: (id) => findDevice(db, id), timeZoneOf: timeZones(db, clock), commands: services.commands,
    });
    closers.push(() => rules.stop());
    // forwards: one delivery loop per forward, under a lease (one instance at a time); never to a listener of this service
    const targets = services.forwardTargets;
    targets.setOwnPorts([apiListener.port, ...Object.values(gateway.ports), ...Object.values(mqtt.ports as Record<string, number>)]);
    const forwarding = startForwardRunner({
      db, clock, logger, events: services.events, targets,
      open: (f) => openForwarder(f, { timeoutMs: config.forwardTimeoutMs, userAgent: USER_AGENT, targets }),
      settings: { retentionMs: config.forwardRetentionDays * 86_400_000, maxPendingPerAccount: config.forwardMaxPending },
    });
    closers.push(() => forwarding.stop());
    // a tracker that moved to another instance (announced there, relayed through Redis): its
    // connection here is stale, half-open until the idle timeout, and would take its commands
    trackers.onOnline((deviceId) => services.events.trackerOnline(deviceId));
    edge?.link.onOnline((deviceId) => services.events.trackerOnline(deviceId));
    const offTrackerOnline = services.events.onTrackerOnline((deviceId, remote) => {
      if (!remote) return;
      trackers.drop(deviceId, 'replaced by a newer connection of the same device on another instance');
      edge?.link.drop(deviceId);
    });
    closers.push(async () => offTrackerOnline());
    const relay = config.redisUrl ? await relayEvents(services.events, config.redisUrl, config.redisPrefix, logger, { live: config.mqttPort !== 'off', timeoutMs: config.redisTimeoutMs }) : undefined;
    if (relay) closers.push(() => relay.close());
    // raw frames cross instances only for accounts someone on another instance listens to
    const frameRelay = config.redisUrl ? await relayFrames(services.frames, config.redisUrl, config.redisPrefix, logger, { timeoutMs: config.redisTimeoutMs }) : undefined;
    if (frameRelay) closers.push(() => frameRelay.close());

    const created = await services.accounts
      .bootstrap({
        name: 'Default account',
        licenses: config.licenses,
        adminUser: config.adminUser,
        adminApiKey: config.adminApiKey,
      })
      .catch(async (e: unknown) => {
        if (!isStorageUnavailable(e)) throw e;
        if (!(await accountsRepo.listIds(db)).length) throw new Error(`the first account cannot be created: storage refuses writes (${describeStorageError(e)}); free disk space (or make it writable) and start again`, { cause: e });
        // a database that refuses writes (a full disk) keeps the admin's stored key
        logger.warn({ err: describeStorageError(e), variable: 'TRACKGATE_ADMIN_API_KEY' }, 'the new admin API key cannot be stored (storage refuses writes): the stored one stays valid until a start that can store it');
        return undefined;
      });
    // a later start applies TRACKGATE_ADMIN_API_KEY to the user TRACKGATE_ADMIN_USER names, which must exist
    if (!created && config.adminApiKey !== undefined && !(await usersRepo.findByUserName(db, config.adminUser))) {
      logger.warn(
        { variable: 'TRACKGATE_ADMIN_USER', userName: config.adminUser },
        `TRACKGATE_ADMIN_API_KEY is not applied: there is no user "${config.adminUser}" (TRACKGATE_ADMIN_USER is read as a new name on the first start only); set TRACKGATE_ADMIN_USER to the admin's user name`,
      );
    }
    if (created) {
      const generated = config.adminApiKey === undefined;
      // the one line that shows a generated key: at TRACKGATE_LOG_LEVEL=warn or error it would be dropped, the admin locked out
      const hidesInfo = config.logLevel === 'warn' || config.logLevel === 'error';
      const say = generated && hidesInfo ? logger.error.bind(logger) : logger.info.bind(logger);
      say(
        generated ? { accountId: created.accountId, userName: created.userName, apiKey: created.apiKey } : { accountId: created.accountId, userName: created.userName },
        generated ? 'first start: created the account and its admin; this API key is shown once, keep it' : 'first start: created the account and its admin',
      );
    }

    const ports: Record<string, number> = { http: apiListener.port, ...gateway.ports, ...(mqtt.ports as Record<string, number>) };
    const withoutDecoder = Object.keys(PROTOCOL_DEFAULT_PORTS).filter((p) => !(p in protocols));
    if (withoutDecoder.length) logger.info({ protocols: withoutDecoder }, 'these protocols have no decoder in this version; no listener');
    logger.info({ host: config.host, ports, notifications: describeNotifications(config) }, 'listening');
    started = true;

    return {
      config,
      db,
      ports,
      gateway,
      gatewayPool,
      gatewayLink,
      edgeLink: edge?.link,
      services,
      rules,
      forwarding,
      bootstrap: created ? { accountId: created.accountId, userName: created.userName, apiKey: created.apiKey, generated: config.adminApiKey === undefined } : undefined,
      async stop() {
        // a signal to the whole process group (Ctrl-C, systemd) stops the gateway processes too: not started again
        gatewayPool?.quiesce();
        await closeAll();
      },
    };
  } catch (e) {
    await closeAll();
    throw e;
  }
}

/** The core's own tracker listeners, wherever they run. */
interface Trackers {
  gateway: Running['gateway'];
  pool?: GatewayPool;
  link?: CoreLink;
  /** Calls `fn` when a device gets a live connection on them. */
  onOnline(fn: (deviceId: string) => void): void;
  /** Closes the device's connection on them, if any (it connected to an edge gateway, or to another instance). */
  drop(deviceId: string, reason?: string): void;
}

/**
 * The tracker listeners: in this process (TRACKGATE_GATEWAY_PROCESSES=0), or in gateway processes
 * (gateway-main.ts, cluster workers of this one) that reach the core over net-ipc on a loopback
 * TCP port of their own (README "Scaling").
 */
async function startTrackers(config: Readonly<Config>, services: Services, clock: Clock, logger: Logger, metrics?: Metrics): Promise<Trackers> {
  // no tracker port: nothing for gateway processes to do
  if (config.gatewayProcesses === 0 || Object.values(config.protocolPorts).every((p) => p === 'off')) {
    const onlines: ((deviceId: string) => void)[] = [];
    const gateway = await startTrackerGateway({
      host: config.host,
      protocols,
      ports: config.protocolPorts,
      clock,
      checksum: config.checksum,
      idleTimeoutSeconds: config.idleTimeoutSeconds,
      identifyTimeoutSeconds: config.identifyTimeoutSeconds,
      directory: services.directory,
      ingest: services.ingest,
      commands: services.commands,
      commandWaitMs: config.commandWaitSeconds * 1000,
      frames: services.frames,
      logger,
      metrics,
      onConnectionChange: (deviceId, connected) => {
        if (connected) for (const fn of onlines) fn(deviceId);
      },
    });
    return {
      gateway,
      onOnline: (fn) => onlines.push(fn),
      drop: (deviceId, reason = 'replaced by a newer connection of the same device on an edge gateway') => gateway.registry.get(deviceId)?.close(reason),
    };
  }
  const secret = randomSecret();
  const { link, address } = await startLocalCoreLink({ secret, ...services, clock, logger });
  let pool: GatewayPool;
  try {
    pool = await startGatewayPool({
      processes: config.gatewayProcesses,
      // gateway-main.ts beside this file (.js once built): it loads only what a gateway process runs
      exec: fileURLToPath(import.meta.url).replace(/main\.(ts|js)$/, 'gateway-main.$1'),
      args: [],
      link,
      logger,
      settings: {
        link: address,
        secret,
        host: config.host,
        ports: await concretePorts(config.protocolPorts, protocols, config.host),
        checksum: config.checksum,
        idleTimeoutSeconds: config.idleTimeoutSeconds,
        identifyTimeoutSeconds: config.identifyTimeoutSeconds,
        commandWaitMs: config.commandWaitSeconds * 1000,
        logLevel: config.logLevel,
        logFormat: config.logFormat,
        logColour: config.logColour,
      },
    });
  } catch (e) {
    await link.close();
    throw e;
  }
  logger.info({ processes: config.gatewayProcesses, pids: pool.pids() }, 'gateway processes listening');
  return {
    pool,
    link,
    onOnline: (fn) => link.onOnline(fn),
    drop: (deviceId) => link.drop(deviceId),
    gateway: {
      ports: pool.ports,
      deliverCommands: (deviceId) => link.deliverCommands(deviceId),
      connectedDevices: () => link.connectedDevices(),
      async stop() {
        await pool.stop();
        await link.close();
      },
    },
  };
}

/**
 * The link edge gateways connect to (`trackgate gateway --core host:port`), when
 * TRACKGATE_GATEWAY_LINK_PORT is set: TCP on TRACKGATE_HOST, TLS when a certificate is configured,
 * and TRACKGATE_GATEWAY_SECRET to present. Port 0 picks a free port (logged with the others).
 */
async function startEdgeLink(config: Readonly<Config>, services: Services, clock: Clock, logger: Logger): Promise<{ link: CoreLink; port: number } | undefined> {
  if (config.gatewayLinkPort === 'off') return undefined;
  // a file that is not a certificate, or a key of another: said at start, not at each gateway's handshake
  const tls = config.gatewayTlsCert && config.gatewayTlsKey ? readTlsPair('TRACKGATE_GATEWAY_TLS', config.gatewayTlsCert, config.gatewayTlsKey) : undefined;
  const link = await startCoreLink({ port: config.gatewayLinkPort, host: config.host, tls, secret: config.gatewaySecret!, ...services, clock, logger: logger.child({ link: 'edge' }) });
  const port = link.port!;
  if (!tls) logger.warn({ port }, 'edge gateways connect without TLS: their secret and data cross the network in clear (set TRACKGATE_GATEWAY_TLS_CERT and _KEY)');
  return { link, port };
}

/**
 * A TLS certificate and key from the files `${prefix}_CERT` and `${prefix}_KEY` name: one that
 * cannot be read, or two that are not a pair, is the configuration error naming its variable
 * (Node said only "ENOENT: no such file or directory, open '…'" or "error:0480006C:PEM
 * routines::no start line", at the first handshake for the edge link).
 */
function readTlsPair(prefix: 'TRACKGATE_GATEWAY_TLS' | 'TRACKGATE_MQTT_TLS', certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  const read = (file: string, variable: string) => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new ConfigError(variable, `cannot read ${file} (${(e as Error).message})`);
    }
  };
  const pair = { cert: read(certFile, `${prefix}_CERT`), key: read(keyFile, `${prefix}_KEY`) };
  const problem = tlsPairProblem(pair.cert, pair.key);
  if (problem) throw new ConfigError(`${prefix}_CERT`, `${certFile} and ${prefix}_KEY ${keyFile} are not a PEM certificate and its key (${problem})`);
  return pair;
}

/** how long stopping may take before the process exits anyway */
const STOP_TIMEOUT_MS = 10_000;

/** A start that cannot go on: one line naming the cause, exit 78 for configuration (EX_CONFIG), else 1. */
function exitOnStartError(e: unknown, config?: Readonly<Config>): never {
  if (e instanceof ConfigError) {
    process.stderr.write(`trackgate: configuration error: ${e.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`trackgate: could not start: ${(config && bindProblem(e, config)) ?? (e as Error).message}\n`);
  process.exit(1);
}

/**
 * `npm start` / `trackgate serve`: one line naming the variable when configuration is wrong; from
 * then on everything, stopping included, is a JSON log line.
 *
 * Process policy: an unhandled promise rejection is a bug in one request or connection; it is
 * logged at error with its stack and the service keeps running (every other tracker and client
 * carries on). An uncaught exception may have left state half-changed, so, as Node.js advises,
 * the process logs it, stops cleanly (what was acknowledged is already stored) and exits with 1
 * for its supervisor (Docker `--restart`, systemd `Restart=`) to start it again.
 */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let config: Readonly<Config>;
  try {
    config = loadConfig(env);
  } catch (e) {
    exitOnStartError(e);
  }
  const logger = createLogger(config);
  for (const { name, nearest } of unknownVariables(env)) {
    logger.warn({ variable: name, nearest }, `${name} is not a trackgate setting and is ignored${nearest ? ` (did you mean ${nearest}?)` : ''}`);
  }
  let starting: Promise<Running> | undefined;
  let stopping = false;
  const stop = async (why: Record<string, unknown>, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info(why, 'stopping');
    // A signal during start-up waits for it to finish, then stops what it started: exiting at once
    // left the gateway processes it had forked half started, each failing on its closed channel.
    // The start-up's own steps are bounded (the database's connection wait, the gateway processes'
    // START_TIMEOUT_MS); the stop's time starts after it, so a start-up slow on a busy machine does
    // not use it up and exit before the gateway processes are stopped.
    const running = await starting?.catch(() => undefined);
    setTimeout(() => process.exit(exitCode), STOP_TIMEOUT_MS).unref();
    await running?.stop().catch((e: unknown) => logger.error({ err: e }, 'stopping failed'));
    logger.info({ exitCode }, 'stopped');
    process.exit(exitCode);
  };
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection (a bug): logged, the service keeps running');
  });
  process.on('uncaughtException', (err, origin) => {
    logger.error({ err, origin }, 'uncaught exception (a bug): stopping; a supervisor should start trackgate again');
    void stop({ reason: 'uncaught exception' }, 1);
  });
  process.on('SIGINT', () => void stop({ signal: 'SIGINT' }, 0));
  process.on('SIGTERM', () => void stop({ signal: 'SIGTERM' }, 0));
  // a closed terminal or an ssh session ending, or a `kill -HUP` meant to rotate logs (trackgate
  // writes them to standard output, nothing to reopen): a clean stop, as SIGTERM, not Node's
  // default of dying on the spot without a line
  process.on('SIGHUP', () => void stop({ signal: 'SIGHUP' }, 0));
  starting = startTrackgate(config, { logger });
  try {
    await starting;
  } catch (e) {
    // stopped while starting (a gateway process the same Ctrl-C ended, say): stop() exits
    if (!stopping) exitOnStartError(e, config);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  void serve();
}
