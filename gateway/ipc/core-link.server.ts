/**
 * The core's end of the gateway processes (ipc.messages.ts): a net-ipc server on TCP (the loopback
 * address for the core's own gateway processes, TRACKGATE_HOST for edge gateways) or a Unix
 * socket. It answers device lookups, stores what gateway processes submit through the one
 * ingest path (the answer goes once it is committed, and only then does the gateway acknowledge
 * the tracker), runs their command-queue calls, shows their raw frames on the live feed, and
 * knows which gateway process holds each device's connection, to tell it when a command is queued.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Server, type Connection } from 'net-ipc';
import type { DeviceDirectory, Resolution } from '../../core/devices/device-directory.js';
import { DEVICE_ID_MAX_LENGTH, gatewayDevice, type GatewayDevice } from '../../core/model/device.js';
import type { IngestService } from '../../core/ingest/ingest.service.js';
import { systemClock, type Clock } from '../../core/clock.js';
import { SerialisedRow } from '../../core/locations/locations.repository.js';
import { preparedAlert, preparedLocation, receivedTimeProblem } from '../../core/ingest/prepared.checks.js';
import type { AlertInput } from '../../core/model/alert.js';
import type { CommandsService } from '../../core/commands/commands.service.js';
import type { EventBus } from '../../core/events/event-bus.js';
import type { Logger } from '../../core/logger.js';
import type { TrackerSnapshot } from '../../core/metrics/counts.js';
import type { FrameTap } from '../shared/frame-tap.js';
import { freeTcpPort } from '../shared/stream-server.js';
import { guardLinkSocket, type LinkGuard } from './link-guard.js';
import { LinkHolders } from './link-holders.js';
import { LISTENER_LOG, LogBudget } from '../shared/log-budget.js';
import type { Server as NetServer, Socket } from 'node:net';
import {
  COMMAND_CALLS,
  MAX_LOCATION_JSON,
  MAX_STORE_ROWS,
  toWire,
  type Answer,
  type ConnectPayload,
  type CoreNote,
  type GatewayBatch,
  type GatewayNote,
  type GatewayRequest,
} from './ipc.messages.js';

/** how often the raw-frame feed's interest is compared and, when it changed, pushed */
export const INTEREST_EVERY_MS = 500;

export interface CoreLinkOptions {
  /** Unix socket path, or a TCP port (0: a free one, see CoreLink.port) and address */
  path?: string;
  port?: number;
  host?: string;
  /** PEM certificate and key: TLS on the TCP port */
  tls?: { cert: Buffer; key: Buffer };
  /** what a gateway process must present */
  secret: string;
  directory: DeviceDirectory;
  ingest: IngestService;
  commands: CommandsService;
  events: EventBus;
  frames: FrameTap;
  logger: Logger;
  /** the core's clock: fix times a gateway sends are checked against it (default: the system's) */
  clock?: Clock;
}

export interface CoreLink {
  /** the TCP port it listens on (undefined on a Unix socket) */
  readonly port: number | undefined;
  /** Has the gateway process that holds the device's connection deliver its queued commands: whether one does. */
  deliverCommands(deviceId: string): boolean;
  /** the devices connected to a gateway process */
  connectedDevices(): string[];
  /** the pid of the gateway process that holds the device's connection */
  holderOf(deviceId: string): number | undefined;
  /** Calls `fn` with the ports of each gateway process that says hello (after its listeners are bound). */
  onHello(fn: (ports: Record<string, number>, payload: ConnectPayload) => void): void;
  /** Calls `fn` when a gateway process says a device connected to it (main.ts drops its connection on the core's other side). */
  onOnline(fn: (deviceId: string) => void): void;
  /** Calls `fn` when a gateway process says a device's connection to it ended (GET /api/lastLocations: offline at once). */
  onOffline(fn: (deviceId: string) => void): void;
  /** Has the gateway process holding the device's connection close it, and forgets its datagrams: the device connected elsewhere. */
  drop(deviceId: string): void;
  /** how many gateway processes are connected now */
  connections(): number;
  /** messages (net-ipc's, each a request, a note or a batch) received from gateway processes since it started */
  messagesReceived(): number;
  /** what each gateway process last reported of its listeners (one that is gone: live false, its counts kept) */
  trackerCounts(): { protocol: string; counts: TrackerSnapshot; live: boolean }[];
  close(): Promise<void>;
}

/** equal-length digests, compared in constant time */
const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** times a free port is picked again when another process bound it first */
const PORT_ATTEMPTS = 20;

/**
 * Starts the link. Port 0 takes a free port: net-ipc listens only on a port it is given, so one
 * is picked and, should another process bind it first, another.
 */
export async function startCoreLink(o: CoreLinkOptions): Promise<CoreLink> {
  if (o.path !== undefined || o.port !== 0) return open(o);
  for (let attempt = 1; ; attempt++) {
    try {
      return await open({ ...o, port: await freeTcpPort(o.host ?? '127.0.0.1') });
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'EADDRINUSE' || attempt >= PORT_ATTEMPTS) throw e;
    }
  }
}

/** the address the core's own gateway processes reach it on */
export const LOCAL_LINK_HOST = '127.0.0.1';

/**
 * The link of the core's own gateway processes (docs/scaling.md "Scaling"): TCP on the loopback address, on
 * a free port, and the address they connect to; whoever connects must present the secret. Not a
 * Unix socket: one takes at most about 200 KB from its writer, so the rest of a gateway process's
 * batch (300 KB to 1 MB under load) stayed in that process until its event loop turned again,
 * while the core waited for the whole message (BENCHMARKS.md); loopback TCP takes it at once.
 */
export async function startLocalCoreLink(
  o: Omit<CoreLinkOptions, 'path' | 'port' | 'host' | 'tls'>,
): Promise<{ link: CoreLink; address: { host: string; port: number } }> {
  const link = await startCoreLink({ ...o, host: LOCAL_LINK_HOST, port: 0 });
  return { link, address: { host: LOCAL_LINK_HOST, port: link.port! } };
}

/** What the link keeps of its gateway processes, shared by the handlers below. */
interface LinkState {
  o: CoreLinkOptions;
  clock: Clock;
  secret: Buffer;
  /** the gateway processes that presented the secret */
  authenticated: Map<Connection, ConnectPayload>;
  holders: LinkHolders<Connection>;
  /** refused connections (a wrong secret, what the guard closes): anyone who reaches the port can make them, so their lines are bounded */
  refusals: LogBudget;
  /** each accepted socket's guard (link-guard.ts), raised once it presents the secret */
  guards: WeakMap<object, LinkGuard>;
  hellos: ((ports: Record<string, number>, payload: ConnectPayload) => void)[];
  onlines: ((deviceId: string) => void)[];
  offlines: ((deviceId: string) => void)[];
  /** each gateway process's last counts, by the source id it reports under (a process that reconnects replaces its own) */
  reported: Map<string, { c: Connection | undefined; trackers: Record<string, TrackerSnapshot> }>;
  /** the raw-frame feed's interest, as last pushed */
  interest: ReturnType<FrameTap['interest']>;
  received: number;
}

const send = (c: Connection, note: CoreNote) => void c.send(note).catch(() => undefined);
const nowMs = (s: LinkState) => s.clock.now().getTime();

async function open(o: CoreLinkOptions): Promise<CoreLink> {
  // Nagle off: requests and answers are small messages that must not wait for the peer's ACK.
  const server = new Server(
    o.path
      ? { path: o.path }
      : {
          port: o.port,
          ...(o.host && { listenOptions: { host: o.host } }),
          tls: o.tls !== undefined,
          options: { noDelay: true, ...(o.tls && { cert: o.tls.cert, key: o.tls.key }) },
        },
  );
  const s: LinkState = {
    o,
    clock: o.clock ?? systemClock,
    secret: digest(o.secret),
    authenticated: new Map(),
    holders: new LinkHolders(),
    guards: new WeakMap(),
    refusals: new LogBudget({
      ...LISTENER_LOG,
      onSuppressed: (count) => o.logger.warn({ count }, 'gateway link connections refused, not logged one by one'),
    }),
    hellos: [],
    onlines: [],
    offlines: [],
    reported: new Map(),
    interest: o.frames.interest(),
    received: 0,
  };
  server.on('error', (e) => o.logger.debug({ err: (e as unknown as Error).message }, 'gateway link error'));
  server.on('connect', (c, payload?: ConnectPayload) => onConnect(s, c, payload));
  server.on('disconnect', (c) => onDisconnect(s, c));
  const reply = batchReplies(s);
  server.on('message', (m: GatewayNote | GatewayBatch, c) => onMessage(s, m, c, reply));
  server.on('request', (m: GatewayRequest, respond, c) => {
    s.received++;
    if (!s.authenticated.has(c)) {
      void respond({ ok: false, error: { message: 'not authenticated' } } satisfies Answer).catch(() => undefined);
      return;
    }
    answer(s, m, c)
      .then(
        (value) => respond({ ok: true, value } satisfies Answer),
        (e: unknown) => respond({ ok: false, error: toWire(e) } satisfies Answer),
      )
      .catch(() => undefined); // the gateway process is gone: it acknowledged nothing
  });
  const stopPushing = pushChanges(s);
  await listenGuarded(server, s).catch((e: unknown) => {
    stopPushing();
    throw e;
  });
  return linkOf(s, server, stopPushing);
}

function onConnect(s: LinkState, c: Connection, payload?: ConnectPayload): void {
  const guard = s.guards.get(c.connection as object);
  const socket = c.connection;
  if (typeof payload?.secret !== 'string' || !timingSafeEqual(digest(payload.secret), s.secret)) {
    if (s.refusals.take(nowMs(s)))
      s.o.logger.warn({ remote: socket?.remoteAddress ?? 'local' }, 'gateway process refused: wrong secret');
    // the guard reads nothing more of it; once the gateway has been told why, it is gone (net-ipc only ends its side)
    void c.close('unauthorized').finally(() => socket?.destroy());
    return;
  }
  // the guard refuses a hello that asked for what the link does not take (compression, JSON)
  if (!guard) void c.close('unauthorized');
  if (!guard?.trust()) return;
  s.authenticated.set(c, { pid: payload.pid, worker: payload.worker, secret: '' });
  s.o.logger.info({ pid: payload.pid, worker: payload.worker }, 'gateway process connected');
  send(c, { t: 'interest', ...s.interest });
}

function onDisconnect(s: LinkState, c: Connection): void {
  const who = s.authenticated.get(c);
  s.authenticated.delete(c);
  const dropped = s.holders.forget(c);
  for (const r of s.reported.values()) if (r.c === c) r.c = undefined;
  if (who) s.o.logger.info({ pid: who.pid, worker: who.worker, devices: dropped }, 'gateway process disconnected');
}

type Reply = (c: Connection, id: number, a: Answer) => void;

function onMessage(s: LinkState, m: GatewayNote | GatewayBatch, c: Connection, reply: Reply): void {
  s.received++;
  if (!s.authenticated.has(c)) return;
  if (m.t !== 'batch') return onNote(s, m, c);
  if (!Array.isArray(m.items)) return;
  for (const item of m.items) {
    if (!item || typeof item !== 'object') continue;
    if ('note' in item) onNote(s, item.note, c);
    else if (typeof item.id === 'number' && item.request) {
      answer(s, item.request, c).then(
        (value) => reply(c, item.id, { ok: true, value }),
        (e: unknown) => reply(c, item.id, { ok: false, error: toWire(e) }),
      );
    }
  }
}

/** Answers of batched requests not yet sent, per gateway process: they leave together at the end of this turn. */
function batchReplies(s: LinkState): Reply {
  const replies = new Map<Connection, [number, Answer][]>();
  const flush = () => {
    for (const [c, answers] of replies) if (s.authenticated.has(c)) send(c, { t: 'answers', answers });
    replies.clear();
  };
  return (c, id, a) => {
    let list = replies.get(c);
    if (!list) {
      if (replies.size === 0) setImmediate(flush);
      list = [];
      replies.set(c, list);
    }
    list.push([id, a]);
  };
}

function onNote(s: LinkState, m: GatewayNote, c: Connection): void {
  switch (m?.t) {
    case 'touch':
      // the protocol is recorded as the device's: a protocol's name, not whatever a gateway sends
      if (typeof m.protocol !== 'string' || !PROTOCOL_NAME.test(m.protocol)) return;
      s.o.directory
        .find(m.deviceId)
        .then((d) => d && s.o.directory.touch(d, m.protocol))
        .catch(() => undefined);
      return;
    case 'frame':
      s.o.frames.offer(m.accountId, m.deviceId, m.frame);
      return;
    case 'online':
      online(s, m.deviceId, c);
      // a live connection, the newest the device has: whatever it held on the core's other side is stale
      for (const fn of s.onlines) fn(m.deviceId);
      return;
    case 'offline':
      s.holders.offline(m.deviceId, c);
      for (const fn of s.offlines) fn(m.deviceId);
      return;
    case 'heard':
      s.holders.heardBy(m.deviceId, c, nowMs(s));
      return;
    case 'counts':
      if (
        typeof m.source === 'string' &&
        m.trackers &&
        typeof m.trackers === 'object' &&
        (s.reported.has(m.source) || s.reported.size < 10_000)
      )
        s.reported.set(m.source, { c, trackers: m.trackers });
      return;
  }
}

function online(s: LinkState, deviceId: string, c: Connection): void {
  // the tracker reconnected to another gateway process: its old connection there is stale
  const before = s.holders.online(deviceId, c);
  if (before) send(before, { t: 'drop', deviceId });
}

async function answer(s: LinkState, m: GatewayRequest, c: Connection): Promise<unknown> {
  switch (m.t) {
    case 'store':
      return store(s, m);
    case 'resolve': {
      const alternatives = Array.isArray(m.alternatives)
        ? m.alternatives.filter((a): a is string => typeof a === 'string').slice(0, 4)
        : undefined;
      const r = await s.o.directory.resolve(m.identifier, m.protocol, m.remote, alternatives);
      // what its listeners use, nothing of the account's contacts or secrets (an edge gateway in a DMZ, too)
      return r.status === 'ok'
        ? ({ status: 'ok', device: gatewayDevice(r.device) } satisfies Resolution<GatewayDevice>)
        : r;
    }
    case 'command': {
      if (!COMMAND_CALLS.includes(m.call)) throw new Error(`unknown command call ${String(m.call)}`);
      const fn = s.o.commands[m.call] as (...args: unknown[]) => Promise<unknown>;
      return fn.apply(s.o.commands, m.args);
    }
    case 'hello': {
      const who = s.authenticated.get(c)!;
      for (const deviceId of m.online) online(s, deviceId, c);
      if (m.ports) for (const fn of s.hellos) fn(m.ports, who);
      return undefined;
    }
  }
}

/** A gateway's `store` request, checked, through the one ingest path: the one place the link calls the ingest. */
async function store(s: LinkState, m: StoreRequest): Promise<undefined> {
  const now = nowMs(s);
  checkStore(m, now);
  const device = await s.o.directory.find(m.deviceId);
  // deleted since the gateway resolved it: nothing acknowledged; the resend finds it unknown
  if (!device) throw new Error(`device ${m.deviceId} no longer exists`);
  const { rows, alerts } = checkedContent(s.o.logger, m, device.id, now);
  await s.o.ingest.commit(device, m.protocol, { rows, alerts });
  return undefined;
}

/** Tells every gateway process when a device changed, and when the raw-frame feed's interest did; returns what stops it. */
function pushChanges(s: LinkState): () => void {
  const all = (note: CoreNote) => {
    for (const c of s.authenticated.keys()) send(c, note);
  };
  const offChanged = s.o.events.onDeviceChanged((deviceId) => all({ t: 'deviceChanged', deviceId }));
  let interestKey = JSON.stringify(s.interest);
  const interestTimer = setInterval(() => {
    const now = s.o.frames.interest();
    const key = JSON.stringify(now);
    if (key === interestKey) return;
    s.interest = now;
    interestKey = key;
    all({ t: 'interest', ...s.interest });
  }, INTEREST_EVERY_MS);
  interestTimer.unref();
  return () => {
    offChanged();
    clearInterval(interestTimer);
  };
}

/** Starts listening, each socket under its guard (link-guard.ts) before net-ipc sees it. */
function listenGuarded(server: Server, s: LinkState): Promise<void> {
  const { o, refusals } = s;
  // net-ipc reports a port that cannot be bound only as an error event
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject as never);
    const started = server.start();
    // net-ipc made its server synchronously: the guard sees each socket before net-ipc does
    const raw = (server as unknown as { server: NetServer }).server;
    raw.prependListener(o.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
      const remote = socket.remoteAddress ?? 'local';
      s.guards.set(
        socket,
        guardLinkSocket(
          socket,
          (reason) => refusals.take(nowMs(s)) && o.logger.warn({ remote, reason }, 'gateway link connection closed'),
        ),
      );
    });
    // a gateway without TLS, or one that does not trust this certificate: the core's operator sees why it does not connect
    if (o.tls) {
      raw.on('tlsClientError', (e: Error & { code?: string }, socket: Socket) => {
        if (refusals.take(nowMs(s)))
          o.logger.warn(
            { remote: socket.remoteAddress ?? 'unknown', err: e.code ?? e.message },
            'gateway link: TLS handshake failed (a gateway started without --tls or TRACKGATE_GATEWAY_TLS_CA, or one that does not trust this certificate)',
          );
      });
    }
    started.then(() => {
      server.off('error', reject as never);
      resolve();
    }, reject);
  });
}

function linkOf(s: LinkState, server: Server, stopPushing: () => void): CoreLink {
  return {
    port: s.o.path ? undefined : s.o.port,
    deliverCommands(deviceId) {
      const holder = s.holders.locate(deviceId, nowMs(s));
      if (!holder) return false;
      send(holder, { t: 'deliver', deviceId });
      return true;
    },
    connectedDevices: () => s.holders.devices(),
    holderOf(deviceId) {
      const c = s.holders.holderOf(deviceId);
      return c && s.authenticated.get(c)?.pid;
    },
    onHello: (fn) => void s.hellos.push(fn),
    onOnline: (fn) => void s.onlines.push(fn),
    onOffline: (fn) => void s.offlines.push(fn),
    drop(deviceId) {
      const holder = s.holders.drop(deviceId);
      if (holder) send(holder, { t: 'drop', deviceId });
    },
    connections: () => s.authenticated.size,
    messagesReceived: () => s.received,
    trackerCounts: () =>
      [...s.reported.values()].flatMap((r) =>
        Object.entries(r.trackers).map(([protocol, counts]) => ({ protocol, counts, live: r.c !== undefined })),
      ),
    async close() {
      stopPushing();
      s.refusals.flush();
      await server.close();
    },
  };
}

/**
 * The rows and alerts of a `store` request that pass the checks of what the ingest steps make
 * (prepared.checks.ts: an edge's clock may differ from the core's, and holding the secret is no
 * licence to write anything); the others are logged, with why, and not stored.
 */
function checkedContent(
  logger: Logger,
  m: StoreRequest,
  deviceId: string,
  nowMs: number,
): { rows: SerialisedRow[]; alerts: AlertInput[] } {
  const rows: SerialisedRow[] = [];
  const dropped: string[] = [];
  for (const [fixMs, json] of m.rows) {
    const checked = preparedLocation(json, { fixMs, serverTimeMs: m.serverTime, protocol: m.protocol, nowMs });
    if (typeof checked === 'string') dropped.push(checked);
    else {
      const { latitude, longitude, speed, valid } = checked;
      rows.push(new SerialisedRow(deviceId, fixMs, m.serverTime, json, { latitude, longitude, speed, valid }));
    }
  }
  const alerts: AlertInput[] = [];
  const refusedAlerts: string[] = [];
  for (const a of m.alerts ?? []) {
    const checked = preparedAlert(a, nowMs);
    if ('alert' in checked) alerts.push(checked.alert);
    else refusedAlerts.push(checked.problem);
  }
  // one line per request, whatever a gateway sends: the first reasons and how many
  const warn = (reasons: string[], msg: string) =>
    reasons.length &&
    logger.warn(
      { deviceId, protocol: m.protocol, dropped: reasons.slice(0, LOGGED_REASONS), count: reasons.length },
      msg,
    );
  warn(dropped, 'positions that fail the checks are not stored');
  warn(refusedAlerts, 'alerts that fail the checks are not raised');
  return { rows, alerts };
}

type StoreRequest = GatewayRequest & { t: 'store' };

/** the reasons a line of dropped positions or alerts lists at most */
const LOGGED_REASONS = 20;

/** what a protocol's name is (protocols/index.ts): the core records it as the device's */
const PROTOCOL_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * Throws unless a `store` request has the shape a gateway process sends (ipc.messages.ts), and
 * nothing of it is stored (a gateway of another version, or not ours: the secret was right, the
 * data is not); what its rows and alerts hold is checked one by one (checkedContent).
 */
function checkStore(m: StoreRequest, nowMs: number): void {
  const bad = (why: string): never => {
    throw new Error(`malformed store request: ${why}`);
  };
  if (typeof m.deviceId !== 'string' || m.deviceId.length > DEVICE_ID_MAX_LENGTH)
    bad(`deviceId must be a string of at most ${DEVICE_ID_MAX_LENGTH} characters`);
  if (typeof m.protocol !== 'string' || !PROTOCOL_NAME.test(m.protocol)) bad('protocol must be the name of a protocol');
  const received = receivedTimeProblem(m.serverTime, nowMs);
  if (received) bad(received);
  if (!Array.isArray(m.rows) || m.rows.length > MAX_STORE_ROWS)
    bad(`rows must be an array of at most ${MAX_STORE_ROWS}`);
  for (const r of m.rows) {
    if (!Array.isArray(r) || r.length !== 2 || !Number.isSafeInteger(r[0]))
      bad('each row must be [fix time in epoch ms, JSON]');
    const json = r[1];
    // its content is checked row by row (checkedContent); a string that long is no location the steps make
    if (typeof json !== 'string' || json.length > MAX_LOCATION_JSON)
      bad(`each row's location must be JSON text of at most ${MAX_LOCATION_JSON} characters`);
  }
  const alerts = m.alerts ?? [];
  if (
    !Array.isArray(alerts) ||
    alerts.length > MAX_STORE_ROWS ||
    !alerts.every((a) => a !== null && typeof a === 'object' && typeof a.alertName === 'string')
  )
    bad('alerts must be alerts with a name');
}
