/**
 * One gateway process (docs/scaling.md "Scaling"): the tracker listeners of every protocol (TCP, UDP,
 * OsmAnd HTTP) and their decoders, with the core at the other end of the link: the core resolves
 * devices, stores, and keeps the command queue; this process writes acknowledgements once the core
 * answers that what they acknowledge is committed, and writes the commands of the devices
 * connected here.
 *
 * Several gateway processes share each port: they are cluster workers of the core (gateway-pool.ts)
 * and listen through the handle the core binds, so the kernel hands each new connection to one of
 * them. The listeners are bound only once the link is up the first time.
 */
import type { ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { startTrackerGateway, type TrackerGateway } from '../tracker-gateway.js';
import { connectCoreLink, type CoreLinkClient } from './core-link.client.js';
import { randomUUID } from 'node:crypto';
import { TrackerCounts } from '../../core/metrics/counts.js';
import { COUNTS_EVERY_MS } from './ipc.messages.js';
import type { TlsPair } from '../shared/stream-server.js';

/** What the core hands a gateway process when it starts it (gateway-pool.ts), and what an edge gateway is configured with. */
export interface GatewayProcessSettings {
  /** the core's link: host and port (and TLS, trusting `ca` when given), or a Unix socket path */
  link: { path?: string; host?: string; port?: number; tls?: { ca?: string } };
  secret: string;
  host: string;
  ports: Readonly<Record<string, number | 'off'>>;
  /** each protocol's TLS port, or off (TRACKGATE_<P>_TLS_PORT) */
  tlsPorts?: Readonly<Record<string, number | 'off'>>;
  /** the certificate and key the TLS ports serve, as PEM text (it crosses the cluster channel as JSON) */
  tls?: TlsPair;
  checksum: 'accept' | 'strict';
  idleTimeoutSeconds: number;
  /** TRACKGATE_IDENTIFY_TIMEOUT (default 60) */
  identifyTimeoutSeconds?: number;
  commandWaitMs: number;
  logLevel: string;
  /** TRACKGATE_LOG_FORMAT and NO_COLOR, as the core's log (absent: JSON) */
  logFormat?: 'json' | 'pretty';
  logColour?: boolean;
  /** false: this process takes no datagrams (another gateway process does); default true */
  udp?: boolean;
}

export interface GatewayProcessOptions extends GatewayProcessSettings {
  protocols: Record<string, ProtocolModule>;
  clock: Clock;
  logger: Logger;
  worker?: number;
}

export interface GatewayProcess {
  ports: Record<string, number>;
  /** A renewed certificate for the TLS ports' next connections. */
  setTls(pair: TlsPair): void;
  link: CoreLinkClient;
  gateway: TrackerGateway;
  stop(): Promise<void>;
}

export async function startGatewayProcess(o: GatewayProcessOptions): Promise<GatewayProcess> {
  let gateway: TrackerGateway | undefined;
  // the listeners count here; the core sums every process's counts in its GET /metrics
  const counts = new Map<string, TrackerCounts>();
  const metrics = {
    tracker(protocol: string): TrackerCounts {
      let c = counts.get(protocol);
      if (!c) counts.set(protocol, (c = new TrackerCounts()));
      return c;
    },
  };
  const source = randomUUID();
  const link = connectCoreLink({
    ...o.link,
    secret: o.secret,
    worker: o.worker,
    clock: o.clock,
    logger: o.logger,
    hello: () => ({ ports: gateway?.ports ?? null, online: gateway?.connectedDevices() ?? [] }),
    onDeliver: (deviceId) => gateway?.deliverCommands(deviceId),
    onDrop: (deviceId) =>
      gateway?.registry
        .get(deviceId)
        ?.close(
          'replaced by a newer connection of the same device elsewhere (another gateway process, an edge gateway or the core)',
        ),
  });
  await link.ready();
  try {
    gateway = await startTrackerGateway({
      host: o.host,
      protocols: o.protocols,
      ports: o.ports,
      tlsPorts: o.tlsPorts,
      tls: o.tls,
      clock: o.clock,
      checksum: o.checksum,
      idleTimeoutSeconds: o.idleTimeoutSeconds,
      identifyTimeoutSeconds: o.identifyTimeoutSeconds,
      commandWaitMs: o.commandWaitMs,
      directory: link.directory,
      ingest: link.ingest,
      commands: link.commands,
      frames: link.frames,
      logger: o.logger,
      onConnectionChange: (deviceId, connected) => link.connectionChanged(deviceId, connected),
      onUdpHeard: (deviceId) => link.heard(deviceId),
      admit: () => link.isUp(),
      udp: o.udp,
      metrics,
    });
    await link.announce();
  } catch (e) {
    await gateway?.stop();
    await link.close();
    throw e;
  }
  const report = () =>
    link.reportCounts(source, Object.fromEntries([...counts].map(([protocol, c]) => [protocol, c.snapshot()])));
  const reporting = setInterval(report, COUNTS_EVERY_MS);
  reporting.unref();
  report();
  const running = gateway;
  return {
    ports: gateway.ports,
    setTls: (pair) => running.setTls(pair),
    link,
    gateway,
    async stop() {
      clearInterval(reporting);
      await gateway!.stop();
      await link.close();
    },
  };
}
