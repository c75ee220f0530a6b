/**
 * The core's services and stores, shared by the API and the gateways: in-process, or with their
 * counters in Redis when TRACKGATE_REDIS_URL is set.
 */
import net from 'node:net';
import type { Config } from '../config/config.js';
import type { Db } from '../core/db/db.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { EventBus } from '../core/events/event-bus.js';
import { createMemoryLimiters } from '../core/quota/rate-limiter.memory.js';
import { createRedisFailedLogins, createRedisLimiters } from '../core/quota/rate-limiter.redis.js';
import { keepDailyUsage } from '../core/quota/daily-usage.keeper.js';
import { createMemoryQuotaStore } from '../core/quota/quota-store.memory.js';
import { createRedisQuotaStore } from '../core/quota/quota-store.redis.js';
import type { QuotaStore } from '../core/quota/quota-store.js';
import type { RequestLimiter } from '../core/quota/rate-limiter.js';
import type { LicenseStore } from '../core/licenses/license-store.js';
import { createMemoryLicenseStore } from '../core/licenses/license-store.memory.js';
import { createRedisLicenseStore } from '../core/licenses/license-store.redis.js';
import { closeRedis, type RedisClient } from '../core/redis/redis-client.redis.js';
import { createSmtpNotifier } from '../core/notify/notifier.smtp.js';
import { createSmsHttpNotifier } from '../core/notify/notifier.sms-http.js';
import { createNotificationsService, type NotificationsService } from '../core/notify/notifications.service.js';
import * as outboxRepo from '../core/notify/outbox.repository.js';
import * as accountsRepo from '../core/accounts/accounts.repository.js';
import * as devicesRepo from '../core/devices/devices.repository.js';
import { createTokensService, type TokensService } from '../core/auth/tokens.service.js';
import { openTokenSecrets } from '../core/auth/token-secrets.js';
import { createAccountsService, type AccountsService } from '../core/accounts/accounts.service.js';
import { createDevicesService, type DevicesService } from '../core/devices/devices.service.js';
import { createFleetService, type FleetService } from '../core/devices/fleet.service.js';
import { noPresence, type DevicePresence } from '../core/model/presence.js';
import { createLocationsService, type LocationsService } from '../core/locations/locations.service.js';
import { createHistoryExport, type HistoryExportService } from '../core/export/history-export.service.js';
import { createReportsService, type ReportsService } from '../core/reports/reports.service.js';
import { createAlertsService, type AlertsService } from '../core/alerts/alerts.service.js';
import { createAlertRecorder, type AlertRecorder } from '../core/alerts/alert.recorder.js';
import { createGroupsService, type GroupsService } from '../core/groups/groups.service.js';
import { createZonesService, type ZonesService } from '../core/rules/zones.service.js';
import { createAlertRulesService, type AlertRulesService } from '../core/rules/alert-rules.service.js';
import { createUsersService, type UsersService } from '../core/users/users.service.js';
import { createForwardsService, type ForwardsService } from '../core/forward/forwards.service.js';
import { createForwardJournal } from '../core/forward/forward.journal.js';
import { createForwardTargets, type ForwardTargets } from '../core/forward/forward.targets.js';
import {
  COMMAND_UPKEEP_MS,
  createCommandsService,
  present as presentCommand,
  type CommandsService,
} from '../core/commands/commands.service.js';
import { createDeviceDirectory, type DeviceDirectory } from '../core/devices/device-directory.js';
import { createIngestService, type IngestService } from '../core/ingest/ingest.service.js';
import type { Metrics } from '../core/metrics/metrics.js';
import type { StorageWatch } from '../core/db/storage.watch.js';
import { FrameTap } from '../gateway/shared/frame-tap.js';
import { MQTT_LOGIN_LIMITS, memoryLoginLimiters, type MqttLoginLimiters } from '../gateway/mqtt/mqtt.auth.js';
import { openRedis } from './redis.js';
import { checkCommand } from './commands.js';

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
  /** The fleet at once (GET /api/lastLocations), with each device's presence. */
  fleet: FleetService;
  /** Gives the fleet the listeners' presence, once they are bound. */
  attachPresence(presence: DevicePresence): void;
  /** Locations over REST. */
  locations: LocationsService;
  historyExport: HistoryExportService;
  /** Trips, stops and summary reports (*ext*), from cached days. */
  reports: ReportsService;
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

/** how long a stop waits for the commits in progress before it closes the database (within STOP_TIMEOUT_MS) */
const INGEST_DRAIN_MS = 5000;

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

/**
 * What the start-up log says about the notification channels: whether e-mail and SMS are on, and
 * where they go, never a password or the SMS URL's query (gateways put their keys there). Without
 * it nobody knew a channel was off until an alert was suppressed as `notConfigured`.
 */
export function describeNotifications(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'smsUrl'>): {
  email: Record<string, unknown>;
  sms: Record<string, unknown>;
} {
  let email: Record<string, unknown> = { enabled: false };
  if (config.smtpUrl) {
    const u = new URL(config.smtpUrl);
    const secure = u.protocol === 'smtps:';
    // nodemailer's defaults: 465 with TLS from the start, 587 otherwise
    email = {
      enabled: true,
      host: u.hostname,
      port: Number(u.port || (secure ? 465 : 587)),
      secure,
      ...(u.username && { user: decodeURIComponent(u.username) }),
      from: config.mailFrom,
    };
  }
  let sms: Record<string, unknown> = { enabled: false };
  if (config.smsUrl) {
    const u = new URL(config.smsUrl);
    sms = { enabled: true, url: `${u.origin}${u.pathname}` };
  }
  return { email, sms };
}

/** The counters every instance shares through Redis, or this process keeps (and saves now and then). */
async function openCounters(
  config: Readonly<Config>,
  db: Db,
  clock: Clock,
  logger: Logger,
  redis: RedisClient | undefined,
) {
  const limitSettings = { perMinute: config.rateLimitPerMinute, failedTokenLimit: config.failedTokenLimit };
  const memoryLimiters = redis ? undefined : createMemoryLimiters(limitSettings);
  const limiters = memoryLimiters ?? createRedisLimiters(redis!, config.redisPrefix, limitSettings);
  // Without Redis, today's request counts are saved now and then, so apiDailyUsage survives a restart.
  const { identity, address, windowSeconds } = MQTT_LOGIN_LIMITS;
  const mqttLogins: MqttLoginLimiters = redis
    ? {
        address: createRedisFailedLogins(redis, `${config.redisPrefix}mqtt:fail:addr`, address, windowSeconds),
        identity: createRedisFailedLogins(redis, `${config.redisPrefix}mqtt:fail:id`, identity, windowSeconds),
      }
    : memoryLoginLimiters();
  const usageKeeper = memoryLimiters
    ? await keepDailyUsage({ db, clock, logger, limiters: memoryLimiters })
    : undefined;
  const memoryQuota = redis ? undefined : createMemoryQuotaStore({ clock });
  const quota: QuotaStore = redis ? createRedisQuotaStore(redis, config.redisPrefix) : memoryQuota!;
  const licenses = redis ? createRedisLicenseStore(redis, config.redisPrefix) : createMemoryLicenseStore();
  const nowMs = clock.now().getTime();
  if (memoryQuota) {
    // In-process counters start from what the outbox already holds today: a restart does not reset them.
    for (const h of await outboxRepo.liveQuotaHolders(db, nowMs))
      await memoryQuota.reserve(h.quotaKey, Number.MAX_SAFE_INTEGER, new Date(h.quotaExpiresAt));
  }
  for (const accountId of await accountsRepo.listIds(db)) {
    await licenses
      .load(accountId, await devicesRepo.licenseHolders(db, accountId))
      .catch((e: Error) => logger.warn({ err: e.message }, 'licence store not loaded'));
  }
  return {
    limiters,
    mqttLogins,
    quota,
    licenses,
    async close() {
      await usageKeeper?.close();
      memoryQuota?.close();
    },
  };
}

/** The command queue: checked against the device's protocol, announced on the bus, and (on PostgreSQL) watched for other instances. */
function createCommands(config: Readonly<Config>, db: Db, clock: Clock, logger: Logger, events: EventBus) {
  const sms = config.smsUrl
    ? createSmsHttpNotifier({ url: config.smsUrl, timeoutMs: config.notifyTimeoutMs })
    : undefined;
  const commands = createCommandsService({
    db,
    clock,
    logger,
    waitMs: config.commandWaitSeconds * 1000,
    check: checkCommand,
    sms,
    announce: (deviceId) => events.commandsQueued(deviceId),
    // On PostgreSQL other instances may hold the device's connection (a TCP connection silent for
    // TRACKGATE_IDLE_TIMEOUT is closed, so an older last connection is offline); their upkeep finds
    // the command within COMMAND_UPKEEP_MS without Redis.
    ...(config.databaseUrl && {
      remote: { pickupMs: COMMAND_UPKEEP_MS + 1000, recentMs: config.idleTimeoutSeconds * 1000, pollMs: 200 },
    }),
    onChange: (c) =>
      events.commandChanged({ accountId: c.accountId, deviceId: c.deviceId, command: presentCommand(c) }),
  });
  return { commands, close: async () => sms?.close() };
}

/** Notifications by email (TRACKGATE_SMTP_URL) and SMS (TRACKGATE_SMS_URL), within the accounts' quota. */
function createNotifications(config: Readonly<Config>, db: Db, clock: Clock, logger: Logger, quota: QuotaStore) {
  return createNotificationsService({
    db,
    clock,
    logger,
    quota,
    sendTimeoutMs: config.notifyTimeoutMs,
    channels: {
      Email: config.smtpUrl
        ? createSmtpNotifier({
            url: config.smtpUrl,
            from: config.mailFrom,
            timeoutMs: config.notifyTimeoutMs,
            openSocket: connectNoDelay,
          })
        : undefined,
      SMS: config.smsUrl ? createSmsHttpNotifier({ url: config.smsUrl, timeoutMs: config.notifyTimeoutMs }) : undefined,
    },
  });
}

/** The one path of reports into storage: alerts recorded, and what a forward sends journaled, in the same transaction. */
function createIngestPipeline(
  db: Db,
  clock: Clock,
  logger: Logger,
  events: EventBus,
  notifications: NotificationsService,
  metrics?: Metrics,
  storage?: StorageWatch,
) {
  // what accounts with a forward store is journaled in the same transaction (core/forward/)
  const journal = createForwardJournal({ db, clock, events });
  const alertRecorder = createAlertRecorder({
    db,
    clock,
    events,
    notifier: notifications.notifier,
    afterInsert: journal.alert,
  });
  const ingest = createIngestService({
    db,
    clock,
    events,
    alerts: alertRecorder,
    logger,
    afterWrite: journal.locations,
    counts: metrics?.ingest,
    fileLost: storage?.fileLost,
  });
  return { journal, alertRecorder, ingest };
}

/** What an account's users configure over REST: groups, users, zones, alert rules and forwards. */
function createAccountResources(config: Readonly<Config>, db: Db, clock: Clock, events: EventBus) {
  const groups = createGroupsService({
    db,
    clock,
    onDevicesChanged: (ids) => ids.forEach((id) => events.deviceChanged(id)),
  });
  const users = createUsersService({ db, clock, onChange: (id) => events.userChanged(id) });
  // a zone or rule changed: every instance's rule engine reads the account's rules again
  const zones = createZonesService({ db, clock, onChanged: (accountId) => events.rulesChanged(accountId) });
  const alertRules = createAlertRulesService({ db, clock, onChanged: (accountId) => events.rulesChanged(accountId) });
  const forwardTargets = createForwardTargets({ allow: config.forwardAllow, timeoutMs: config.forwardTimeoutMs });
  const forwards = createForwardsService({
    db,
    clock,
    targets: forwardTargets,
    onChanged: (accountId) => events.forwardsChanged(accountId),
  });
  return { groups, users, zones, alertRules, forwardTargets, forwards };
}

/** What createServices opened that its close closes, in this order. */
interface Opened {
  ingest: IngestService;
  journal: { close(): void };
  queue: { close(): Promise<unknown> };
  notifications: NotificationsService;
  counters: { close(): Promise<unknown> };
  directory: DeviceDirectory;
  redis: RedisClient | undefined;
}

async function closeServices(logger: Logger, o: Opened): Promise<void> {
  // every listener is closed by now: what they submitted is committed before the database closes
  if (!(await o.ingest.drain(INGEST_DRAIN_MS)))
    logger.warn(
      { waitedMs: INGEST_DRAIN_MS },
      'stopping: locations still not committed; the database is closed under them (nothing of them was acknowledged)',
    );
  o.journal.close();
  await o.queue.close();
  await o.notifications.stop();
  await o.counters.close();
  await o.directory.close();
  if (o.redis) await closeRedis(o.redis);
}

export async function createServices(
  config: Readonly<Config>,
  db: Db,
  clock: Clock,
  logger: Logger,
  metrics?: Metrics,
  storage?: StorageWatch,
): Promise<Services> {
  const events = new EventBus();
  // the token secret the instances on this database share; TRACKGATE_JWT_SECRET replaces it when set
  const secret = await openTokenSecrets({
    db,
    clock,
    logger,
    configured: config.jwtSecret,
    ttlSeconds: config.tokenTtlSeconds,
  });
  const redis = await openRedis(config, logger);
  const counters = await openCounters(config, db, clock, logger, redis);
  const { limiters, quota, licenses } = counters;
  const notifications = createNotifications(config, db, clock, logger, quota);
  const tokens = createTokensService({
    db,
    clock,
    secret,
    ttlSeconds: config.tokenTtlSeconds,
    failedLogins: limiters.failedLogins,
  });
  const accounts = createAccountsService(db, clock, { onCreated: (id) => licenses.load(id, []) });
  const directory = createDeviceDirectory({ db, clock, logger, events });
  const devices = createDevicesService({
    db,
    clock,
    licenses,
    counters: notifications.counters,
    onChange: (id) => events.deviceChanged(id),
  });
  const pipeline = createIngestPipeline(db, clock, logger, events, notifications, metrics, storage);
  const { journal, alertRecorder, ingest } = pipeline;

  // On SQLite this process is the only writer, so the REST read path may remember last locations.
  const locations = createLocationsService({ db, clock, events, ingest, cacheLastLocations: !config.databaseUrl });
  const alerts = createAlertsService({ db, ingest });
  // Every cache is cleared through the event bus (and so, with Redis, on every instance).
  events.onUserChanged((userId) => tokens.forget(userId));
  events.onAccountChanged((accountId) => notifications.forgetZone(accountId));
  const accountResources = createAccountResources(config, db, clock, events);
  const queue = createCommands(config, db, clock, logger, events);
  let presence = noPresence;
  const fleet = createFleetService({
    db,
    clock,
    events,
    presence: () => presence,
    cacheLastLocations: !config.databaseUrl,
  });
  return {
    fleet,
    attachPresence: (p) => {
      presence = p;
    },
    events,
    tokens,
    accounts,
    directory,
    ingest,
    devices,
    locations,
    historyExport: createHistoryExport({ db }),
    reports: createReportsService({ db }),
    alerts,
    ...accountResources,
    commands: queue.commands,
    notifications,
    quota,
    licenses,
    alertRecorder,
    // the raw-frame feed: the tracker listeners offer frames, the MQTT live feed shows them
    frames: new FrameTap(),
    limiter: limiters.requests,
    mqttLogins: counters.mqttLogins,
    logger,
    close: () => closeServices(logger, { ingest, journal, queue, notifications, counters, directory, redis }),
  };
}
