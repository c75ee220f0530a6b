/**
 * The entry of a gateway process (README "Scaling"): the core (main.ts) starts it as a cluster
 * worker when TRACKGATE_GATEWAY_PROCESSES is above 0. It asks the core for its settings on the
 * cluster channel, then runs the tracker listeners (gateway/ipc/gateway.process.ts). It loads only
 * what that needs: no database, REST or MQTT code, so it starts fast and stays small.
 *
 * Process policy: as the core's (main.ts serve), an unhandled rejection is logged and the process
 * carries on; an uncaught exception is logged and the process exits 1, and the core starts another.
 * It exits with the core (cluster closes its channel), so no orphan keeps a tracker port.
 */
import pino from 'pino';
import { systemClock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { protocols } from './protocols/index.js';
import { INIT_REQUEST, type GatewayInit } from './gateway/ipc/gateway-pool.js';
import { startGatewayProcess, type GatewayProcess } from './gateway/ipc/gateway.process.js';

/** how long stopping may take before the process exits anyway */
const STOP_TIMEOUT_MS = 10_000;

async function run(): Promise<void> {
  const init = await new Promise<GatewayInit>((resolve) => {
    const onMessage = (m: unknown) => {
      if ((m as GatewayInit | undefined)?.t !== 'trackgate-gateway-init') return;
      process.off('message', onMessage);
      resolve(m as GatewayInit);
    };
    process.on('message', onMessage);
    process.send!(INIT_REQUEST);
  });
  const logger = pino({ level: init.settings.logLevel, base: { service: 'trackgate', role: 'gateway', worker: init.worker } }) as unknown as Logger;
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection (a bug): logged, the gateway process keeps running'));
  process.on('uncaughtException', (err) => {
    logger.error({ err }, 'uncaught exception (a bug): the gateway process exits; the core starts another');
    process.exit(1);
  });
  let running: GatewayProcess | undefined;
  const stop = () => {
    setTimeout(() => process.exit(0), STOP_TIMEOUT_MS).unref();
    void (running?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  running = await startGatewayProcess({ ...init.settings, worker: init.worker, protocols, clock: systemClock, logger });
}

if (!process.send) {
  process.stderr.write('trackgate: gateway-main is started by the core (TRACKGATE_GATEWAY_PROCESSES), not by hand\n');
  process.exit(64);
}
run().catch((e: unknown) => {
  process.stderr.write(`trackgate gateway process: could not start: ${(e as Error).message}\n`);
  process.exit(1);
});
