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
import { preparedAlert, preparedLocationProblem, receivedTimeProblem } from '../../core/ingest/prepared.checks.js';
import type { AlertInput } from '../../core/model/alert.js';
import type { CommandsService } from '../../core/commands/commands.service.js';
import type { EventBus } from '../../core/events/event-bus.js';
import type { Logger } from '../../core/logger.js';
import type { TrackerSnapshot } from '../../core/metrics/counts.js';
import type { FrameTap } from '../shared/frame-tap.js';
import { UDP_LISTEN_MS } from '../udp/udp-listener.js';
import { freeTcpPort } from '../shared/stream-server.js';
import { guardLinkSocket, type LinkGuard } from './link-guard.js';
import { LISTENER_LOG, LogBudget } from '../shared/log-budget.js';
import type { Server as NetServer, Socket } from 'node:net';
import { COMMAND_CALLS, HEARD_EVERY_MS, MAX_LOCATION_JSON, MAX_STORE_ROWS, toWire, type Answer, type ConnectPayload, type CoreNote, type GatewayBatch, type GatewayNote, type GatewayRequest } from './ipc.messages.js';

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
 * The link of the core's own gateway processes (README "Scaling"): TCP on the loopback address, on
 * a free port, and the address they connect to; whoever connects must present the secret. Not a
 * Unix socket: one takes at most about 200 KB from its writer, so the rest of a gateway process's
 * batch (300 KB to 1 MB under load) stayed in that process until its event loop turned again,
 * while the core waited for the whole message (BENCHMARKS §2f); loopback TCP takes it at once.
 */
export async function startLocalCoreLink(o: Omit<CoreLinkOptions, 'path' | 'port' | 'host' | 'tls'>): Promise<{ link: CoreLink; address: { host: string; port: number } }> {
  const link = await startCoreLink({ ...o, host: LOCAL_LINK_HOST, port: 0 });
  return { link, address: { host: LOCAL_LINK_HOST, port: link.port! } };
}

async function open(o: CoreLinkOptions): Promise<CoreLink> {
  // Nagle off: requests and answers are small messages that must not wait for the peer's ACK.
  const server = new Server(
    o.path
      ? { path: o.path }
      : { port: o.port, ...(o.host && { listenOptions: { host: o.host } }), tls: o.tls !== undefined, options: { noDelay: true, ...(o.tls && { cert: o.tls.cert, key: o.tls.key }) } },
  );
  const secret = digest(o.secret);
  const authenticated = new Map<Connection, ConnectPayload>();
  /** refused connections (a wrong secret, what the guard closes): anyone who reaches the port can make them, so their lines are bounded */
  const refusals = new LogBudget({ ...LISTENER_LOG, onSuppressed: (count) => o.logger.warn({ count }, 'gateway link connections refused, not logged one by one') });
  /** each accepted socket's guard (link-guard.ts), raised once it presents the secret */
  const guards = new WeakMap<object, LinkGuard>();
  /** device -> the gateway process that holds its live TCP connection */
  const holders = new Map<string, Connection>();
  /** UDP device -> the gateway process that last heard it, and when */
  const heard = new Map<string, { c: Connection; at: number }>();
  const hellos: ((ports: Record<string, number>, payload: ConnectPayload) => void)[] = [];
  const onlines: ((deviceId: string) => void)[] = [];
  /** each gateway process's last counts, by the source id it reports under (a process that reconnects replaces its own) */
  const reported = new Map<string, { c: Connection | undefined; trackers: Record<string, TrackerSnapshot> }>();
  const send = (c: Connection, note: CoreNote) => void c.send(note).catch(() => undefined);
  let interest = o.frames.interest();
  let interestKey = JSON.stringify(interest);

  server.on('error', (e) => o.logger.debug({ err: (e as unknown as Error).message }, 'gateway link error'));
  server.on('connect', (c, payload?: ConnectPayload) => {
    const guard = guards.get(c.connection as object);
    const socket = c.connection;
    if (typeof payload?.secret !== 'string' || !timingSafeEqual(digest(payload.secret), secret)) {
      if (refusals.take(Date.now())) o.logger.warn({ remote: socket?.remoteAddress ?? 'local' }, 'gateway process refused: wrong secret');
      // the guard reads nothing more of it; once the gateway has been told why, it is gone (net-ipc only ends its side)
      void c.close('unauthorized').finally(() => socket?.destroy());
      return;
    }
    // the guard refuses a hello that asked for what the link does not take (compression, JSON)
    if (!guard) void c.close('unauthorized');
    if (!guard?.trust()) return;
    authenticated.set(c, { pid: payload.pid, worker: payload.worker, secret: '' });
    o.logger.info({ pid: payload.pid, worker: payload.worker }, 'gateway process connected');
    send(c, { t: 'interest', ...interest });
  });
  server.on('disconnect', (c) => {
    const who = authenticated.get(c);
    authenticated.delete(c);
    let dropped = 0;
    for (const [deviceId, holder] of holders) {
      if (holder === c) {
        holders.delete(deviceId);
        dropped++;
      }
    }
    for (const [deviceId, h] of heard) if (h.c === c) heard.delete(deviceId);
    for (const r of reported.values()) if (r.c === c) r.c = undefined;
    if (who) o.logger.info({ pid: who.pid, worker: who.worker, devices: dropped }, 'gateway process disconnected');
  });

  let received = 0;
  server.on('message', (m: GatewayNote | GatewayBatch, c) => {
    received++;
    if (!authenticated.has(c)) return;
    if (m.t === 'batch') {
      if (!Array.isArray(m.items)) return;
      for (const item of m.items) {
        if (!item || typeof item !== 'object') continue;
        if ('note' in item) onNote(item.note, c);
        else if (typeof item.id === 'number' && item.request) {
          answer(item.request, c).then(
            (value) => reply(c, item.id, { ok: true, value }),
            (e: unknown) => reply(c, item.id, { ok: false, error: toWire(e) }),
          );
        }
      }
      return;
    }
    onNote(m, c);
  });

  /** answers of batched requests not yet sent, per gateway process: they leave together at the end of this turn */
  const replies = new Map<Connection, [number, Answer][]>();
  function reply(c: Connection, id: number, a: Answer): void {
    let list = replies.get(c);
    if (!list) {
      if (replies.size === 0) setImmediate(flushReplies);
      list = [];
      replies.set(c, list);
    }
    list.push([id, a]);
  }
  function flushReplies(): void {
    for (const [c, answers] of replies) if (authenticated.has(c)) send(c, { t: 'answers', answers });
    replies.clear();
  }

  function onNote(m: GatewayNote, c: Connection): void {
    switch (m?.t) {
      case 'touch':
        // the protocol is recorded as the device's: a protocol's name, not whatever a gateway sends
        if (typeof m.protocol !== 'string' || !PROTOCOL_NAME.test(m.protocol)) return;
        o.directory.find(m.deviceId).then((d) => d && o.directory.touch(d, m.protocol)).catch(() => undefined);
        return;
      case 'frame':
        o.frames.offer(m.accountId, m.deviceId, m.frame);
        return;
      case 'online':
        online(m.deviceId, c);
        // a live connection, the newest the device has: whatever it held on the core's other side is stale
        for (const fn of onlines) fn(m.deviceId);
        return;
      case 'offline':
        if (holders.get(m.deviceId) === c) holders.delete(m.deviceId);
        return;
      case 'heard':
        if (heard.size > 100_000) heard.clear();
        heard.set(m.deviceId, { c, at: Date.now() });
        return;
      case 'counts':
        if (typeof m.source === 'string' && m.trackers && typeof m.trackers === 'object' && (reported.has(m.source) || reported.size < 10_000)) reported.set(m.source, { c, trackers: m.trackers });
        return;
    }
  }

  function online(deviceId: string, c: Connection): void {
    const before = holders.get(deviceId);
    // the tracker reconnected to another gateway process: its old connection there is stale
    if (before && before !== c) send(before, { t: 'drop', deviceId });
    holders.set(deviceId, c);
  }

  server.on('request', (m: GatewayRequest, respond, c) => {
    received++;
    if (!authenticated.has(c)) {
      void respond({ ok: false, error: { message: 'not authenticated' } } satisfies Answer).catch(() => undefined);
      return;
    }
    answer(m, c).then(
      (value) => respond({ ok: true, value } satisfies Answer),
      (e: unknown) => respond({ ok: false, error: toWire(e) } satisfies Answer),
    ).catch(() => undefined); // the gateway process is gone: it acknowledged nothing
  });

  async function answer(m: GatewayRequest, c: Connection): Promise<unknown> {
    switch (m.t) {
      case 'store': {
        const now = clock.now().getTime();
        checkStore(m, now);
        const device = await o.directory.find(m.deviceId);
        // deleted since the gateway resolved it: nothing acknowledged; the resend finds it unknown
        if (!device) throw new Error(`device ${m.deviceId} no longer exists`);
        const { rows, alerts } = checkedContent(m, device.id, now);
        await o.ingest.commit(device, m.protocol, { rows, alerts });
        return undefined;
      }
      case 'resolve': {
        const alternatives = Array.isArray(m.alternatives) ? m.alternatives.filter((a): a is string => typeof a === 'string').slice(0, 4) : undefined;
        const r = await o.directory.resolve(m.identifier, m.protocol, m.remote, alternatives);
        // what its listeners use, nothing of the account's contacts or secrets (an edge gateway in a DMZ, too)
        return r.status === 'ok' ? ({ status: 'ok', device: gatewayDevice(r.device) } satisfies Resolution<GatewayDevice>) : r;
      }
      case 'command': {
        if (!COMMAND_CALLS.includes(m.call)) throw new Error(`unknown command call ${String(m.call)}`);
        const fn = o.commands[m.call] as (...args: unknown[]) => Promise<unknown>;
        return fn.apply(o.commands, m.args);
      }
      case 'hello': {
        const who = authenticated.get(c)!;
        for (const deviceId of m.online) online(deviceId, c);
        if (m.ports) for (const fn of hellos) fn(m.ports, who);
        return undefined;
      }
    }
  }

  const clock = o.clock ?? systemClock;

  /**
   * The rows and alerts of a `store` request that pass the checks of what the ingest steps make
   * (prepared.checks.ts: an edge's clock may differ from the core's, and holding the secret is no
   * licence to write anything); the others are logged, with why, and not stored.
   */
  function checkedContent(m: StoreRequest, deviceId: string, nowMs: number): { rows: SerialisedRow[]; alerts: AlertInput[] } {
    const rows: SerialisedRow[] = [];
    const dropped: string[] = [];
    for (const [fixMs, json] of m.rows) {
      const problem = preparedLocationProblem(json, { fixMs, serverTimeMs: m.serverTime, protocol: m.protocol, nowMs });
      if (problem) dropped.push(problem);
      else rows.push(new SerialisedRow(deviceId, fixMs, m.serverTime, json));
    }
    const alerts: AlertInput[] = [];
    const refusedAlerts: string[] = [];
    for (const a of m.alerts ?? []) {
      const checked = preparedAlert(a, nowMs);
      if ('alert' in checked) alerts.push(checked.alert);
      else refusedAlerts.push(checked.problem);
    }
    // one line per request, whatever a gateway sends: the first reasons and how many
    const warn = (reasons: string[], msg: string) => reasons.length && o.logger.warn({ deviceId, protocol: m.protocol, dropped: reasons.slice(0, LOGGED_REASONS), count: reasons.length }, msg);
    warn(dropped, 'positions that fail the checks are not stored');
    warn(refusedAlerts, 'alerts that fail the checks are not raised');
    return { rows, alerts };
  }

  const offChanged = o.events.onDeviceChanged((deviceId) => {
    for (const c of authenticated.keys()) send(c, { t: 'deviceChanged', deviceId });
  });
  const interestTimer = setInterval(() => {
    const now = o.frames.interest();
    const key = JSON.stringify(now);
    if (key === interestKey) return;
    interest = now;
    interestKey = key;
    for (const c of authenticated.keys()) send(c, { t: 'interest', ...interest });
  }, INTEREST_EVERY_MS);
  interestTimer.unref();

  // net-ipc reports a port that cannot be bound only as an error event
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject as never);
    const started = server.start();
    // net-ipc made its server synchronously: the guard sees each socket before net-ipc does
    const raw = (server as unknown as { server: NetServer }).server;
    raw.prependListener(o.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
      const remote = socket.remoteAddress ?? 'local';
      guards.set(socket, guardLinkSocket(socket, (reason) => refusals.take(Date.now()) && o.logger.warn({ remote, reason }, 'gateway link connection closed')));
    });
    // a gateway without TLS, or one that does not trust this certificate: the core's operator sees why it does not connect
    if (o.tls) {
      raw.on('tlsClientError', (e: Error & { code?: string }, socket: Socket) => {
        if (refusals.take(Date.now())) o.logger.warn({ remote: socket.remoteAddress ?? 'unknown', err: e.code ?? e.message }, 'gateway link: TLS handshake failed (a gateway started without --tls or TRACKGATE_GATEWAY_TLS_CA, or one that does not trust this certificate)');
      });
    }
    started.then(() => {
      server.off('error', reject as never);
      resolve();
    }, reject);
  }).catch((e: unknown) => {
    offChanged();
    clearInterval(interestTimer);
    throw e;
  });
  return {
    port: o.path ? undefined : o.port,
    deliverCommands(deviceId) {
      let holder = holders.get(deviceId);
      if (!holder) {
        // a UDP device listens a moment after its datagram; the gateway process that heard it checks exactly
        const h = heard.get(deviceId);
        if (h && Date.now() - h.at < UDP_LISTEN_MS - HEARD_EVERY_MS) holder = h.c;
      }
      if (!holder) return false;
      send(holder, { t: 'deliver', deviceId });
      return true;
    },
    connectedDevices: () => [...holders.keys()],
    holderOf(deviceId) {
      const c = holders.get(deviceId);
      return c && authenticated.get(c)?.pid;
    },
    onHello(fn) {
      hellos.push(fn);
    },
    onOnline(fn) {
      onlines.push(fn);
    },
    drop(deviceId) {
      heard.delete(deviceId);
      const holder = holders.get(deviceId);
      if (!holder) return;
      holders.delete(deviceId);
      send(holder, { t: 'drop', deviceId });
    },
    connections: () => authenticated.size,
    messagesReceived: () => received,
    trackerCounts: () => [...reported.values()].flatMap((r) => Object.entries(r.trackers).map(([protocol, counts]) => ({ protocol, counts, live: r.c !== undefined }))),
    async close() {
      offChanged();
      clearInterval(interestTimer);
      refusals.flush();
      await server.close();
    },
  };
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
  if (typeof m.deviceId !== 'string' || m.deviceId.length > DEVICE_ID_MAX_LENGTH) bad(`deviceId must be a string of at most ${DEVICE_ID_MAX_LENGTH} characters`);
  if (typeof m.protocol !== 'string' || !PROTOCOL_NAME.test(m.protocol)) bad('protocol must be the name of a protocol');
  const received = receivedTimeProblem(m.serverTime, nowMs);
  if (received) bad(received);
  if (!Array.isArray(m.rows) || m.rows.length > MAX_STORE_ROWS) bad(`rows must be an array of at most ${MAX_STORE_ROWS}`);
  for (const r of m.rows) {
    if (!Array.isArray(r) || r.length !== 2 || !Number.isSafeInteger(r[0])) bad('each row must be [fix time in epoch ms, JSON]');
    const json = r[1];
    // its content is checked row by row (checkedContent); a string that long is no location the steps make
    if (typeof json !== 'string' || json.length > MAX_LOCATION_JSON) bad(`each row's location must be JSON text of at most ${MAX_LOCATION_JSON} characters`);
  }
  const alerts = m.alerts ?? [];
  if (!Array.isArray(alerts) || alerts.length > MAX_STORE_ROWS || !alerts.every((a) => a !== null && typeof a === 'object' && typeof a.alertName === 'string')) bad('alerts must be alerts with a name');
}
