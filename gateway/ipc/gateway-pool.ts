/**
 * The core starts its gateway processes (TRACKGATE_GATEWAY_PROCESSES) as cluster workers of its
 * own entry, and starts a dead one again (docs/scaling.md). Each accepts on the port's one socket
 * itself (SCHED_NONE), one connection at a time (UV_TCP_SINGLE_ACCEPT), so a busy process takes
 * fewer and the core does no work per connection. They run niced (GATEWAY_NICE) so the core keeps
 * CPU for lookups, commits and MQTT, and with GATEWAY_V8_FLAGS so a login storm's garbage does not
 * stay resident. Datagrams go to one process only: a UDP tracker's must keep their order.
 */
import os from 'node:os';
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../../core/logger.js';
import type { CoreLink } from './core-link.server.js';
import type { GatewayProcessSettings } from './gateway.process.js';
import { backoffMs } from '../../core/backoff.js';

/** what a worker asks for on its cluster channel once its code is loaded (a message sent before would be lost) */
export const INIT_REQUEST = 'trackgate-gateway-settings?';

/** the answer: its settings */
export interface GatewayInit {
  t: 'trackgate-gateway-init';
  worker: number;
  settings: GatewayProcessSettings;
}

/** A renewed certificate and key for a running worker's TLS ports (a worker started later gets it in its settings). */
export interface GatewayTls {
  t: 'trackgate-gateway-tls';
  tls: { cert: string; key: string };
}

/**
 * What a worker says before it exits because its listeners would not start: the reason in the
 * operator's words, and the listen error's code and port, so that the core can tell a port it
 * picked itself (port 0) and lost meanwhile from a configured one (server/trackers.ts).
 */
export interface GatewayFailed {
  t: 'trackgate-gateway-failed';
  message: string;
  code?: string;
  port?: number;
}

/** Why a start failed: a worker's reason (GatewayFailed), or that it exited without one. */
export class GatewayStartError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly port?: number,
  ) {
    super(message);
    this.name = 'GatewayStartError';
  }
}

export interface GatewayPoolOptions {
  processes: number;
  /** the entry the workers run, and its arguments (gateway-main.ts) */
  exec: string;
  args: string[];
  settings: GatewayProcessSettings;
  link: CoreLink;
  logger: Logger;
  /** longest wait for every worker's listeners at start (default START_TIMEOUT_MS) */
  startTimeoutMs?: number;
}

/**
 * How long a start waits for its gateway processes to listen. A process that cannot listen (its
 * port in use) exits and fails the start at once; this bounds only one that hangs. On a busy
 * machine (a 2-core box compiling or running tests beside it) a process took more than 30 s to
 * load, and 30 s failed starts that would have succeeded.
 */
export const START_TIMEOUT_MS = 300_000;

export interface GatewayPool {
  /** the ports the gateway processes listen on (as the first one reported them) */
  ports: Record<string, number>;
  /** pid of each running gateway process */
  pids(): number[];
  /** No gateway process is started again from now on (the core is stopping: they stop with it). */
  quiesce(): void;
  /** A renewed certificate: sent to every running gateway process, and given to those started later. */
  setTls(tls: { cert: string; key: string }): void;
  stop(): Promise<void>;
}

/** V8 flags of the gateway processes, beside the core's own (see the file's comment) */
export const GATEWAY_V8_FLAGS: readonly string[] = ['--heap-growing-percent=20'];
/** how much lower than the core's the gateway processes' priority is (nice; see the file's comment) */
export const GATEWAY_NICE = 4;
const RESTART_MIN_MS = 250;
const RESTART_MAX_MS = 10_000;
/** a worker that ran at least this long before dying is restarted at once; one that keeps dying sooner, slower and slower */
const HEALTHY_MS = 10_000;

/** What the pool keeps of its workers, shared by the functions below. */
interface PoolState {
  o: GatewayPoolOptions;
  /** what a worker started now gets (o.settings, with the latest certificate) */
  settings: GatewayProcessSettings;
  workers: Map<Worker, { startedAt: number; udp: boolean }>;
  /** each worker not listening yet: what to call with its ports */
  listening: Map<number, (ports: Record<string, number>) => void>;
  stopping: boolean;
  /** until the first processes all listen */
  starting: boolean;
  restartDelay: number;
  /** workers in a row that died before HEALTHY_MS */
  quickDeaths: number;
  timers: Set<NodeJS.Timeout>;
}

export async function startGatewayPool(o: GatewayPoolOptions): Promise<GatewayPool> {
  // read by cluster at its first setupPrimary: each gateway process accepts for itself (see above)
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ exec: o.exec, args: o.args, execArgv: [...process.execArgv, ...GATEWAY_V8_FLAGS] });
  const p: PoolState = {
    o,
    settings: o.settings,
    workers: new Map(),
    listening: new Map(),
    stopping: false,
    starting: true,
    restartDelay: RESTART_MIN_MS,
    quickDeaths: 0,
    timers: new Set(),
  };
  o.link.onHello((reported, who) => {
    if (who.worker === undefined) return;
    p.listening.get(who.worker)?.(reported);
  });
  // the first reports every port: it has the UDP listeners too
  const started = Array.from({ length: o.processes }, (_, i) => fork(p, i === 0));
  let ports: Record<string, number>;
  try {
    ports = (
      await allListening(
        started.map((s) => s.listening),
        o.startTimeoutMs ?? START_TIMEOUT_MS,
      )
    )[0];
    p.starting = false;
  } catch (e) {
    await stopPool(p);
    throw e;
  }
  return {
    ports,
    pids: () => [...p.workers.keys()].filter((w) => !w.isDead()).map((w) => w.process.pid!),
    quiesce() {
      p.stopping = true;
    },
    setTls(tls) {
      p.settings = { ...p.settings, tls };
      const m: GatewayTls = { t: 'trackgate-gateway-tls', tls };
      for (const w of p.workers.keys()) if (!w.isDead() && w.isConnected()) w.send(m);
    },
    stop: () => stopPool(p),
  };
}

/** every worker's ports, once all listen; a rejection after `timeoutMs` */
async function allListening(
  listening: Promise<Record<string, number>>[],
  timeoutMs: number,
): Promise<Record<string, number>[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.all(listening),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`gateway processes not listening after ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function fork(p: PoolState, udp: boolean): { worker: Worker; listening: Promise<Record<string, number>> } {
  const { o } = p;
  // one accept at a time, then yield (see above); in the gateway processes only: the core's own
  // listeners (MQTT, REST) accept as usual
  const worker = cluster.fork({ UV_TCP_SINGLE_ACCEPT: '1' });
  try {
    os.setPriority(worker.process.pid!, Math.min(19, os.getPriority() + GATEWAY_NICE));
  } catch (e) {
    o.logger.debug(
      { err: e, pid: worker.process.pid },
      "a gateway process runs at the core's priority (cannot lower it here)",
    );
  }
  p.workers.set(worker, { startedAt: performance.now(), udp });
  let fail: (e: Error) => void = () => undefined;
  const ready = new Promise<Record<string, number>>((resolve, reject) => {
    fail = reject;
    p.listening.set(worker.id, (ports) => {
      p.listening.delete(worker.id);
      resolve(ports);
    });
    // its reason (GatewayFailed) comes first when it gives one; the channel closes after its last message
    const exited = () => reject(new GatewayStartError(`gateway process ${worker.id} exited before listening`));
    worker.once('exit', () => (worker.isConnected() ? worker.once('disconnect', exited) : exited()));
  });
  ready.catch(() => undefined);
  worker.on('message', (m: unknown) => {
    const init: GatewayInit = { t: 'trackgate-gateway-init', worker: worker.id, settings: { ...p.settings, udp } };
    if (m === INIT_REQUEST) worker.send(init);
    const failed = m as GatewayFailed | undefined;
    if (failed?.t === 'trackgate-gateway-failed') fail(new GatewayStartError(failed.message, failed.code, failed.port));
  });
  worker.on('exit', (code, signal) => onExit(p, worker, udp, { code, signal }));
  return { worker, listening: ready };
}

/** A worker exited: started again (later and later while it keeps dying soon), unless the pool stops or the start fails. */
function onExit(p: PoolState, worker: Worker, udp: boolean, how: { code: number; signal: string }): void {
  const ran = performance.now() - (p.workers.get(worker)?.startedAt ?? 0);
  const neverListened = p.listening.has(worker.id);
  p.workers.delete(worker);
  p.listening.delete(worker.id);
  // one of the first processes that exits before it listens fails the start (its port in use): nothing to start again
  if (p.stopping || (p.starting && neverListened)) return;
  p.quickDeaths = ran >= HEALTHY_MS ? 0 : p.quickDeaths + 1;
  p.restartDelay =
    p.quickDeaths === 0
      ? RESTART_MIN_MS
      : backoffMs({ minMs: RESTART_MIN_MS, maxMs: RESTART_MAX_MS }, p.quickDeaths + 1);
  p.o.logger.warn(
    { worker: worker.id, pid: worker.process.pid, code: how.code, signal: how.signal, restartInMs: p.restartDelay },
    'gateway process died; starting another (its trackers reconnect to the others meanwhile)',
  );
  const t = setTimeout(() => {
    p.timers.delete(t);
    if (!p.stopping) fork(p, udp);
  }, p.restartDelay);
  p.timers.add(t);
}

async function stopPool(p: PoolState): Promise<void> {
  p.stopping = true;
  for (const t of p.timers) clearTimeout(t);
  await Promise.all(
    [...p.workers.keys()].map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          const kill = setTimeout(() => w.process.kill('SIGKILL'), 5000);
          w.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          w.process.kill('SIGTERM');
        }),
    ),
  );
}
