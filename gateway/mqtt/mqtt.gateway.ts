/**
 * startMqttGateway(options): the aedes broker of docs/contract.md §3 "MQTT" on TCP, WebSocket and TLS.
 * Devices publish into the one ingest path; API users subscribe to their account's live feed.
 * Every connection passes the packet-size guard first (packet-size.guard.ts). Each aedes handler
 * is a named function in its own file (mqtt.pre-connect.ts, mqtt.authenticate.ts,
 * mqtt.client-ready.ts, mqtt.authorize-*.ts). MQTT 5 is refused by aedes itself with CONNACK 1.
 */
import { readFileSync } from 'node:fs';
import type { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Aedes, type Client } from 'aedes';
import type { DeviceDirectory } from '../../core/devices/device-directory.js';
import type { IngestService } from '../../core/ingest/ingest.service.js';
import type { TokensService } from '../../core/auth/tokens.service.js';
import type { GroupsService } from '../../core/groups/groups.service.js';
import type { EventBus } from '../../core/events/event-bus.js';
import type { Logger } from '../../core/logger.js';
import type { Clock } from '../../core/clock.js';
import type { MqttCounts } from '../../core/metrics/counts.js';
import { createAuthenticator, type MqttLoginLimiters } from './mqtt.auth.js';
import { createPublishHandler, type PublishStats } from './mqtt.publish.js';
import { startLiveFeed } from './live.feed.js';
import type { OutboxLimits } from './live.outbox.js';
import type { FrameTap } from '../shared/frame-tap.js';
import { DEFAULT_RATE, Semaphore, type RateOptions } from './publish.limits.js';
import { listenTcp, listenTls, listenWebSocket, webSocketUpgrades, type WebSocketUpgrades } from './mqtt.listeners.js';
import type { StreamListener, TlsPair } from '../shared/stream-server.js';
import { guardPacketSize } from './packet-size.guard.js';
import { Sessions } from './mqtt.sessions.js';
import type { MqttContext } from './mqtt.context.js';
import { assignClientId } from './mqtt.pre-connect.js';
import { authenticate } from './mqtt.authenticate.js';
import { authorizePublish } from './mqtt.authorize-publish.js';
import { authorizeSubscribe } from './mqtt.authorize-subscribe.js';
import { authorizeForward } from './mqtt.authorize-forward.js';
import { clientReady, clientGone, clientSubscribed } from './mqtt.client-ready.js';
import { createMqttCommands } from './mqtt.commands.js';
import type { CommandsService } from '../../core/commands/commands.service.js';
import { watchUsers } from './mqtt.user-recheck.js';

export interface MqttGatewayOptions {
  host: string;
  /** MQTT over TCP; 0 picks a free port, 'off' disables */
  port: number | 'off';
  /** MQTT over WebSocket */
  wsPort: number | 'off';
  /** MQTT over TLS; needs tlsCert and tlsKey, otherwise it stays off */
  tlsPort: number | 'off';
  /** PEM file paths */
  tlsCert?: string;
  tlsKey?: string;
  /** the certificate and key themselves (the box's, renewed through setTls); before tlsCert and tlsKey */
  tls?: TlsPair;
  directory: DeviceDirectory;
  ingest: IngestService;
  tokens: TokensService;
  /** where failed logins are counted (main.ts: in Redis when it is set); default in process */
  mqttLogins?: MqttLoginLimiters;
  events: EventBus;
  logger: Logger;
  clock: Clock;
  /** which devices a group holds, for the live feed of users restricted to a group */
  groups: GroupsService;
  /** per-client publish rate (default 100/s, bursts of 500, disconnect beyond 10 s of backlog) */
  publishRate?: RateOptions;
  /** messages handed to the core and not yet committed, over all clients (default 10000) */
  maxPendingMessages?: number;
  /** how often a connected API user's credentials are checked again, besides on every change of the user (default 60 s) */
  recheckUsersMs?: number;
  /** the largest MQTT packet a client may send, fixed header included (default 256 KiB) */
  maxPacketBytes?: number;
  /** a client whose socket does not drain for this long is disconnected (default 10 s) */
  drainTimeoutMs?: number;
  /** per live subscriber: packets waiting for its socket (default: live.outbox.ts) */
  liveOutbox?: OutboxLimits;
  /** the tracker listeners' raw frames, shown on live/{deviceId}/frames */
  frames?: FrameTap;
  /** commands to MQTT devices (`devices/{id}/commands`); absent: devices get none */
  commands?: CommandsService;
  /** how long a command without an answer holds back the device's next one (TRACKGATE_COMMAND_WAIT; default 15 s) */
  commandWaitMs?: number;
  /** where device publishes are counted for GET /metrics; absent: metrics are off */
  counts?: MqttCounts;
}

export const DEFAULT_MAX_PACKET_BYTES = 256 * 1024;

export interface MqttGateway {
  /** { mqtt, 'mqtt/ws', 'mqtt/tls' }, those that listen */
  ports: Record<string, number>;
  stats: Readonly<PublishStats>;
  /** MQTT clients connected now (aedes' count: CONNECT accepted, not yet gone) */
  connectedClients(): number;
  /**
   * MQTT over WebSocket from another HTTP server's upgrade request (the REST ports' `/mqtt`);
   * undefined when MQTT over WebSocket is off.
   */
  webSocketUpgrade?: WebSocketUpgrades['upgrade'];
  /** A renewed certificate for the TLS port's next connections. */
  setTls(pair: TlsPair): void;
  /** Delivers an MQTT device's queued commands if a client of it takes commands here; whether one does. */
  deliverCommands(deviceId: string): boolean;
  /** The MQTT devices with a client that takes commands here. */
  connectedDevices(): string[];
  /** The MQTT devices with a client connected here now, whether it takes commands or not (GET /api/lastLocations). */
  onlineDevices(): string[];
  stop(): Promise<void>;
}

/** aedes options chosen for a gateway of many small devices and few subscribers. */
const BROKER_LIMITS = {
  /**
   * a subscriber whose socket does not drain in 10 s is disconnected (aedes#88, PR #1060); live
   * packets never wait on it (live.outbox.ts)
   */
  drainTimeout: 10_000,
  /** parallel deliveries through the emitter */
  concurrency: 1000,
  /** packets a client may send before its CONNACK */
  queueLimit: 42,
  /** QoS 2 publishes awaiting PUBREL per client */
  maxInflightInbound: 100,
  /** our topics have 3–4 levels; OwnTracks sub-topics 4 */
  maxTopicLevels: 16,
  /** MQTT 3.1 client ids (3.1.1 has no limit); OwnTracks' default ids exceed 23 */
  maxClientsIdLength: 128,
  connectTimeout: 30_000,
};

/** The handlers' shared context: the publish handler, the authenticator, the live feed and the commands to devices. */
function mqttContext(o: MqttGatewayOptions, broker: Aedes, logger: Logger): MqttContext {
  const commands =
    o.commands &&
    createMqttCommands({ broker, commands: o.commands, clock: o.clock, logger, waitMs: o.commandWaitMs ?? 15_000 });
  const publisher = createPublishHandler({
    directory: o.directory,
    ingest: o.ingest,
    logger,
    pending: new Semaphore(o.maxPendingMessages ?? 10_000),
    commandResults: commands && ((deviceId, results) => commands.results(deviceId, results)),
    counts: o.counts,
  });
  return {
    logger,
    clock: o.clock,
    directory: o.directory,
    auth: createAuthenticator({ directory: o.directory, tokens: o.tokens, failedLogins: o.mqttLogins }),
    publisher,
    live: startLiveFeed({ broker, events: o.events, logger, clock: o.clock, groups: o.groups, frames: o.frames }),
    sessions: new Sessions(),
    rate: o.publishRate ?? DEFAULT_RATE,
    liveOutbox: o.liveOutbox,
    commands,
  };
}

/** The handlers, set on the broker as node_modules/aedes/docs/Aedes.md "Handler: …" shows; each file cites its clause. */
function setHandlers(broker: Aedes, gw: MqttContext): void {
  const { logger } = gw;
  broker.preConnect = assignClientId;
  broker.authenticate = (client, username, password, done) => authenticate(gw, client, username, password, done);
  broker.authorizePublish = (client, packet, done) => authorizePublish(gw, client, packet, done);
  broker.authorizeSubscribe = (client, sub, done) => authorizeSubscribe(gw, client, sub, done);
  broker.authorizeForward = (client, packet) => authorizeForward(gw, client, packet);
  broker.on('clientReady', (client) => clientReady(gw, client));
  broker.on('subscribe', (_subs, client) => clientSubscribed(gw, client));
  broker.on('clientDisconnect', (client) => clientGone(gw, client));
  broker.on('clientError', (client, err) => {
    clientGone(gw, client);
    logger.debug({ clientId: client?.id, err: err.message }, 'mqtt: client error');
  });
  broker.on('connectionError', (_client, err) =>
    logger.debug({ err: err.message }, 'mqtt: connection error before CONNECT'),
  );
  // aedes emits 'error' for failures of its background jobs (e.g. clearing wills); never crash on them
  const emitter: EventEmitter = broker;
  emitter.on('error', (err: Error) => logger.warn({ err }, 'mqtt: broker error'));
}

/**
 * Opens the TCP, WebSocket and TLS listeners that are on, each pushed to `listeners` (and its port
 * to `ports`) as it opens, so a failure part way lets the caller close those already open. Returns
 * the WebSocket upgrades when MQTT over WebSocket is on (the REST ports take them at `/mqtt` too).
 */
async function openListeners(
  o: MqttGatewayOptions,
  broker: Aedes,
  gw: MqttContext,
  listeners: StreamListener[],
  ports: Record<string, number>,
): Promise<WebSocketUpgrades | undefined> {
  const { logger } = gw;
  const maxPacketBytes = o.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES;
  const handle = (socket: Duplex, remoteAddress: string | null, req?: IncomingMessage) => {
    const stream = guardPacketSize(socket, maxPacketBytes, (e) => {
      logger.info(
        { remoteAddress, declaredBytes: e.declaredBytes, maxBytes: e.maxBytes },
        'mqtt: packet larger than the limit; closing the connection',
      );
    });
    gw.sessions.connected(broker.handle(stream, req), { stream, remoteAddress });
  };
  const socketError = (e: Error) => logger.debug({ err: e.message }, 'mqtt: socket error');
  if (o.port !== 'off') {
    const l = await listenTcp(handle, o.port, o.host);
    listeners.push(l);
    ports.mqtt = l.port;
  }
  let upgrades: WebSocketUpgrades | undefined;
  if (o.wsPort !== 'off') {
    upgrades = webSocketUpgrades(handle, socketError, maxPacketBytes);
    const l = await listenWebSocket(upgrades, o.wsPort, o.host);
    listeners.push(l);
    ports['mqtt/ws'] = l.port;
  }
  if (o.tlsPort !== 'off') {
    const pair =
      o.tls ?? (o.tlsCert && o.tlsKey ? { cert: readFileSync(o.tlsCert), key: readFileSync(o.tlsKey) } : undefined);
    if (pair) {
      const l = await listenTls(handle, o.tlsPort, o.host, pair.cert, pair.key, socketError);
      listeners.push(l);
      ports['mqtt/tls'] = l.port;
    } else {
      logger.info('mqtt: no TLS certificate and key given; MQTT over TLS is off');
    }
  }
  return upgrades;
}

export async function startMqttGateway(o: MqttGatewayOptions): Promise<MqttGateway> {
  const logger = o.logger.child({ component: 'mqtt' });
  const broker = await Aedes.createBroker({
    ...BROKER_LIMITS,
    drainTimeout: o.drainTimeoutMs ?? BROKER_LIMITS.drainTimeout,
  });
  const gw = mqttContext(o, broker, logger);
  const { commands, publisher } = gw;
  setHandlers(broker, gw);
  const stopWatchingUsers = watchUsers(gw, o.events, o.recheckUsersMs ?? 60_000);

  const listeners: StreamListener[] = [];
  const ports: Record<string, number> = {};
  let upgrades: WebSocketUpgrades | undefined;
  try {
    upgrades = await openListeners(o, broker, gw, listeners, ports);
  } catch (e) {
    await stopAll();
    throw e;
  }

  async function stopAll(): Promise<void> {
    stopWatchingUsers();
    gw.live.stop();
    commands?.stop();
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    await Promise.all(listeners.map((l) => l.close()));
  }

  let stopping: Promise<void> | undefined;
  return {
    ports,
    stats: publisher.stats,
    connectedClients: () => broker.connectedClients,
    webSocketUpgrade: upgrades?.upgrade,
    setTls: (pair) => {
      for (const l of listeners) l.setTls?.(pair);
    },
    deliverCommands: (deviceId) => commands?.deliver(deviceId) ?? false,
    connectedDevices: () => commands?.connectedDevices() ?? [],
    onlineDevices() {
      // aedes keeps its connected clients by client id (aedes.js `this.clients`), not in its types
      const clients = (broker as unknown as { clients: Record<string, Client> }).clients;
      const out: string[] = [];
      for (const id in clients) {
        const identity = gw.sessions.get(clients[id])?.identity;
        if (identity?.kind === 'device') out.push(identity.deviceId);
      }
      return out;
    },
    stop: () => (stopping ??= stopAll()),
  };
}
