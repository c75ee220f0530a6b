/**
 * The one composition root: config -> logger -> db -> stores -> services -> gateway + api.
 * `startTrackgate` is also what tests start (with port 0 everywhere) and what `trackgate serve` runs.
 * What each step decides lives in server/ (ARCHITECTURE.md "Folders"); this file wires them in order.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig, unknownVariables, PROTOCOL_DEFAULT_PORTS, type Config } from './config/config.js';
import { ping, type Db } from './core/db/db.js';
import { systemClock, type Clock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { LogOutput } from './core/log-output.js';
import * as outboxRepo from './core/notify/outbox.repository.js';
import type { RulesEngine } from './core/rules/rules.engine.js';
import type { ForwardRunner } from './core/forward/forward.runner.js';
import type { Purger } from './core/retention/retention.purger.js';
import { createMetrics } from './core/metrics/metrics.js';
import { watchStorage } from './core/db/storage.watch.js';
import { watchDisk } from './core/db/disk.watch.js';
import type { GatewayPool } from './gateway/ipc/gateway-pool.js';
import type { CoreLink } from './gateway/ipc/core-link.server.js';
import { protocols } from './protocols/index.js';
import { openServerStorage, describeBackends, databaseOnThisHost } from './server/storage.js';
import { createServices, describeNotifications, type Services } from './server/services.js';
import { listenApi, type MqttUpgrade } from './server/api-server.js';
import type { Trackers } from './server/trackers.js';
import { startListeners } from './server/listeners.js';
import { startForwarding, startPartitions, startRelays, startRetention, startRules } from './server/background.js';
import { firstStart, type Bootstrap } from './server/first-start.js';
import { exitOnStartError, handleProcessExit } from './server/process-exit.js';
import { watchBoxTls } from './server/tls-files.js';
import type { PartitionMaintenance } from './core/db/partitions/pg-partitions.js';

// bench/ opens storage as the server does
export { openStorage } from './server/storage.js';

/** The User-Agent of webhook forwards (and the AMQP connection name). */
export const USER_AGENT = `trackgate/${(JSON.parse(readFileSync(new URL(existsSync(new URL('./package.json', import.meta.url)) ? './package.json' : '../package.json', import.meta.url), 'utf8')) as { version: string }).version}`;

export interface StartOptions {
  logger?: Logger;
  clock?: Clock;
}

export interface Running {
  config: Readonly<Config>;
  db: Db;
  ports: Record<string, number>;
  /** the tracker listeners: in this process, or the gateway processes' (TRACKGATE_GATEWAY_PROCESSES) as the core sees them, and the edge gateways' */
  gateway: Trackers['gateway'];
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
  /** retention's purge (tests purge at once with purgeOnce) */
  retention: Purger;
  /** PostgreSQL partitions' maintenance (tests wait for its run at start) */
  partitions: PartitionMaintenance;
  /** set when this start created the first account */
  bootstrap?: Bootstrap;
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
  return pino(
    { level: config.logLevel, base },
    new LogOutput({ base, format: config.logFormat, colour: config.logColour }),
  ) as unknown as Logger;
}

/** Closes what a start opened, the last opened first; a failure is logged and the rest still closed. */
async function closeInReverse(closers: (() => Promise<void>)[], logger: Logger): Promise<void> {
  while (closers.length) await closers.pop()!().catch((e: Error) => logger.warn({ err: e.message }, 'closing failed'));
}

export async function startTrackgate(config: Readonly<Config>, options: StartOptions = {}): Promise<Running> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  // the box's certificate: a file that cannot be read, or a key of another, fails the start before storage opens
  const tls = watchBoxTls(config, logger);
  let storage: Awaited<ReturnType<typeof openServerStorage>>;
  try {
    storage = await openServerStorage(config, logger);
  } catch (e) {
    tls?.stop();
    throw e;
  }
  const { db } = storage;
  logger.info(describeBackends(config), 'storage ready');
  // What is open so far, closed in reverse order by stop() or by a start that fails half-way.
  const closers: (() => Promise<void>)[] = [async () => tls?.stop(), storage.close];
  const closeAll = () => closeInReverse(closers, logger);
  try {
    // a database that refuses writes (a full disk) is said at start, and a SQLite file deleted later
    const watch = await watchStorage({ db, clock, logger });
    closers.push(() => watch.stop());
    // GET /metrics: one registry; each part counts its own (core/metrics/counts.ts), read at each scrape
    const metrics = config.metrics ? createMetrics(new Registry()) : undefined;
    metrics?.readAtScrape({ outboxPending: () => outboxRepo.countPending(db) });
    // free space where the database lives: warned about before it runs out (docs/operations.md "Sizing the disk")
    const disk = await watchDisk({
      db,
      logger,
      warn: config.diskWarn,
      error: config.diskError,
      intervalMs: config.diskCheckSeconds * 1000,
      databaseOnThisHost: databaseOnThisHost(config.databaseUrl),
    });
    closers.push(() => disk.stop());
    metrics?.readAtScrape({ storageFreeBytes: disk.freeBytes, storageDatabaseBytes: disk.databaseBytes });
    const services = await createServices(config, db, clock, logger, metrics, watch);
    closers.push(() => services.close());

    // Every listener is bound before the first account exists: a port in use stops the first start
    // before a generated API key is printed, so the key is never shown by a start that then dies.
    // Until then (seconds with gateway processes) health says "starting" and the rest of the API 503.
    let started = false;
    let mqttWsPort: number | undefined;
    let mqttUpgrade: MqttUpgrade | undefined;
    const api = await listenApi(config, services, {
      clock,
      metrics,
      starting: () => !started,
      ping: () => ping(db),
      writesFailing: () => watch.problem() ?? services.ingest.writesFailing(),
      storageLow: () => disk.problem(),
      tls,
      mqttWsPort: () => mqttWsPort,
      mqttUpgrade: () => mqttUpgrade,
    });
    closers.push(() => api.close());
    const { trackers, edge, mqtt, gateway } = await startListeners(
      config,
      services,
      clock,
      logger,
      metrics,
      closers,
      tls,
    );

    const partitions = startPartitions(config, db, clock, services);
    closers.push(() => partitions.stop());
    const rules = startRules(db, clock, services);
    closers.push(() => rules.stop());
    const mqttPorts = mqtt.ports as Record<string, number>;
    mqttWsPort = mqttPorts['mqtt/ws'];
    mqttUpgrade = mqtt.webSocketUpgrade;
    const forwarding = startForwarding(config, db, clock, services, {
      ownPorts: [...Object.values(api.ports), ...Object.values(gateway.ports), ...Object.values(mqttPorts)],
      userAgent: USER_AGENT,
    });
    closers.push(() => forwarding.stop());
    const retention = startRetention(config, db, clock, services);
    closers.push(() => retention.stop());
    closers.push(...(await startRelays(config, services)));
    const bootstrap = await firstStart(config, db, services.accounts, logger);

    const ports: Record<string, number> = { ...api.ports, ...gateway.ports, ...mqttPorts };
    const withoutDecoder = Object.keys(PROTOCOL_DEFAULT_PORTS).filter((p) => !(p in protocols));
    if (withoutDecoder.length)
      logger.info({ protocols: withoutDecoder }, 'these protocols have no decoder in this version; no listener');
    logger.info({ host: config.host, ports, notifications: describeNotifications(config) }, 'listening');
    started = true;
    return {
      config,
      db,
      ports,
      gateway,
      gatewayPool: trackers.pool,
      gatewayLink: trackers.link,
      edgeLink: edge?.link,
      services,
      rules,
      forwarding,
      retention,
      partitions,
      bootstrap,
      async stop() {
        // a signal to the whole process group (Ctrl-C, systemd) stops the gateway processes too: not started again
        trackers.pool?.quiesce();
        await closeAll();
      },
    };
  } catch (e) {
    await closeAll();
    throw e;
  }
}

/**
 * `npm start` / `trackgate serve`: one line naming the variable when configuration is wrong; from
 * then on everything, stopping included, is a JSON log line. Signals and bugs: server/process-exit.ts.
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
    logger.warn(
      { variable: name, nearest },
      `${name} is not a trackgate setting and is ignored${nearest ? ` (did you mean ${nearest}?)` : ''}`,
    );
  }
  let starting: Promise<Running> | undefined;
  const exit = handleProcessExit({
    logger,
    running: () => starting?.catch(() => undefined),
    lines: {
      rejection: 'unhandled promise rejection (a bug): logged, the service keeps running',
      uncaught: 'uncaught exception (a bug): stopping; a supervisor should start trackgate again',
    },
    uncaught: 'stop',
    announce: true,
    signals: ['SIGINT', 'SIGTERM', 'SIGHUP'],
  });
  starting = startTrackgate(config, { logger });
  try {
    await starting;
  } catch (e) {
    // stopped while starting (a gateway process the same Ctrl-C ended, say): the stop exits
    if (!exit.stopping()) exitOnStartError(e, config);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  void serve();
}
