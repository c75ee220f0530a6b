/**
 * The core's tracker listeners, wherever they run: in this process, in its gateway processes, and
 * on edge gateways (`trackgate gateway --core`) over their own link. Each is a side of the device
 * locator (device-locator.ts).
 */
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../core/metrics/metrics.js';
import { randomSecret } from '../core/secrets.js';
import { startTrackerGateway, type TrackerGateway } from '../gateway/tracker-gateway.js';
import { startCoreLink, startLocalCoreLink, type CoreLink } from '../gateway/ipc/core-link.server.js';
import { GatewayStartError, startGatewayPool, type GatewayPool } from '../gateway/ipc/gateway-pool.js';
import type { GatewayProcessSettings } from '../gateway/ipc/gateway.process.js';
import { concretePorts } from '../gateway/ipc/free-ports.js';
import { protocols } from '../protocols/index.js';
import type { DeviceSide } from './device-locator.js';
import type { Services } from './services.js';
import { readTlsPair, type WatchedTlsPair } from './tls-files.js';

/** The core's own tracker listeners, as the core sees them. */
export interface Trackers extends DeviceSide {
  gateway: Pick<TrackerGateway, 'ports' | 'deliverCommands' | 'connectedDevices' | 'stop'>;
  /** the gateway processes and the core's link to them, when they run */
  pool?: GatewayPool;
  link?: CoreLink;
}

/** what a local tracker connection closed for a newer one elsewhere is told */
const REPLACED = {
  edge: 'replaced by a newer connection of the same device on an edge gateway',
  instance: 'replaced by a newer connection of the same device on another instance',
} as const;

/**
 * The tracker listeners: in this process (TRACKGATE_GATEWAY_PROCESSES=0), or in gateway processes
 * (gateway-main.ts, cluster workers of this one) that reach the core over net-ipc on a loopback
 * TCP port of their own (docs/scaling.md "Scaling").
 */
export async function startTrackers(
  config: Readonly<Config>,
  services: Services,
  clock: Clock,
  logger: Logger,
  metrics?: Metrics,
  tls?: WatchedTlsPair,
): Promise<Trackers> {
  // no tracker port: nothing for gateway processes to do
  const ports = [...Object.values(config.protocolPorts), ...Object.values(config.protocolTlsPorts)];
  if (config.gatewayProcesses === 0 || ports.every((p) => p === 'off'))
    return startInProcess(config, services, clock, logger, metrics, tls);
  return startInGatewayProcesses(config, services, clock, logger, tls);
}

/** The certificate the TLS tracker ports serve, when one is on (config/config.ts makes sure there is one then). */
function trackerTls(config: Readonly<Config>, tls: WatchedTlsPair | undefined): WatchedTlsPair | undefined {
  return Object.values(config.protocolTlsPorts).some((p) => p !== 'off') ? tls : undefined;
}

async function startInProcess(
  config: Readonly<Config>,
  services: Services,
  clock: Clock,
  logger: Logger,
  metrics?: Metrics,
  boxTls?: WatchedTlsPair,
): Promise<Trackers> {
  const tls = trackerTls(config, boxTls);
  const onlines: ((deviceId: string) => void)[] = [];
  const offlines: ((deviceId: string) => void)[] = [];
  const gateway = await startTrackerGateway({
    host: config.host,
    protocols,
    ports: config.protocolPorts,
    tlsPorts: config.protocolTlsPorts,
    tls: tls?.current(),
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
      for (const fn of connected ? onlines : offlines) fn(deviceId);
    },
  });
  tls?.onChange((pair) => gateway.setTls(pair));
  return {
    kind: 'tracker',
    gateway,
    deliverCommands: (deviceId) => gateway.deliverCommands(deviceId),
    connectedDevices: () => gateway.connectedDevices(),
    onOnline: (fn) => onlines.push(fn),
    onOffline: (fn) => offlines.push(fn),
    drop: (deviceId, elsewhere) => gateway.registry.get(deviceId)?.close(REPLACED[elsewhere]),
  };
}

async function startInGatewayProcesses(
  config: Readonly<Config>,
  services: Services,
  clock: Clock,
  logger: Logger,
  boxTls?: WatchedTlsPair,
): Promise<Trackers> {
  const tls = trackerTls(config, boxTls);
  const secret = randomSecret();
  const { link, address } = await startLocalCoreLink({ secret, ...services, clock, logger });
  let pool: GatewayPool;
  try {
    pool = await startPickingAgain(config, logger, (settings) =>
      startGatewayPool({
        processes: config.gatewayProcesses,
        // gateway-main.ts at the root, beside main.ts (.js once built): it loads only what a gateway process runs
        exec: fileURLToPath(
          new URL(`../gateway-main.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url),
        ),
        args: [],
        link,
        logger,
        settings: { link: address, secret, ...settings, tls: pemText(tls?.current()) },
      }),
    );
  } catch (e) {
    await link.close();
    throw e;
  }
  // a renewal reaches every gateway process, and one started later starts with it
  tls?.onChange((pair) => pool.setTls(pemText(pair)!));
  logger.info({ processes: config.gatewayProcesses, pids: pool.pids() }, 'gateway processes listening');
  const gateway: Trackers['gateway'] = {
    ports: pool.ports,
    deliverCommands: (deviceId) => link.deliverCommands(deviceId),
    connectedDevices: () => link.connectedDevices(),
    async stop() {
      await pool.stop();
      await link.close();
    },
  };
  return {
    kind: 'tracker',
    pool,
    link,
    gateway,
    deliverCommands: gateway.deliverCommands,
    connectedDevices: gateway.connectedDevices,
    onOnline: (fn) => link.onOnline(fn),
    onOffline: (fn) => link.onOffline(fn),
    drop: (deviceId) => link.drop(deviceId),
  };
}

/** how many times a start picks free port numbers again after losing one of them (see startPickingAgain) */
export const PICK_ATTEMPTS = 5;

/**
 * Starts the gateway processes, again with new numbers when a port the core picked for port 0 was
 * taken by another program between the pick and the gateway process's bind (free-ports.ts checks,
 * then the processes bind once they are up, which takes a while on a busy machine). A configured
 * port in use fails the start at once, with the worker's reason.
 */
async function startPickingAgain(
  config: Readonly<Config>,
  logger: Logger,
  start: (settings: Omit<GatewayProcessSettings, 'link' | 'secret'>) => Promise<GatewayPool>,
): Promise<GatewayPool> {
  for (let i = 1; ; i++) {
    const settings = await gatewaySettings(config);
    try {
      return await start(settings);
    } catch (e) {
      const err = e as GatewayStartError;
      const picked = pickedPorts(config, settings);
      if (
        !(err instanceof GatewayStartError && err.code === 'EADDRINUSE' && picked.has(err.port!)) ||
        i >= PICK_ATTEMPTS
      )
        throw e;
      logger.info(
        { port: err.port, attempt: i },
        'a free port picked for port 0 was taken before the gateway processes listened on it; picking again',
      );
    }
  }
}

/** The numbers gatewaySettings picked for ports configured as 0. */
function pickedPorts(config: Readonly<Config>, settings: Omit<GatewayProcessSettings, 'link' | 'secret'>): Set<number> {
  const picked = new Set<number>();
  for (const [configured, concrete] of [
    [config.protocolPorts, settings.ports],
    [config.protocolTlsPorts, settings.tlsPorts ?? {}],
  ] as const)
    for (const [name, port] of Object.entries(configured))
      if (port === 0 && typeof concrete[name] === 'number') picked.add(concrete[name]);
  return picked;
}

/** A pair as text, as it crosses the cluster channel (JSON, where a Buffer would not stay one). */
function pemText(pair: { cert: Buffer; key: Buffer } | undefined): { cert: string; key: string } | undefined {
  return pair && { cert: pair.cert.toString('utf8'), key: pair.key.toString('utf8') };
}

/** What the core's gateway processes run with, from the core's configuration. */
async function gatewaySettings(config: Readonly<Config>): Promise<Omit<GatewayProcessSettings, 'link' | 'secret'>> {
  const taken = new Set<number>();
  return {
    host: config.host,
    ports: await concretePorts(config.protocolPorts, protocols, config.host, taken),
    tlsPorts: await concretePorts(config.protocolTlsPorts, protocols, config.host, taken, 'tcp'),
    checksum: config.checksum,
    idleTimeoutSeconds: config.idleTimeoutSeconds,
    identifyTimeoutSeconds: config.identifyTimeoutSeconds,
    commandWaitMs: config.commandWaitSeconds * 1000,
    logLevel: config.logLevel,
    logFormat: config.logFormat,
    logColour: config.logColour,
  };
}

/** The edge gateways' link, as a side of the device locator, and the port it listens on. */
export interface EdgeLink extends DeviceSide {
  link: CoreLink;
  port: number;
}

/**
 * The link edge gateways connect to (`trackgate gateway --core host:port`), when
 * TRACKGATE_GATEWAY_LINK_PORT is set: TCP on TRACKGATE_HOST, TLS when a certificate is configured,
 * and TRACKGATE_GATEWAY_SECRET to present. Port 0 picks a free port (logged with the others).
 */
export async function startEdgeLink(
  config: Readonly<Config>,
  services: Services,
  clock: Clock,
  logger: Logger,
): Promise<EdgeLink | undefined> {
  if (config.gatewayLinkPort === 'off') return undefined;
  // a file that is not a certificate, or a key of another: said at start, not at each gateway's handshake
  const tls =
    config.gatewayTlsCert && config.gatewayTlsKey
      ? readTlsPair('TRACKGATE_GATEWAY_TLS', config.gatewayTlsCert, config.gatewayTlsKey)
      : undefined;
  const link = await startCoreLink({
    port: config.gatewayLinkPort,
    host: config.host,
    tls,
    secret: config.gatewaySecret!,
    ...services,
    clock,
    logger: logger.child({ link: 'edge' }),
  });
  const port = link.port!;
  if (!tls)
    logger.warn(
      { port },
      'edge gateways connect without TLS: their secret and data cross the network in clear (set TRACKGATE_GATEWAY_TLS_CERT and _KEY)',
    );
  return {
    kind: 'tracker',
    link,
    port,
    deliverCommands: (deviceId) => link.deliverCommands(deviceId),
    connectedDevices: () => link.connectedDevices(),
    onOnline: (fn) => link.onOnline(fn),
    onOffline: (fn) => link.onOffline(fn),
    drop: (deviceId) => link.drop(deviceId),
  };
}
