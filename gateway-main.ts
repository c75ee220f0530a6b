/**
 * The composition root of a gateway process (docs/scaling.md), in two forms: run as a file, a
 * cluster worker of the core that asks it for its settings and runs the tracker listeners; and
 * `runEdgeGateway` (`trackgate gateway --core host:port`), the same listeners on another host,
 * which outlives the core and connects again by itself. It loads no database, REST or MQTT code,
 * so it starts fast and stays small. Process policy is the core's (server/process-exit.ts).
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { Config } from './config/config.js';
import { bindProblem, ConfigError } from './config/config.js';
import { systemClock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { LogOutput } from './core/log-output.js';
import { protocols } from './protocols/index.js';
import { INIT_REQUEST, type GatewayFailed, type GatewayInit, type GatewayTls } from './gateway/ipc/gateway-pool.js';
import {
  startGatewayProcess,
  type GatewayProcess,
  type GatewayProcessSettings,
} from './gateway/ipc/gateway.process.js';
import { handleProcessExit } from './server/process-exit.js';
import { watchBoxTls } from './server/tls-files.js';

/** JSON lines on standard output in blocks, as the core writes them (main.ts createLogger, core/log-output.ts). */
function createLogger(
  settings: Pick<GatewayProcessSettings, 'logLevel' | 'logFormat' | 'logColour'>,
  base: Record<string, unknown>,
): Logger {
  return pino(
    { level: settings.logLevel, base },
    new LogOutput({ base, format: settings.logFormat, colour: settings.logColour }),
  ) as unknown as Logger;
}

/** The process-exit handler (server/process-exit.ts): a bug is logged, an uncaught one exits 1; `signals` stop cleanly. */
function processPolicy(logger: Logger, running: () => GatewayProcess | undefined, signals: NodeJS.Signals[]): void {
  handleProcessExit({
    logger,
    running,
    lines: {
      rejection: 'unhandled promise rejection (a bug): logged, the gateway process keeps running',
      uncaught: 'uncaught exception (a bug): the gateway process exits; it is started again',
    },
    uncaught: 'exit',
    signals,
  });
}

/** `trackgate gateway --core host:port`: the tracker listeners of `config`, their core far away. */
export async function runEdgeGateway(
  config: Readonly<Config>,
  core: { host: string; port: number; tls: boolean },
): Promise<void> {
  if (!config.gatewaySecret)
    throw new ConfigError(
      'TRACKGATE_GATEWAY_SECRET',
      'an edge gateway presents it to the core: set the same value on both',
    );
  let ca: string | undefined;
  if (config.gatewayTlsCa) {
    try {
      ca = readFileSync(config.gatewayTlsCa, 'utf8');
    } catch (e) {
      throw new ConfigError('TRACKGATE_GATEWAY_TLS_CA', `cannot read ${config.gatewayTlsCa} (${(e as Error).message})`);
    }
    const problem = caProblem(ca);
    if (problem) throw new ConfigError('TRACKGATE_GATEWAY_TLS_CA', `${config.gatewayTlsCa} ${problem}`);
  }
  const logger = createLogger(config, { service: 'trackgate', role: 'edge-gateway' });
  // its TLS tracker ports serve this box's certificate (TRACKGATE_TLS_CERT), renewed as the core's is
  const tls = Object.values(config.protocolTlsPorts).some((p) => p !== 'off') ? watchBoxTls(config, logger) : undefined;
  let running: GatewayProcess | undefined;
  processPolicy(logger, () => running, ['SIGTERM', 'SIGINT', 'SIGHUP']);
  logger.info(
    { core: `${core.host}:${core.port}`, tls: core.tls || ca !== undefined },
    'connecting to the core; the tracker ports open once it answers',
  );
  running = await startGatewayProcess({
    link: { host: core.host, port: core.port, ...((core.tls || ca !== undefined) && { tls: { ca } }) },
    secret: config.gatewaySecret,
    host: config.host,
    ports: config.protocolPorts,
    tlsPorts: config.protocolTlsPorts,
    tls: tls?.current(),
    checksum: config.checksum,
    idleTimeoutSeconds: config.idleTimeoutSeconds,
    identifyTimeoutSeconds: config.identifyTimeoutSeconds,
    commandWaitMs: config.commandWaitSeconds * 1000,
    logLevel: config.logLevel,
    protocols,
    clock: systemClock,
    logger,
  });
  tls?.onChange((pair) => running?.setTls(pair));
  logger.info({ host: config.host, ports: running.ports }, 'listening');
}

/**
 * Why a CA file cannot be trusted, or undefined: Node takes a file without a certificate in it
 * (it trusts nothing then, and every handshake fails with an error that does not name the file).
 */
export function caProblem(pem: string): string | undefined {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (e) {
      return `certificate ${i + 1} cannot be read (${(e as Error).message})`;
    }
  }
  return undefined;
}

async function runWorker(): Promise<void> {
  const init = await new Promise<GatewayInit>((resolve) => {
    const onMessage = (m: unknown) => {
      if ((m as GatewayInit | undefined)?.t !== 'trackgate-gateway-init') return;
      process.off('message', onMessage);
      resolve(m as GatewayInit);
    };
    process.on('message', onMessage);
    // The core may be gone already (stopped, or died, while this process started): the request
    // then fails here and the process exits quietly, as it does when the channel closes later.
    process.send!(INIT_REQUEST, undefined, undefined, (e: Error | null) => {
      if (e) process.exit(0);
    });
  });
  const logger = createLogger(init.settings, { service: 'trackgate', role: 'gateway', worker: init.worker });
  let running: GatewayProcess | undefined;
  // Ctrl-C reaches the whole process group, and a closed terminal hangs it up: the core stops its
  // gateway processes itself (SIGTERM) once its own work is done, so SIGINT and SIGHUP are ignored
  processPolicy(logger, () => running, ['SIGTERM']);
  // the core's renewed certificate: this process's TLS ports serve it to their next connections
  let renewed: GatewayTls['tls'] | undefined;
  process.on('message', (m: unknown) => {
    if ((m as GatewayTls | undefined)?.t !== 'trackgate-gateway-tls') return;
    renewed = (m as GatewayTls).tls;
    running?.setTls(renewed);
  });
  try {
    running = await startGatewayProcess({
      ...init.settings,
      worker: init.worker,
      protocols,
      clock: systemClock,
      logger,
    });
    // a renewal while the listeners were being bound
    if (renewed) running.setTls(renewed);
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { port?: unknown };
    const failed: GatewayFailed = {
      t: 'trackgate-gateway-failed',
      message:
        bindProblem(e, {
          host: init.settings.host,
          protocolPorts: init.settings.ports,
          protocolTlsPorts: init.settings.tlsPorts,
        }) ?? err.message,
      ...(typeof err.code === 'string' && { code: err.code }),
      ...(typeof err.port === 'number' && { port: err.port }),
    };
    // the core's start fails with this reason (gateway-pool.ts), and picks again a port it lost (trackers.ts)
    await new Promise<void>((resolve) => process.send!(failed, undefined, undefined, () => resolve()));
    throw new Error(failed.message);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!process.send) {
    process.stderr.write(
      'trackgate: gateway-main is started by the core (TRACKGATE_GATEWAY_PROCESSES); on another host run `trackgate gateway --core host:port`\n',
    );
    process.exit(64);
  }
  runWorker().catch((e: unknown) => {
    process.stderr.write(`trackgate gateway process: could not start: ${(e as Error).message}\n`);
    process.exit(1);
  });
}
