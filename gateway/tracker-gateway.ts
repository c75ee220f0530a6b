/**
 * startTrackerGateway(deps): one listener per protocol on its configured port (TCP, UDP on the
 * same port number where the protocol has it, HTTP for OsmAnd), `off` to disable, 0 for a free port.
 * The TCP and HTTP listeners of the process share one descriptor gate (shared/descriptor-gate.ts)
 * and close connections that do not identify in time (shared/identify-timeout.ts).
 */
import type { ProtocolModule } from '../protocols/types.js';
import type { Clock } from '../core/clock.js';
import type { TrackerCounts } from '../core/metrics/counts.js';
import { ConnectionRegistry } from './tcp/connection-registry.js';
import type { Socket } from 'node:net';
import { DeviceConnection, type ConnectionOptions } from './tcp/device-connection.js';
import { startUdpListener, UDP_LISTEN_MS, type UdpPeer } from './udp/udp-listener.js';
import { startOsmandServer } from './http/osmand-server.js';
import type { GatewayDeps } from './shared/frame-handler.js';
import type { CommandQueue } from './shared/connection-commands.js';
import { flushEveryWindow } from './shared/log-budget.js';
import { storageFailureBudget } from './shared/storage-failures.js';
import { listenStream, TLS_HANDSHAKE_TIMEOUT_MS, type StreamListener, type TlsPair } from './shared/stream-server.js';
import { RefusalLog } from './shared/tls-refusals.js';
import { DescriptorGate } from './shared/descriptor-gate.js';
import { identifyTimeout } from './shared/identify-timeout.js';

export interface TrackerGatewayOptions extends GatewayDeps {
  host: string;
  protocols: Record<string, ProtocolModule>;
  /** protocol name -> port or off, for every protocol (config.protocolPorts) */
  ports: Readonly<Record<string, number | 'off'>>;
  /** protocol name -> its TLS port or off (config.protocolTlsPorts); a protocol not named has none */
  tlsPorts?: Readonly<Record<string, number | 'off'>>;
  /** the certificate and key the TLS ports serve (needed when one is on) */
  tls?: TlsPair;
  clock: Clock;
  checksum: 'accept' | 'strict';
  idleTimeoutSeconds: number;
  /** TRACKGATE_IDENTIFY_TIMEOUT (default 60) */
  identifyTimeoutSeconds?: number;
  /** the command queue a TCP connection delivers once its device identifies itself */
  commands: CommandQueue;
  /** how long a command without an answer holds back the device's next one (TRACKGATE_COMMAND_WAIT) */
  commandWaitMs: number;
  /** where each protocol's listeners count for GET /metrics; absent: metrics are off */
  metrics?: { tracker(protocol: string): TrackerCounts };
  /** a device got or lost its live TCP connection here (a gateway process tells the core) */
  onConnectionChange?(deviceId: string, connected: boolean): void;
  /** a device's datagram was handled here (a gateway process tells the core) */
  onUdpHeard?(deviceId: string): void;
  /** false: no UDP listeners here (of several gateway processes, one takes the datagrams: gateway/ipc/gateway-pool.ts) */
  udp?: boolean;
  /** whether a new tracker connection is taken (a gateway process takes none while the core is unreachable: closed at once, the tracker retries) */
  admit?(): boolean;
}

export interface TrackerGateway {
  /** e.g. { teltonika: 5027, 'teltonika/udp': 5027, 'teltonika/tls': 5028, osmand: 5055 } */
  ports: Record<string, number>;
  /** A renewed certificate and key: the TLS ports' next connections are served with it. */
  setTls(pair: TlsPair): void;
  registry: ConnectionRegistry<DeviceConnection>;
  /**
   * Has the device's live TCP connection on this instance, or its UDP address while it still
   * listens after its last datagram (UDP_LISTEN_MS), deliver its queued commands: whether there is
   * one. A UDP device heard earlier gets them after its next datagram.
   */
  deliverCommands(deviceId: string): boolean;
  /** the devices with a live TCP connection on this instance */
  connectedDevices(): string[];
  /** Closes every tracker connection and listener: one log line for all of them, none per tracker, whatever was in flight. */
  stop(): Promise<void>;
}

export async function startTrackerGateway(o: TrackerGatewayOptions): Promise<TrackerGateway> {
  const registry = new ConnectionRegistry<DeviceConnection>(o.onConnectionChange);
  /** every open TCP connection, identified or not: a stop closes them before the core's answers are cut off */
  const open = new Set<DeviceConnection>();
  const udpPeers = new Map<string, UdpPeer>();
  const ports: Record<string, number> = {};
  const closers: (() => Promise<void>)[] = [];
  const storageFailures = storageFailureBudget(o.logger);
  const gate = new DescriptorGate({ logger: o.logger });
  const identify = identifyTimeout(o.logger, o.identifyTimeoutSeconds ?? 60);
  const flushing = flushEveryWindow([storageFailures, identify.budget]);
  closers.push(async () => flushing.stop());
  const tlsListeners: StreamListener[] = [];
  const shared: Shared = {
    storageFailures,
    gate,
    identifyTimeout: identify,
    registry,
    open,
    udpPeers,
    refusals: new RefusalLog(o.logger),
    tlsListeners,
  };
  try {
    for (const [name, protocol] of Object.entries(o.protocols)) {
      const port = o.ports[name];
      // config/config.ts PROTOCOL_DEFAULT_PORTS names every protocol: a missing one is a bug, not "off"
      if (port === undefined) throw new Error(`no port configured for protocol ${name}`);
      if (port !== 'off') await listenFor(o, shared, name, protocol, port, { ports, closers });
      const tlsPort = o.tlsPorts?.[name];
      if (tlsPort !== undefined && tlsPort !== 'off')
        await listenTlsFor(o, shared, name, protocol, tlsPort, { ports, closers });
    }
  } catch (e) {
    await Promise.all(closers.map((c) => c()));
    throw e;
  }
  // what the process holds besides tracker connections, now that every listener is bound
  gate.measure();
  o.logger.debug(
    { capacity: gate.capacity, openFileLimit: gate.limit, reserve: gate.reserve },
    'tracker connections this process takes at most',
  );
  let current = o.tls;
  return {
    ports,
    registry,
    setTls(pair) {
      current = pair;
      for (const l of tlsListeners) l.setTls?.(current);
    },
    deliverCommands(deviceId) {
      const connection = registry.get(deviceId);
      if (connection) {
        connection.deliverCommands();
        return true;
      }
      const peer = udpPeers.get(deviceId);
      if (!peer || o.clock.now().getTime() - peer.lastSeen > UDP_LISTEN_MS) return false;
      peer.commands.kick();
      return true;
    },
    connectedDevices() {
      return registry.deviceIds();
    },
    async stop() {
      // A planned stop (docs/scaling.md "Stopping"): every tracker connection and listener is closed first,
      // so what still waits for storage or the core ends unanswered and unlogged when the caller
      // then closes them (a gateway process's link fails every request); one line says how many.
      const connections = open.size;
      for (const c of open) c.stop();
      open.clear();
      await Promise.all(closers.map((c) => c()));
      o.logger.info(
        { connections },
        'stopping: tracker connections closed (their trackers connect again and resend what was not acknowledged)',
      );
    },
  };
}

/** what every listener of the process shares */
interface Shared {
  storageFailures: ReturnType<typeof storageFailureBudget>;
  gate: DescriptorGate;
  identifyTimeout: ReturnType<typeof identifyTimeout>;
  registry: ConnectionRegistry<DeviceConnection>;
  open: Set<DeviceConnection>;
  udpPeers: Map<string, UdpPeer>;
  /** TLS on a plain port, plain on a TLS port: logged once per address */
  refusals: RefusalLog;
  /** the TLS listeners, given each renewed certificate */
  tlsListeners: StreamListener[];
}

/** Options every listener of a protocol shares. */
function commonOf(
  o: TrackerGatewayOptions,
  shared: Shared,
  protocol: ProtocolModule,
  counts: TrackerCounts | undefined,
) {
  return {
    ...o,
    protocol,
    storageFailures: shared.storageFailures,
    counts,
    gate: shared.gate,
    identifyTimeout: shared.identifyTimeout,
  };
}

/** Takes an accepted tracker socket (plain, or TLS once its handshake is done) as a DeviceConnection. */
function acceptTracker(
  o: TrackerGatewayOptions,
  shared: Shared,
  connection: ConnectionOptions,
  counts: TrackerCounts | undefined,
): (socket: Socket) => void {
  return (socket) => {
    if (o.admit && !o.admit()) {
      counts?.refusedConnection('core_unreachable');
      socket.destroy();
      return;
    }
    if (!shared.gate.admit(socket, counts)) {
      socket.destroy();
      return;
    }
    const c = new DeviceConnection(socket, connection);
    shared.open.add(c);
    socket.once('close', () => shared.open.delete(c));
  };
}

/**
 * The protocol's decoder behind TLS on `port` (TRACKGATE_<P>_TLS_PORT): the same connection code
 * as its plain port, on the socket TLS decrypts; acknowledgements still wait for the commit.
 */
async function listenTlsFor(
  o: TrackerGatewayOptions,
  shared: Shared,
  name: string,
  protocol: ProtocolModule,
  port: number,
  into: { ports: Record<string, number>; closers: (() => Promise<void>)[] },
): Promise<void> {
  if (!(protocol.transports.includes('tcp') && protocol.decode && protocol.createSplitter)) return;
  if (!o.tls) throw new Error(`a TLS port for ${name} needs a certificate and key`);
  const counts = o.metrics?.tracker(name);
  const connection = {
    ...commonOf(o, shared, protocol, counts),
    registry: shared.registry,
    idleTimeoutMs: o.idleTimeoutSeconds * 1000,
  };
  const t = await listenStream(acceptTracker(o, shared, connection, counts), {
    port,
    host: o.host,
    tls: {
      ...o.tls,
      handshakeTimeoutMs: TLS_HANDSHAKE_TIMEOUT_MS,
      onError: shared.refusals.handshakeFailed({ protocol: name, port: `${name}/tls` }),
    },
  });
  shared.tlsListeners.push(t);
  into.ports[`${name}/tls`] = t.port;
  into.closers.push(t.close);
}

/** The protocol's listeners on `port` (HTTP; or TCP and, where it has it, UDP), their ports and closers added to `into`. */
async function listenFor(
  o: TrackerGatewayOptions,
  shared: Shared,
  name: string,
  protocol: ProtocolModule,
  port: number,
  into: { ports: Record<string, number>; closers: (() => Promise<void>)[] },
): Promise<void> {
  const counts = o.metrics?.tracker(name);
  const common = commonOf(o, shared, protocol, counts);
  if (protocol.transports.includes('http') && protocol.decodeHttp) {
    const s = await startOsmandServer(common, port, o.host);
    into.ports[name] = s.port;
    into.closers.push(s.close);
    return;
  }
  if (protocol.transports.includes('tcp') && protocol.decode && protocol.createSplitter) {
    const connection = {
      ...common,
      registry: shared.registry,
      idleTimeoutMs: o.idleTimeoutSeconds * 1000,
      plainPort: { refusals: shared.refusals, tlsPortSetting: `TRACKGATE_${name.toUpperCase()}_TLS_PORT` },
    };
    const t = await listenStream(acceptTracker(o, shared, connection, counts), { port, host: o.host });
    into.ports[name] = t.port;
    into.closers.push(t.close);
  }
  if (protocol.transports.includes('udp') && protocol.decodeDatagram && o.udp !== false) {
    const u = await startUdpListener({ ...common, udpPeers: shared.udpPeers }, port, o.host);
    into.ports[`${name}/udp`] = u.port;
    into.closers.push(u.close);
  }
}
