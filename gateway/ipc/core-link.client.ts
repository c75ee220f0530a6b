/**
 * A gateway process's end of the link to the core (ipc.messages.ts): what the tracker listeners
 * ask of the core (GatewayDeps and the command queue), answered by the core over net-ipc.
 *
 * While the core is unreachable every request fails at once (CoreUnreachable, a storage outage to
 * the listeners), so no tracker is acknowledged; the link connects again by itself, every
 * RECONNECT_MS, for as long as the process runs, and says hello again (its ports and connected
 * devices). Device records of active devices are cached for CACHE_MS, and forgotten when the core
 * says the device changed or when the link was down (a change may have been missed).
 */
import { Client } from 'net-ipc';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { isExpired, type GatewayDevice } from '../../core/model/device.js';
import type { Resolution } from '../../core/devices/device-directory.js';
import type { IngestResult } from '../../core/ingest/ingest.service.js';
import { prepareReports, warnDropped, type Prepared } from '../../core/ingest/ingest.steps.js';
import { storedJson } from '../../core/model/location.js';
import type { GatewayDeps } from '../shared/frame-handler.js';
import type { CommandQueue } from '../shared/connection-commands.js';
import { FrameTap } from '../shared/frame-tap.js';
import { withoutIpServername } from '../shared/stream-server.js';
import {
  fromWire,
  HEARD_EVERY_MS,
  MAX_BATCH_ITEMS,
  type Answer,
  type BatchItem,
  type CommandCall,
  type ConnectPayload,
  type CoreNote,
  type GatewayBatch,
  type GatewayNote,
  type GatewayRequest,
} from './ipc.messages.js';
import type { TrackerSnapshot } from '../../core/metrics/counts.js';

export const RECONNECT_MS = 500;
export const CACHE_MS = 5000;
/** longest wait for the core's answer (a submit waits for its group commit) */
export const REQUEST_TIMEOUT_MS = 30_000;
/**
 * Liveness: while the link is up it pings the core this often, and a core that has not answered
 * a ping, or a new connection's hello, within LIVENESS_TIMEOUT_MS counts as unreachable (a core
 * stopped or hung keeps its TCP connections open: without this the gateway would wait on it for
 * ever, taking new trackers it cannot acknowledge).
 */
export const LIVENESS_EVERY_MS = 5000;
export const LIVENESS_TIMEOUT_MS = 15_000;
/** TLS errors that mean this gateway does not trust the certificate the core presented */
const UNTRUSTED = /CERT|SELF_SIGNED|UNABLE_TO_/;
/**
 * A device's last connection goes to the core at most this often; a frame heard meanwhile follows
 * with the next sweep (every second), so the core, which stamps a touch when it arrives and
 * writes it within LAST_CONNECTION_EVERY_MS, is at most a second late. Once a minute, the Offline
 * rule and `lastConnection` lagged up to a minute behind a device's frames.
 */
const TOUCH_EVERY_MS = 1000;

/** An answer's value, or its error thrown. */
function answered<T>(answer: Answer): T {
  if (!answer.ok) throw fromWire(answer.error);
  return answer.value as T;
}

/** The core does not answer: nothing is acknowledged (a storage outage, to the listeners: the tracker resends). */
export class CoreUnreachable extends Error {
  readonly code = 'ECONNREFUSED';
  constructor(reason: string) {
    super(`the core does not answer (${reason}): nothing acknowledged`);
    this.name = 'CoreUnreachable';
  }
}

/** The core took the connection but answers nothing (stopped, hung): the link is dropped and opened again. */
class HungCore extends Error {}

export interface CoreLinkClientOptions {
  /** the core's host and port, or its Unix socket path */
  path?: string;
  host?: string;
  port?: number;
  /** TLS to the core's TCP port, trusting `ca` (PEM) when given, else the system's authorities */
  tls?: { ca?: string };
  secret: string;
  worker?: number;
  clock: Clock;
  logger: Logger;
  /** what hello tells the core after each connection */
  hello(): { ports: Record<string, number> | null; online: string[] };
  /** the core queued a command for a device connected here */
  onDeliver(deviceId: string): void;
  /** the device connected to another gateway process: close its connection here */
  onDrop(deviceId: string): void;
  /** how often what it remembers is swept (default CACHE_MS) */
  forgetEveryMs?: number;
}

export interface CoreLinkClient extends Pick<GatewayDeps, 'directory' | 'ingest'> {
  commands: CommandQueue;
  /** the raw-frame feed: offers only what someone at the core listens to */
  frames: FrameTap;
  /** Tells the core a device got or lost its connection here. */
  connectionChanged(deviceId: string, connected: boolean): void;
  /** Tells the core a device's datagram was handled here (at most once a second per device). */
  heard(deviceId: string): void;
  /** Reports the listeners' counts (totals since this process started) to the core, when connected. */
  reportCounts(source: string, trackers: Record<string, TrackerSnapshot>): void;
  /** Says hello again (the listeners are bound now: their ports). */
  announce(): Promise<void>;
  /** Resolves once the link is up (the first time). */
  ready(): Promise<void>;
  isUp(): boolean;
  /** What it remembers per device: cached records, last connections told, datagrams told. */
  held(): { records: number; touched: number; heard: number };
  close(): Promise<void>;
}

/** What one link keeps while it runs, shared by the parts below. */
interface LinkState {
  o: CoreLinkClientOptions;
  client: Client;
  /** the link is up: hello answered, and no liveness check failed since */
  up: boolean;
  closed: boolean;
  /** hello, the one net-ipc request of its own: how to fail it when the link goes */
  pending: Set<(e: Error) => void>;
  /** this turn's notes and requests, sent as one batch in the next check phase */
  outbox: BatchItem[];
  nextId: number;
  /** batched requests waiting for their answer, by id */
  waiting: Map<number, { resolve(a: Answer): void; reject(e: Error): void; at: number }>;
  memory: DeviceMemory;
  wanted: { accounts: Set<string>; unknown: boolean };
}

/** net-ipc's ClientStatus: 0 idle, 2 connected, 3 ready, 4 disconnected */
const READY = 3;

export function connectCoreLink(o: CoreLinkClientOptions): CoreLinkClient {
  // Nagle off on TCP: requests and answers are small messages that must not wait for the peer's ACK.
  const where = o.path
    ? { path: o.path }
    : {
        host: o.host,
        port: o.port,
        tls: o.tls !== undefined,
        options: { noDelay: true, ...(o.tls?.ca && { ca: o.tls.ca }) },
      };
  const s: LinkState = {
    o,
    client: new Client({ ...where, messagepack: true, reconnect: false }),
    up: false,
    closed: false,
    pending: new Set(),
    outbox: [],
    nextId: 1,
    waiting: new Map(),
    memory: new DeviceMemory(),
    wanted: { accounts: new Set(), unknown: false },
  };
  const connection = keepConnected(s);
  const sweep = sweepLate(s);
  const forget = setInterval(() => s.memory.forget(o.clock.now().getTime()), o.forgetEveryMs ?? CACHE_MS);
  forget.unref();
  const frames = new FrameTap();
  frames.attach({
    wants: (accountId) => (accountId === null ? s.wanted.unknown : s.wanted.accounts.has(accountId)),
    offer: (accountId, deviceId, frame) => note(s, { t: 'frame', accountId, deviceId, frame }),
  });
  connection.connect();
  return {
    directory: directoryOf(s),
    ingest: { submit: (device, protocol, reports) => submit(s, device, protocol, reports) },
    commands: commandsOf(s),
    frames,
    connectionChanged(deviceId, connected) {
      note(s, connected ? { t: 'online', deviceId } : { t: 'offline', deviceId });
    },
    announce: () => request(s, { t: 'hello', ...o.hello() }),
    heard(deviceId) {
      if (s.memory.hear(deviceId, o.clock.now().getTime())) note(s, { t: 'heard', deviceId });
    },
    reportCounts(source, trackers) {
      note(s, { t: 'counts', source, trackers });
    },
    ready: () => connection.first,
    isUp: () => s.up,
    held: () => s.memory.held(),
    async close() {
      s.closed = true;
      connection.stop();
      clearInterval(sweep);
      clearInterval(forget);
      failAll(s, new CoreUnreachable('closing'));
      await s.client.close().catch(() => false);
    },
  };
}

/**
 * The connection to the core: opened, said hello on, watched (liveness), and opened again every
 * RECONNECT_MS once it goes; why it would not come up is said once per cause.
 */
function keepConnected(s: LinkState): { connect(): void; stop(): void; first: Promise<void> } {
  const { o, client } = s;
  const payload: ConnectPayload = {
    secret: o.secret,
    pid: process.pid,
    ...(o.worker !== undefined && { worker: o.worker }),
  };
  let retry: NodeJS.Timeout | undefined;
  let lastError = '';
  let firstUp: () => void;
  const first = new Promise<void>((r) => (firstUp = r));
  /** this connection got as far as TCP (or TLS) connected; whether the link was up when it went */
  let reached = false;
  let wasUp = false;
  /** when this connection was opened: a core that leaves it without an answer for LIVENESS_TIMEOUT_MS is hung */
  let connectedAt = 0;
  const say = sayOnce(o.logger);
  client.on('error', (e) => {
    const message = (e as unknown as Error).message ?? String(e);
    if (message !== lastError) o.logger.debug({ err: message }, 'core link error');
    lastError = message;
  });
  client.on('status', (status: number) => {
    if (status === 2) reached = true;
    if (status !== 4) return;
    if (s.up) o.logger.warn('core link lost: acknowledging nothing until it is back');
    wasUp = s.up;
    s.up = false;
    s.memory.linkLost();
    failAll(s, new CoreUnreachable('link lost'));
  });
  client.on('close', (reason?: unknown) => {
    if (!wasUp && !s.closed) explain(reason, { host: o.host, tls: o.tls !== undefined, reached }, say);
    wasUp = false;
    schedule();
  });
  client.on('ready', () => {
    lastError = '';
    const hello = o.hello();
    direct(s, { t: 'hello', ...hello })
      .then(() => {
        s.up = true;
        say.clear();
        o.logger.info({ devices: hello.online.length }, 'core link up');
        firstUp();
      })
      .catch((e: Error) => {
        say('hello', 'warn', `hello refused (${e.message})`);
        client.destroy();
        schedule();
      });
  });
  client.on('message', (m: CoreNote) => onNote(s, m));
  function connect(): void {
    if (s.closed) return;
    reached = false;
    connectedAt = performance.now();
    // TLS to a core named by its IP address (--core 10.0.0.5:5100): no ServerName, which Node warns about
    const opened = o.tls ? withoutIpServername(() => client.connect(payload)) : client.connect(payload);
    opened.catch(() => undefined);
  }
  function schedule(): void {
    if (s.closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      // net-ipc lets a client connect again only once it is idle (0) after a close
      if (client.status === 0) connect();
      else schedule();
    }, RECONNECT_MS);
  }
  const liveness = watchLiveness(s, () => connectedAt, say);
  return {
    connect,
    first,
    stop() {
      clearTimeout(retry);
      clearInterval(liveness);
    },
  };
}

type Say = ((cause: string, level: 'warn' | 'error', message: string) => void) & { clear(): void };

/** why the link is not up, as said: each cause is logged once (not at every retry) until the link is up */
function sayOnce(logger: Logger): Say {
  const said = new Set<string>();
  const say = (cause: string, level: 'warn' | 'error', message: string) => {
    if (said.has(cause)) return;
    said.add(cause);
    logger[level](`core link: ${message}; trying again`);
  };
  return Object.assign(say, { clear: () => said.clear() });
}

/** Says why a connection closed before the link was up, in the words of the setting to change. */
function explain(reason: unknown, link: { host?: string; tls: boolean; reached: boolean }, say: Say): void {
  const code = typeof (reason as { code?: unknown })?.code === 'string' ? (reason as { code: string }).code : undefined;
  const message = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : '';
  if (reason === 'unauthorized')
    say('secret', 'error', "the core refused this gateway: its TRACKGATE_GATEWAY_SECRET is not the core's");
  else if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    say(
      code,
      'error',
      `the core's TLS certificate does not name ${link.host} (${message}): connect with --core to a name the certificate holds, or give the core a certificate for this one`,
    );
  else if (code && UNTRUSTED.test(code))
    say(
      code,
      'error',
      `this gateway does not trust the core's TLS certificate (${code}: ${message}): set TRACKGATE_GATEWAY_TLS_CA to the core's certificate file (its TRACKGATE_GATEWAY_TLS_CERT) or to the authority that signed it`,
    );
  // a plain link answers a TLS hello with its own bytes (EPROTO), or the core's guard closes it at once
  else if (link.tls && (code === 'EPROTO' || /wrong version number|before secure TLS connection/i.test(message)))
    say(
      'tls-plain',
      'error',
      `the core does not answer TLS on its link port (${message}): give the core TRACKGATE_GATEWAY_TLS_CERT and TRACKGATE_GATEWAY_TLS_KEY, or start this gateway without --tls and TRACKGATE_GATEWAY_TLS_CA; and check that the port is the core's TRACKGATE_GATEWAY_LINK_PORT`,
    );
  else if (reason instanceof HungCore) say('hung', 'error', message);
  else if (code) say(code, 'warn', `cannot reach the core (${message || code})`);
  else if (link.reached && !link.tls)
    say(
      'closed',
      'error',
      "the core closed the connection without answering: if its link uses TLS (TRACKGATE_GATEWAY_TLS_CERT), start this gateway with --tls or TRACKGATE_GATEWAY_TLS_CA; and check that the port is the core's TRACKGATE_GATEWAY_LINK_PORT",
    );
  else if (link.reached)
    say(
      'closed',
      'error',
      "the core closed the connection without answering: check that the port is the core's TRACKGATE_GATEWAY_LINK_PORT",
    );
}

/** Liveness (LIVENESS_EVERY_MS): a link up pings the core; one being opened must be up in time. */
function watchLiveness(s: LinkState, connectedAt: () => number, say: Say): NodeJS.Timeout {
  const { client } = s;
  /** Drops a connection the core no longer answers on (the link is lost: nothing is acknowledged) and opens another. */
  const hung = (why: string) => {
    const lost = s.up;
    client.destroy(new HungCore(why));
    // net-ipc reports the close on its next turn; the link counts as lost from now
    if (lost) say('hung', 'error', why);
  };
  let pinging = false;
  const liveness = setInterval(() => {
    if (s.closed || client.status === 0 || client.status === 4) return;
    if (!s.up) {
      if (performance.now() - connectedAt() >= LIVENESS_TIMEOUT_MS)
        hung(
          `the core took the connection but has not answered in ${LIVENESS_TIMEOUT_MS / 1000} s (is it stopped or hung?)`,
        );
      return;
    }
    if (pinging) return;
    pinging = true;
    const connection = client.connection;
    client.ping(undefined, LIVENESS_TIMEOUT_MS).then(
      () => (pinging = false),
      () => {
        pinging = false;
        if (client.connection === connection && s.up)
          hung(
            `the core has not answered for ${LIVENESS_TIMEOUT_MS / 1000} s (is it stopped or hung?): acknowledging nothing until it answers`,
          );
      },
    );
  }, LIVENESS_EVERY_MS);
  liveness.unref();
  return liveness;
}

function onNote(s: LinkState, m: CoreNote): void {
  switch (m.t) {
    case 'answers':
      for (const [id, a] of m.answers) {
        const w = s.waiting.get(id);
        if (!w) continue;
        s.waiting.delete(id);
        w.resolve(a);
      }
      return;
    case 'deliver':
      return s.o.onDeliver(m.deviceId);
    case 'drop':
      return s.o.onDrop(m.deviceId);
    case 'deviceChanged':
      s.memory.changed(m.deviceId);
      return;
    case 'interest':
      s.wanted = { accounts: new Set(m.accounts), unknown: m.unknown };
      return;
  }
}

/** A net-ipc request of its own (hello: the link is not up before its answer). */
async function direct<T>(s: LinkState, m: GatewayRequest): Promise<T> {
  // net-ipc would hold a request while it reconnects; the listeners must not wait
  if (s.client.status !== READY || s.closed) throw new CoreUnreachable('not connected');
  const answer = await new Promise<Answer<T>>((resolve, reject) => {
    const fail = (e: Error) => {
      s.pending.delete(fail);
      reject(e);
    };
    s.pending.add(fail);
    s.client.request(m, REQUEST_TIMEOUT_MS).then(
      (a: Answer<T>) => {
        s.pending.delete(fail);
        resolve(a);
      },
      (e: unknown) => fail(new CoreUnreachable(typeof e === 'string' ? e : (e as Error).message)),
    );
  });
  return answered<T>(answer);
}

/**
 * A request in this turn's batch (ipc.messages.ts), answered under its id. Not an async
 * function: one keeps its parameters reachable until it returns, and a `store` request's rows
 * (their JSON) would stay in memory until the commit's answer, promoted out of the young
 * generation with every request waiting for it.
 */
function request<T>(s: LinkState, m: GatewayRequest): Promise<T> {
  if (s.client.status !== READY || s.closed) return Promise.reject(new CoreUnreachable('not connected'));
  return new Promise<Answer>((resolve, reject) => {
    const id = s.nextId++;
    s.waiting.set(id, { resolve, reject, at: performance.now() });
    enqueue(s, { id, request: m });
  }).then(answered<T>);
}

function note(s: LinkState, m: GatewayNote): void {
  if (s.client.status !== READY) return;
  enqueue(s, { note: m });
}

function enqueue(s: LinkState, item: BatchItem): void {
  s.outbox.push(item);
  if (s.outbox.length === 1) setImmediate(() => flush(s));
  else if (s.outbox.length >= MAX_BATCH_ITEMS) flush(s);
}

function flush(s: LinkState): void {
  if (s.outbox.length === 0) return;
  const items = s.outbox;
  s.outbox = [];
  const failRequests = (e: Error) => {
    for (const item of items) {
      if (!('id' in item)) continue;
      const w = s.waiting.get(item.id);
      if (!w) continue;
      s.waiting.delete(item.id);
      w.reject(e);
    }
  };
  if (s.client.status !== READY || s.closed) return failRequests(new CoreUnreachable('not connected'));
  s.client
    .send({ t: 'batch', items } satisfies GatewayBatch)
    .catch((e: unknown) => failRequests(new CoreUnreachable(typeof e === 'string' ? e : (e as Error).message)));
}

/** Fails every request waiting (the link is gone, or this process closes it). */
function failAll(s: LinkState, e: Error): void {
  for (const fail of [...s.pending]) fail(e);
  const all = [...s.waiting.values()];
  s.waiting.clear();
  for (const w of all) w.reject(e);
}

/** Every second: the touches held back go, and a request the core never answers (it is stuck, or the answer was lost) fails after REQUEST_TIMEOUT_MS. */
function sweepLate(s: LinkState): NodeJS.Timeout {
  const sweep = setInterval(
    () => {
      const now = s.o.clock.now().getTime();
      for (const [deviceId, protocol] of s.memory.touchesDue()) sendTouch(s, deviceId, protocol, now);
      const late = performance.now() - REQUEST_TIMEOUT_MS;
      for (const [id, w] of s.waiting) {
        if (w.at > late) continue;
        s.waiting.delete(id);
        w.reject(new CoreUnreachable('no answer in time'));
      }
    },
    Math.min(TOUCH_EVERY_MS, REQUEST_TIMEOUT_MS),
  );
  sweep.unref();
  return sweep;
}

function sendTouch(s: LinkState, deviceId: string, protocol: string, now: number): void {
  s.memory.touched.set(deviceId, { at: now, protocol });
  note(s, { t: 'touch', deviceId, protocol });
}

function directoryOf(s: LinkState): CoreLinkClient['directory'] {
  const { memory, o } = s;
  return {
    async resolve(identifier, protocol, remote, alternatives) {
      const now = o.clock.now().getTime();
      const hit = memory.record(identifier, now);
      if (hit) return { status: 'ok', device: hit };
      const r = await request<Resolution<GatewayDevice>>(s, {
        t: 'resolve',
        identifier,
        protocol,
        remote,
        ...(alternatives?.length && { alternatives: [...alternatives] }),
      });
      if (r.status === 'ok') memory.cache.set(identifier, { at: now, device: r.device });
      else memory.cache.delete(identifier);
      return r;
    },
    touch(device, protocol) {
      const now = o.clock.now().getTime();
      if (memory.touchNow(device.id, protocol, now)) sendTouch(s, device.id, protocol, now);
      return Promise.resolve();
    },
  };
}

/**
 * The ingest steps run here and each position's JSON is made here (ipc.messages.ts `store`):
 * the core only writes, and decoded reports never cross the link. Not an async function: what
 * waits for the commit holds the rows' text, not the reports.
 */
function submit(
  s: LinkState,
  device: GatewayDevice,
  protocol: string,
  reports: Parameters<CoreLinkClient['ingest']['submit']>[2],
): Promise<IngestResult> {
  let m: GatewayRequest & { t: 'store' };
  try {
    const receivedAt = s.o.clock.now();
    const p = prepareReports(device.id, protocol, reports, receivedAt) as Prepared;
    warnDropped(s.o.logger, device.id, protocol, p.dropped);
    const rows = new Array<[number, string]>(p.rows.length);
    for (let i = 0; i < rows.length; i++) rows[i] = [p.rows[i].dateTime, storedJson(p.rows[i].location)];
    m = { t: 'store', deviceId: device.id, protocol, serverTime: receivedAt.getTime(), rows, alerts: p.alerts };
  } catch (e) {
    // a value JSON cannot hold: only this submission fails
    return Promise.reject(e);
  }
  // the listeners only wait for the commit; what was stored is the core's to show
  const done: IngestResult = { locations: [], alerts: [], dropped: [] };
  if (m.rows.length === 0 && m.alerts.length === 0) return Promise.resolve(done);
  return request(s, m).then(() => done);
}

function commandsOf(s: LinkState): CommandQueue {
  const call = <K extends CommandCall>(name: K) =>
    ((...args: unknown[]) => request(s, { t: 'command', call: name, args })) as unknown as CommandQueue[K];
  return {
    recover: call('recover'),
    next: call('next'),
    markSent: call('markSent'),
    markFailed: call('markFailed'),
    answered: call('answered'),
    unsolicited: call('unsolicited'),
  };
}

/**
 * What the link remembers per device, each map only within its time: device records (CACHE_MS),
 * last connections told (TOUCH_EVERY_MS), datagrams told (HEARD_EVERY_MS). Swept now and then: a
 * gateway process of 15,000 idle trackers held their 15,000 device records, read once at login.
 */
class DeviceMemory {
  readonly cache = new Map<string, { at: number; device: GatewayDevice }>();
  readonly touched = new Map<string, { at: number; protocol: string }>();
  /** devices heard since their last touch note, by id: the protocol of their next one (sent by the sweep) */
  private readonly touchLater = new Map<string, string>();
  private readonly heardAt = new Map<string, number>();

  /** the device record cached for `identifier`, while it is fresh and the device not expired */
  record(identifier: string, now: number): GatewayDevice | undefined {
    const hit = this.cache.get(identifier);
    return hit && now - hit.at < CACHE_MS && !isExpired(hit.device, now) ? hit.device : undefined;
  }

  /** Whether a touch note goes now; else the sweep sends it (at most one a TOUCH_EVERY_MS per device). */
  touchNow(deviceId: string, protocol: string, now: number): boolean {
    const t = this.touched.get(deviceId);
    if (!t || now - t.at >= TOUCH_EVERY_MS || t.protocol !== protocol) {
      this.touchLater.delete(deviceId);
      return true;
    }
    this.touchLater.set(deviceId, protocol);
    return false;
  }

  /** the touches held back, forgotten as they are handed out */
  touchesDue(): [string, string][] {
    const due = [...this.touchLater];
    this.touchLater.clear();
    return due;
  }

  /** Whether a datagram of the device is told to the core now (at most once a HEARD_EVERY_MS). */
  hear(deviceId: string, now: number): boolean {
    if (now - (this.heardAt.get(deviceId) ?? 0) < HEARD_EVERY_MS) return false;
    if (this.heardAt.size > 100_000) this.heardAt.clear();
    this.heardAt.set(deviceId, now);
    return true;
  }

  /** the core said the device changed */
  changed(deviceId: string): void {
    this.cache.delete(deviceId);
    this.touched.delete(deviceId);
  }

  /** the link was down: a change may have been missed */
  linkLost(): void {
    this.cache.clear();
  }

  forget(now: number): void {
    for (const [id, hit] of this.cache) if (now - hit.at >= CACHE_MS) this.cache.delete(id);
    for (const [id, t] of this.touched) if (now - t.at >= TOUCH_EVERY_MS) this.touched.delete(id);
    for (const [id, at] of this.heardAt) if (now - at >= HEARD_EVERY_MS) this.heardAt.delete(id);
  }

  held(): { records: number; touched: number; heard: number } {
    return { records: this.cache.size, touched: this.touched.size, heard: this.heardAt.size };
  }
}
