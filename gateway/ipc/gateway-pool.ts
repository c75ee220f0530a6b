/**
 * The core starts its gateway processes (TRACKGATE_GATEWAY_PROCESSES) as cluster workers of its
 * own entry, and starts a dead one again.
 *
 * How several processes share one port: Node's cluster module with round-robin scheduling
 * (SCHED_RR). The core (the cluster primary) listens on each tracker port, accepts each new
 * connection and hands it to the next gateway process in turn, so every process holds its share.
 * With SCHED_NONE (every process accepting on the shared socket, the kernel picking one) the spread
 * was very uneven on Linux: in the 100,000-tracker benchmark one process of six reached its 20,000
 * open files while another held 5,000, and a process out of files drops every connection handed
 * to it. SO_REUSEPORT would spread them evenly without the core but needs Node 22.12. Handing a
 * connection over costs the core once per connection, never per frame. A worker that dies takes
 * nothing with it but its own connections: its trackers reconnect and are handed to the others. A
 * worker exits when the core's process does (its channel to the primary closes), so no orphan ever
 * holds a port.
 *
 * Datagrams go to one gateway process only (the first; the one started in its place when it
 * dies): a UDP tracker's datagrams must meet the same state (the command it was sent and waits to
 * answer) and keep their order, which a kernel spreading them over processes would not keep. TCP
 * and HTTP are in every gateway process.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../../core/logger.js';
import type { CoreLink } from './core-link.server.js';
import type { GatewayProcessSettings } from './gateway.process.js';

/** what a worker asks for on its cluster channel once its code is loaded (a message sent before would be lost) */
export const INIT_REQUEST = 'trackgate-gateway-settings?';

/** the answer: its settings */
export interface GatewayInit {
  t: 'trackgate-gateway-init';
  worker: number;
  settings: GatewayProcessSettings;
}

export interface GatewayPoolOptions {
  processes: number;
  /** the entry the workers run, and its arguments (main.ts with the gateway role) */
  exec: string;
  args: string[];
  settings: GatewayProcessSettings;
  link: CoreLink;
  logger: Logger;
  /** longest wait for every worker's listeners at start */
  startTimeoutMs?: number;
}

export interface GatewayPool {
  /** the ports the gateway processes listen on (as the first one reported them) */
  ports: Record<string, number>;
  /** pid of each running gateway process */
  pids(): number[];
  /** No gateway process is started again from now on (the core is stopping: they stop with it). */
  quiesce(): void;
  stop(): Promise<void>;
}

const RESTART_MIN_MS = 250;
const RESTART_MAX_MS = 10_000;
/** a worker that ran at least this long before dying is restarted at once; one that keeps dying sooner, slower and slower */
const HEALTHY_MS = 10_000;

export async function startGatewayPool(o: GatewayPoolOptions): Promise<GatewayPool> {
  // read by cluster at its first setupPrimary: the core hands out connections in turn (see above)
  cluster.schedulingPolicy = cluster.SCHED_RR;
  cluster.setupPrimary({ exec: o.exec, args: o.args });
  const workers = new Map<Worker, { startedAt: number; udp: boolean }>();
  const listening = new Map<number, (ports: Record<string, number>) => void>();
  let ports: Record<string, number> | undefined;
  let stopping = false;
  let restartDelay = RESTART_MIN_MS;
  const timers = new Set<NodeJS.Timeout>();

  o.link.onHello((reported, who) => {
    if (who.worker === undefined) return;
    listening.get(who.worker)?.(reported);
  });

  function fork(udp: boolean): { worker: Worker; listening: Promise<Record<string, number>> } {
    const worker = cluster.fork();
    workers.set(worker, { startedAt: Date.now(), udp });
    const ready = new Promise<Record<string, number>>((resolve, reject) => {
      listening.set(worker.id, (p) => {
        listening.delete(worker.id);
        resolve(p);
      });
      worker.once('exit', () => reject(new Error(`gateway process ${worker.id} exited before listening`)));
    });
    ready.catch(() => undefined);
    const init: GatewayInit = { t: 'trackgate-gateway-init', worker: worker.id, settings: { ...o.settings, udp } };
    worker.on('message', (m: unknown) => {
      if (m === INIT_REQUEST) worker.send(init);
    });
    worker.on('exit', (code, signal) => {
      const ran = Date.now() - (workers.get(worker)?.startedAt ?? 0);
      workers.delete(worker);
      listening.delete(worker.id);
      if (stopping) return;
      restartDelay = ran >= HEALTHY_MS ? RESTART_MIN_MS : Math.min(restartDelay * 2, RESTART_MAX_MS);
      o.logger.warn({ worker: worker.id, pid: worker.process.pid, code, signal, restartInMs: restartDelay }, 'gateway process died; starting another (its trackers reconnect to the others meanwhile)');
      const t = setTimeout(() => {
        timers.delete(t);
        if (!stopping) fork(udp);
      }, restartDelay);
      timers.add(t);
    });
    return { worker, listening: ready };
  }

  // the first reports every port: it has the UDP listeners too
  const started = Array.from({ length: o.processes }, (_, i) => fork(i === 0));
  const timeoutMs = o.startTimeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    const all = await Promise.race([
      Promise.all(started.map((s) => s.listening)),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`gateway processes not listening after ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    ports = all[0];
  } catch (e) {
    await stop();
    throw e;
  } finally {
    clearTimeout(timer);
  }

  async function stop(): Promise<void> {
    stopping = true;
    for (const t of timers) clearTimeout(t);
    await Promise.all(
      [...workers.keys()].map(
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

  return {
    ports: ports!,
    pids: () => [...workers.keys()].filter((w) => !w.isDead()).map((w) => w.process.pid!),
    quiesce() {
      stopping = true;
    },
    stop,
  };
}
