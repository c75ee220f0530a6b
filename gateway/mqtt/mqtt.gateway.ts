/**
 * startMqttGateway(options): the aedes 1.2 broker of CONTRACT.md §3 "MQTT" on TCP, WebSocket
 * and TLS, wired to the core: devices publish into the one ingest path, API users subscribe to
 * the live feed of their account.
 *
 * Protocols: MQTT 3.1 and 3.1.1. An MQTT 5 CONNECT is answered by aedes 1.2 itself with CONNACK
 * return code 1 (unacceptable protocol version; lib/handlers/connect.js refuses
 * protocolVersion > 4 before authentication); clients fall back to 3.1.1. Client ids of MQTT 3.1
 * may be 128 characters long (aedes' default of 23 refuses OwnTracks' default ids with code 2).
 *
 * Every connection first passes the packet-size guard (packet-size.guard.ts: a packet declared
 * over `maxPacketBytes` closes it before its body is read). The hooks, in the order a client
 * meets them:
 * - preConnect: a 3.1.1 client with an empty client id (clean session) gets `<user name>_<random>`,
 *   so the client id rule holds for server-assigned ids too;
 * - authenticate: mqtt.auth.ts (CONNACK 2, 4 or 5);
 * - authorizePublish: mqtt.publish.ts (PUBACK only after the commit);
 * - authorizeSubscribe: devices get their own topics (wildcards narrowed), API users `live/…`;
 * - authorizeForward: device topics reach only the same device's clients; live packets only
 *   users of the device's account (and group) — live.feed.ts — through each user's bounded
 *   outbox (live.outbox.ts), so a subscriber that stops reading holds up nobody.
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Aedes, type AedesPublishPacket, type Client, type Subscription } from 'aedes';
import type { Db } from '../../core/db/db.js';
import type { DeviceDirectory } from '../../core/devices/device-directory.js';
import type { IngestService } from '../../core/ingest/ingest.service.js';
import type { AlertsService } from '../../core/alerts/alerts.service.js';
import type { TokensService } from '../../core/auth/tokens.service.js';
import type { EventBus } from '../../core/events/event-bus.js';
import type { Logger } from '../../core/logger.js';
import type { Clock } from '../../core/clock.js';
import { isInGroup } from '../../core/devices/devices.repository.js';
import { createAuthenticator, PROTOCOL, type Identity } from './mqtt.auth.js';
import { createPublishHandler, type ClientState, type PublishStats } from './mqtt.publish.js';
import { startLiveFeed, type LiveSubscriber } from './live.feed.js';
import { LiveOutbox, type OutboxLimits } from './live.outbox.js';
import { deviceOfTopic, isLiveFilter, narrowDeviceFilter, LIVE_PREFIX } from './mqtt.topics.js';
import { DEFAULT_RATE, PublishBucket, Semaphore, type RateOptions } from './publish.limits.js';
import { listenTcp, listenTls, listenWebSocket, type Listener } from './mqtt.listeners.js';
import { guardPacketSize } from './packet-size.guard.js';

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
  directory: DeviceDirectory;
  ingest: IngestService;
  alerts: AlertsService;
  tokens: TokensService;
  events: EventBus;
  logger: Logger;
  clock: Clock;
  /** for the live feed of users restricted to a group (group membership); without it they receive nothing */
  db?: Db;
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
}

export const DEFAULT_MAX_PACKET_BYTES = 256 * 1024;

export interface MqttGateway {
  /** { mqtt, 'mqtt/ws', 'mqtt/tls' }, those that listen */
  ports: Record<string, number>;
  stats: Readonly<PublishStats>;
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

function remoteAddressOf(client: Client): string | null {
  const fromReq = client.req?.socket?.remoteAddress;
  if (fromReq) return fromReq;
  const conn = client.conn as { remoteAddress?: string };
  return conn.remoteAddress ?? null;
}

export async function startMqttGateway(o: MqttGatewayOptions): Promise<MqttGateway> {
  const logger = o.logger.child({ component: 'mqtt' });
  const clock = o.clock;
  const auth = createAuthenticator({ directory: o.directory, tokens: o.tokens, clock });
  const pending = new Semaphore(o.maxPendingMessages ?? 10_000);
  const publisher = createPublishHandler({ directory: o.directory, ingest: o.ingest, alerts: o.alerts, logger, pending });
  const rate = o.publishRate ?? DEFAULT_RATE;
  const states = new WeakMap<Client, ClientState>();
  const liveSubscribers = new WeakMap<Client, LiveSubscriber>();
  /** userId -> its connected clients (API users only) */
  const userClients = new Map<string, Set<Client>>();
  const db = o.db;

  const broker = await Aedes.createBroker({
    ...BROKER_LIMITS,
    drainTimeout: o.drainTimeoutMs ?? BROKER_LIMITS.drainTimeout,

    preConnect(client, packet, callback) {
      // [MQTT-3.1.3-6]: an empty client id with a clean session is assigned by the server
      if (!packet.clientId && packet.clean && packet.username) {
        packet.clientId = `${packet.username}_${randomBytes(6).toString('hex')}`;
      }
      callback(null, true);
    },

    authenticate(client, username, password, callback) {
      const remoteAddress = remoteAddressOf(client);
      auth.authenticate(client.id, username, password, remoteAddress).then(
        (r) => {
          if (!r.ok) {
            logger.info({ clientId: client.id, userName: username, deviceId: r.deviceId, remoteAddress, returnCode: r.returnCode, reason: r.reason }, 'mqtt: connection refused');
            return callback(Object.assign(new Error(r.reason), { returnCode: r.returnCode }), false);
          }
          // the client id is this connection's until it ends
          const holding = r.holding;
          if (holding) {
            const conn = client.conn as Duplex;
            if (client.closed || conn.destroyed) auth.release(holding);
            else conn.once('close', () => auth.release(holding));
          }
          states.set(client, { identity: r.identity, bucket: new PublishBucket(rate, clock), tail: Promise.resolve(), remoteAddress });
          callback(null, true);
        },
        (err: unknown) => {
          logger.error({ err, clientId: client.id }, 'mqtt: authentication failed with an error');
          // 3: server unavailable — the credentials could not be checked
          callback(Object.assign(new Error('authentication unavailable'), { returnCode: 3 as const }), false);
        },
      );
    },

    authorizePublish(client, packet, callback) {
      const state = client ? states.get(client) : undefined;
      if (!state) {
        // A will left by a client no longer connected (client null): it names nobody we can check,
        // so it is neither stored nor refused (a refused will would be retried for ever); the
        // forward rules keep it from everyone but its own device's clients.
        if (!client) {
          packet.retain = false;
          return callback(null);
        }
        return callback(new Error('not authenticated'));
      }
      publisher.authorize(client!, state, packet, callback);
    },

    authorizeSubscribe(client, sub, callback) {
      const identity = states.get(client)?.identity;
      const granted = identity ? grant(identity, sub) : null;
      if (!granted) logger.info({ clientId: client.id, topic: sub.topic }, 'mqtt: subscription refused');
      callback(null, granted);
    },

    authorizeForward(client, packet) {
      return forward(client, packet);
    },
  });

  const live = startLiveFeed({ broker, events: o.events, logger, clock, isInGroup: db ? (deviceId, groupId) => isInGroup(db, deviceId, groupId) : undefined });

  function grant(identity: Identity, sub: Subscription): Subscription | null {
    if (identity.kind === 'device') {
      const topic = narrowDeviceFilter(sub.topic, identity.deviceId);
      return topic ? { ...sub, topic } : null;
    }
    return isLiveFilter(sub.topic) ? sub : null;
  }

  function forward(client: Client, packet: AedesPublishPacket): AedesPublishPacket | null {
    const identity = states.get(client)?.identity;
    if (!identity) return null;
    if (packet.topic.startsWith(LIVE_PREFIX)) {
      if (identity.kind !== 'user') return null;
      if (identity.expiresAtMs !== null && clock.now().getTime() >= identity.expiresAtMs) {
        setImmediate(() => client.close());
        return null;
      }
      const subscriber = liveSubscribers.get(client);
      return subscriber ? live.forward(subscriber, packet) : null;
    }
    if (identity.kind !== 'device' || deviceOfTopic(packet.topic) !== identity.deviceId) return null;
    // A device's own echoes go through aedes' emitter, where a write to a socket that does not drain
    // holds a delivery slot until drainTimeout (see live.outbox.ts): a backed-up socket gets none.
    if ((client.conn as { writableNeedDrain?: boolean }).writableNeedDrain) return null;
    return packet;
  }

  broker.on('clientReady', (client) => {
    const identity = states.get(client)?.identity;
    if (!identity) return;
    if (identity.kind === 'device') {
      logger.debug({ clientId: client.id, deviceId: identity.deviceId }, 'mqtt: device connected');
      void o.directory.resolve(identity.deviceId, PROTOCOL, remoteAddressOf(client)).then((r) => {
        if (r.status === 'ok') return o.directory.touch(r.device, PROTOCOL);
      }).catch(() => {});
      return;
    }
    const outbox = new LiveOutbox(
      (packet, done) => client.publish(packet, done),
      () => client.closed,
      o.liveOutbox,
      (dropped) => logger.warn({ clientId: client.id, dropped }, 'mqtt: live subscriber too slow; dropping its oldest packets'),
    );
    const subscriber: LiveSubscriber = {
      principal: identity.principal,
      get closed() {
        return client.closed;
      },
      outbox,
    };
    liveSubscribers.set(client, subscriber);
    live.add(subscriber);
    const mine = userClients.get(identity.principal.userId) ?? new Set<Client>();
    mine.add(client);
    userClients.set(identity.principal.userId, mine);
  });

  const dropSubscriber = (client: Client) => {
    const s = liveSubscribers.get(client);
    if (!s) return;
    live.remove(s);
    liveSubscribers.delete(client);
    const mine = userClients.get(s.principal.userId);
    mine?.delete(client);
    if (mine?.size === 0) userClients.delete(s.principal.userId);
  };
  broker.on('clientDisconnect', dropSubscriber);
  broker.on('clientError', (client, err) => {
    dropSubscriber(client);
    logger.debug({ clientId: client?.id, err: err.message }, 'mqtt: client error');
  });
  broker.on('connectionError', (_client, err) => logger.debug({ err: err.message }, 'mqtt: connection error before CONNECT'));
  // aedes emits 'error' for failures of its background jobs (e.g. clearing wills); never crash on them
  (broker as unknown as NodeJS.EventEmitter).on('error', (err: Error) => logger.warn({ err }, 'mqtt: broker error'));

  /**
   * A connected API user keeps its live feed only while its credentials still log in: checked
   * again when the user changes (deleted, new API key, group or privileges: the event bus, also
   * for changes made on another instance) and every `recheckUsersMs` (expiry, disabled). A user who
   * may no longer log in is disconnected; one whose group changed keeps its connection with the
   * new scope, and what waited in its outbox under the old scope is dropped.
   */
  function recheckUser(client: Client): void {
    const s = liveSubscribers.get(client);
    const identity = states.get(client)?.identity;
    if (!s || !identity || identity.kind !== 'user' || client.closed) return;
    auth.recheck(identity).then(
      (principal) => {
        if (client.closed) return;
        if (!principal) {
          logger.info({ clientId: client.id, userId: identity.principal.userId }, 'mqtt: user may no longer log in; closing its connection');
          client.close();
          return;
        }
        if (principal.groupId !== s.principal.groupId) s.outbox.clear();
        identity.principal = principal;
        s.principal = principal;
      },
      (err: unknown) => logger.warn({ err, clientId: client.id }, 'mqtt: re-checking a user failed; checked again later'),
    );
  }
  const recheckUserId = (userId: string) => {
    for (const client of userClients.get(userId) ?? []) recheckUser(client);
  };
  // after every listener of the event ran (the tokens service forgets its cached principal in one)
  const offUserChanged = o.events.onUserChanged((userId) => setImmediate(recheckUserId, userId));
  const recheckTimer = setInterval(() => {
    for (const userId of userClients.keys()) recheckUserId(userId);
  }, o.recheckUsersMs ?? 60_000);
  recheckTimer.unref();

  const listeners: Listener[] = [];
  const ports: Record<string, number> = {};
  const maxPacketBytes = o.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES;
  const handle = (stream: Duplex, req?: IncomingMessage) => {
    const guarded = guardPacketSize(stream, maxPacketBytes, (e) => {
      const remoteAddress = req?.socket?.remoteAddress ?? (stream as { remoteAddress?: string }).remoteAddress ?? null;
      logger.info({ remoteAddress, declaredBytes: e.declaredBytes, maxBytes: e.maxBytes }, 'mqtt: packet larger than the limit; closing the connection');
    });
    broker.handle(guarded, req);
  };
  const socketError = (e: Error) => logger.debug({ err: e.message }, 'mqtt: socket error');
  try {
    if (o.port !== 'off') {
      const l = await listenTcp(handle, o.port, o.host);
      listeners.push(l);
      ports.mqtt = l.port;
    }
    if (o.wsPort !== 'off') {
      const l = await listenWebSocket(handle, o.wsPort, o.host, socketError, maxPacketBytes);
      listeners.push(l);
      ports['mqtt/ws'] = l.port;
    }
    if (o.tlsPort !== 'off') {
      if (o.tlsCert && o.tlsKey) {
        const l = await listenTls(handle, o.tlsPort, o.host, readFileSync(o.tlsCert), readFileSync(o.tlsKey), socketError);
        listeners.push(l);
        ports['mqtt/tls'] = l.port;
      } else {
        logger.info('mqtt: no TLS certificate and key given; MQTT over TLS is off');
      }
    }
  } catch (e) {
    await stopAll();
    throw e;
  }

  async function stopAll(): Promise<void> {
    clearInterval(recheckTimer);
    offUserChanged();
    live.stop();
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    await Promise.all(listeners.map((l) => l.close()));
  }

  let stopping: Promise<void> | undefined;
  return {
    ports,
    stats: publisher.stats,
    stop: () => (stopping ??= stopAll()),
  };
}
