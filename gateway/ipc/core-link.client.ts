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
import { fromWire, HEARD_EVERY_MS, MAX_BATCH_ITEMS, type Answer, type BatchItem, type CommandCall, type ConnectPayload, type CoreNote, type GatewayBatch, type GatewayNote, type GatewayRequest } from './ipc.messages.js';
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

export function connectCoreLink(o: CoreLinkClientOptions): CoreLinkClient {
  // Nagle off on TCP: requests and answers are small messages that must not wait for the peer's ACK.
  const where = o.path ? { path: o.path } : { host: o.host, port: o.port, tls: o.tls !== undefined, options: { noDelay: true, ...(o.tls?.ca && { ca: o.tls.ca }) } };
  const client = new Client({ ...where, messagepack: true, reconnect: false });
  const payload: ConnectPayload = { secret: o.secret, pid: process.pid, ...(o.worker !== undefined && { worker: o.worker }) };
  /** hello, the one net-ipc request of its own: how to fail it when the link goes */
  const pending = new Set<(e: Error) => void>();
  /** this turn's notes and requests, sent as one batch in the next check phase */
  let outbox: BatchItem[] = [];
  let nextId = 1;
  /** batched requests waiting for their answer, by id */
  const waiting = new Map<number, { resolve(a: Answer): void; reject(e: Error): void; at: number }>();
  const cache = new Map<string, { at: number; device: GatewayDevice }>();
  const touched = new Map<string, { at: number; protocol: string }>();
  /** devices heard since their last touch note, by id: the protocol of their next one (sent by the sweep) */
  const touchLater = new Map<string, string>();
  const heardAt = new Map<string, number>();
  let wanted: { accounts: Set<string>; unknown: boolean } = { accounts: new Set(), unknown: false };
  let up = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let lastError = '';
  let firstUp: () => void;
  const first = new Promise<void>((r) => (firstUp = r));

  client.on('error', (e) => {
    const message = (e as unknown as Error).message ?? String(e);
    if (message !== lastError) o.logger.debug({ err: message }, 'core link error');
    lastError = message;
  });
  /** this connection got as far as TCP (or TLS) connected; whether the link was up when it went */
  let reached = false;
  let wasUp = false;
  /** when this connection was opened: a core that leaves it without an answer for LIVENESS_TIMEOUT_MS is hung */
  let connectedAt = 0;
  client.on('status', (status: number) => {
    // 2: CONNECTED, 4: DISCONNECTED (net-ipc ClientStatus)
    if (status === 2) reached = true;
    if (status !== 4) return;
    if (up) o.logger.warn('core link lost: acknowledging nothing until it is back');
    wasUp = up;
    up = false;
    cache.clear();
    failAll(new CoreUnreachable('link lost'));
  });
  /** why the link is not up, as said: each cause is logged once (not at every retry) until the link is up */
  const said = new Set<string>();
  function say(cause: string, level: 'warn' | 'error', message: string): void {
    if (said.has(cause)) return;
    said.add(cause);
    o.logger[level](`core link: ${message}; trying again`);
  }
  /** Says why a connection closed before the link was up, in the words of the setting to change. */
  function explain(reason: unknown): void {
    const code = typeof (reason as { code?: unknown })?.code === 'string' ? (reason as { code: string }).code : undefined;
    const message = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : '';
    if (reason === 'unauthorized') say('secret', 'error', "the core refused this gateway: its TRACKGATE_GATEWAY_SECRET is not the core's");
    else if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') say(code, 'error', `the core's TLS certificate does not name ${o.host} (${message}): connect with --core to a name the certificate holds, or give the core a certificate for this one`);
    else if (code && UNTRUSTED.test(code)) say(code, 'error', `this gateway does not trust the core's TLS certificate (${code}: ${message}): set TRACKGATE_GATEWAY_TLS_CA to the core's certificate file (its TRACKGATE_GATEWAY_TLS_CERT) or to the authority that signed it`);
    // a plain link answers a TLS hello with its own bytes (EPROTO), or the core's guard closes it at once
    else if (o.tls && (code === 'EPROTO' || /wrong version number|before secure TLS connection/i.test(message))) say('tls-plain', 'error', `the core does not answer TLS on its link port (${message}): give the core TRACKGATE_GATEWAY_TLS_CERT and TRACKGATE_GATEWAY_TLS_KEY, or start this gateway without --tls and TRACKGATE_GATEWAY_TLS_CA; and check that the port is the core's TRACKGATE_GATEWAY_LINK_PORT`);
    else if (reason instanceof HungCore) say('hung', 'error', message);
    else if (code) say(code, 'warn', `cannot reach the core (${message || code})`);
    else if (reached && o.tls === undefined) say('closed', 'error', "the core closed the connection without answering: if its link uses TLS (TRACKGATE_GATEWAY_TLS_CERT), start this gateway with --tls or TRACKGATE_GATEWAY_TLS_CA; and check that the port is the core's TRACKGATE_GATEWAY_LINK_PORT");
    else if (reached) say('closed', 'error', "the core closed the connection without answering: check that the port is the core's TRACKGATE_GATEWAY_LINK_PORT");
  }
  client.on('close', (reason?: unknown) => {
    if (!wasUp && !closed) explain(reason);
    wasUp = false;
    schedule();
  });
  client.on('ready', () => {
    lastError = '';
    const hello = o.hello();
    direct({ t: 'hello', ...hello })
      .then(() => {
        up = true;
        said.clear();
        o.logger.info({ devices: hello.online.length }, 'core link up');
        firstUp();
      })
      .catch((e: Error) => {
        say('hello', 'warn', `hello refused (${e.message})`);
        client.destroy();
        schedule();
      });
  });
  client.on('message', (m: CoreNote) => {
    switch (m.t) {
      case 'answers':
        for (const [id, a] of m.answers) {
          const w = waiting.get(id);
          if (!w) continue;
          waiting.delete(id);
          w.resolve(a);
        }
        return;
      case 'deliver':
        return o.onDeliver(m.deviceId);
      case 'drop':
        return o.onDrop(m.deviceId);
      case 'deviceChanged':
        cache.delete(m.deviceId);
        touched.delete(m.deviceId);
        return;
      case 'interest':
        wanted = { accounts: new Set(m.accounts), unknown: m.unknown };
        return;
    }
  });

  function connect(): void {
    if (closed) return;
    reached = false;
    connectedAt = Date.now();
    // TLS to a core named by its IP address (--core 10.0.0.5:5100): no ServerName, which Node warns about
    const opened = o.tls ? withoutIpServername(() => client.connect(payload)) : client.connect(payload);
    opened.catch(() => undefined);
  }

  // Liveness (LIVENESS_EVERY_MS): a link up pings the core; one being opened must be up in time.
  let pinging = false;
  const liveness = setInterval(() => {
    if (closed || client.status === 0 || client.status === 4) return;
    if (!up) {
      if (Date.now() - connectedAt >= LIVENESS_TIMEOUT_MS) hung(`the core took the connection but has not answered in ${LIVENESS_TIMEOUT_MS / 1000} s (is it stopped or hung?)`);
      return;
    }
    if (pinging) return;
    pinging = true;
    const connection = client.connection;
    client.ping(undefined, LIVENESS_TIMEOUT_MS).then(
      () => (pinging = false),
      () => {
        pinging = false;
        if (client.connection === connection && up) hung(`the core has not answered for ${LIVENESS_TIMEOUT_MS / 1000} s (is it stopped or hung?): acknowledging nothing until it answers`);
      },
    );
  }, LIVENESS_EVERY_MS);
  liveness.unref();
  /** Drops a connection the core no longer answers on (the link is lost: nothing is acknowledged) and opens another. */
  function hung(why: string): void {
    const lost = up;
    client.destroy(new HungCore(why));
    // net-ipc reports the close on its next turn; the link counts as lost from now
    if (lost) say('hung', 'error', why);
  }
  function schedule(): void {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      // net-ipc lets a client connect again only once it is idle (0) after a close
      if (client.status === 0) connect();
      else schedule();
    }, RECONNECT_MS);
  }

  /** A net-ipc request of its own (hello: the link is not up before its answer). */
  async function direct<T>(m: GatewayRequest): Promise<T> {
    // net-ipc would hold a request while it reconnects; the listeners must not wait
    if (client.status !== 3 || closed) throw new CoreUnreachable('not connected');
    const answer = await new Promise<Answer<T>>((resolve, reject) => {
      const fail = (e: Error) => {
        pending.delete(fail);
        reject(e);
      };
      pending.add(fail);
      client.request(m, REQUEST_TIMEOUT_MS).then(
        (a: Answer<T>) => {
          pending.delete(fail);
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
  function request<T>(m: GatewayRequest): Promise<T> {
    if (client.status !== 3 || closed) return Promise.reject(new CoreUnreachable('not connected'));
    return new Promise<Answer>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject, at: Date.now() });
      enqueue({ id, request: m });
    }).then(answered<T>);
  }

  function note(m: GatewayNote): void {
    if (client.status !== 3) return;
    enqueue({ note: m });
  }

  function enqueue(item: BatchItem): void {
    outbox.push(item);
    if (outbox.length === 1) setImmediate(flush);
    else if (outbox.length >= MAX_BATCH_ITEMS) flush();
  }

  function flush(): void {
    if (outbox.length === 0) return;
    const items = outbox;
    outbox = [];
    const failRequests = (e: Error) => {
      for (const item of items) {
        if (!('id' in item)) continue;
        const w = waiting.get(item.id);
        if (!w) continue;
        waiting.delete(item.id);
        w.reject(e);
      }
    };
    if (client.status !== 3 || closed) return failRequests(new CoreUnreachable('not connected'));
    client.send({ t: 'batch', items } satisfies GatewayBatch).catch((e: unknown) => failRequests(new CoreUnreachable(typeof e === 'string' ? e : (e as Error).message)));
  }

  /** Fails every request waiting (the link is gone, or this process closes it). */
  function failAll(e: Error): void {
    for (const fail of [...pending]) fail(e);
    const all = [...waiting.values()];
    waiting.clear();
    for (const w of all) w.reject(e);
  }

  // a request the core never answers (it is stuck, or the answer was lost) fails after REQUEST_TIMEOUT_MS
  const sweep = setInterval(() => {
    sendTouchesLater();
    const late = Date.now() - REQUEST_TIMEOUT_MS;
    for (const [id, w] of waiting) {
      if (w.at > late) continue;
      waiting.delete(id);
      w.reject(new CoreUnreachable('no answer in time'));
    }
  }, Math.min(TOUCH_EVERY_MS, REQUEST_TIMEOUT_MS));
  sweep.unref();

  function sendTouch(deviceId: string, protocol: string, now: number): void {
    touched.set(deviceId, { at: now, protocol });
    note({ t: 'touch', deviceId, protocol });
  }

  function sendTouchesLater(): void {
    const now = o.clock.now().getTime();
    for (const [deviceId, protocol] of touchLater) sendTouch(deviceId, protocol, now);
    touchLater.clear();
  }

  // Forgets what no lookup or note may use any more (each map answers only within its time): a
  // gateway process of 15,000 idle trackers held their 15,000 device records, read once at login.
  const forget = setInterval(() => {
    const now = o.clock.now().getTime();
    for (const [id, hit] of cache) if (now - hit.at >= CACHE_MS) cache.delete(id);
    for (const [id, t] of touched) if (now - t.at >= TOUCH_EVERY_MS) touched.delete(id);
    for (const [id, at] of heardAt) if (now - at >= HEARD_EVERY_MS) heardAt.delete(id);
  }, o.forgetEveryMs ?? CACHE_MS);
  forget.unref();

  const directory: CoreLinkClient['directory'] = {
    async resolve(identifier, protocol, remote, alternatives) {
      const hit = cache.get(identifier);
      const now = o.clock.now().getTime();
      if (hit && now - hit.at < CACHE_MS && !isExpired(hit.device, now)) return { status: 'ok', device: hit.device };
      const r = await request<Resolution<GatewayDevice>>({ t: 'resolve', identifier, protocol, remote, ...(alternatives?.length && { alternatives: [...alternatives] }) });
      if (r.status === 'ok') cache.set(identifier, { at: now, device: r.device });
      else cache.delete(identifier);
      return r;
    },
    touch(device, protocol) {
      const now = o.clock.now().getTime();
      const t = touched.get(device.id);
      if (!t || now - t.at >= TOUCH_EVERY_MS || t.protocol !== protocol) {
        touchLater.delete(device.id);
        sendTouch(device.id, protocol, now);
      } else touchLater.set(device.id, protocol);
      return Promise.resolve();
    },
  };

  const ingest: CoreLinkClient['ingest'] = {
    /**
     * The ingest steps run here and each position's JSON is made here (ipc.messages.ts `store`):
     * the core only writes, and decoded reports never cross the link. Not an async function: what
     * waits for the commit holds the rows' text, not the reports.
     */
    submit(device, protocol, reports) {
      let m: GatewayRequest & { t: 'store' };
      try {
        const receivedAt = o.clock.now();
        const p = prepareReports(device.id, protocol, reports, receivedAt) as Prepared;
        warnDropped(o.logger, device.id, protocol, p.dropped);
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
      return request(m).then(() => done);
    },
  };

  const call = <K extends CommandCall>(name: K) =>
    ((...args: unknown[]) => request({ t: 'command', call: name, args })) as unknown as CommandQueue[K];
  const commands: CommandQueue = {
    recover: call('recover'),
    next: call('next'),
    markSent: call('markSent'),
    markFailed: call('markFailed'),
    answered: call('answered'),
    unsolicited: call('unsolicited'),
  };

  const frames = new FrameTap();
  frames.attach({
    wants: (accountId) => (accountId === null ? wanted.unknown : wanted.accounts.has(accountId)),
    offer: (accountId, deviceId, frame) => note({ t: 'frame', accountId, deviceId, frame }),
  });

  connect();
  return {
    directory,
    ingest,
    commands,
    frames,
    connectionChanged(deviceId, connected) {
      note(connected ? { t: 'online', deviceId } : { t: 'offline', deviceId });
    },
    announce: () => request({ t: 'hello', ...o.hello() }),
    heard(deviceId) {
      const now = o.clock.now().getTime();
      if (now - (heardAt.get(deviceId) ?? 0) < HEARD_EVERY_MS) return;
      if (heardAt.size > 100_000) heardAt.clear();
      heardAt.set(deviceId, now);
      note({ t: 'heard', deviceId });
    },
    reportCounts(source, trackers) {
      note({ t: 'counts', source, trackers });
    },
    ready: () => first,
    isUp: () => up,
    held: () => ({ records: cache.size, touched: touched.size, heard: heardAt.size }),
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(sweep);
      clearInterval(forget);
      clearInterval(liveness);
      failAll(new CoreUnreachable('closing'));
      await client.close().catch(() => false);
    },
  };
}
