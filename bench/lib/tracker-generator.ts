/**
 * Simulated trackers, in their own process: raw `net` sockets, frames encoded before the clock
 * starts. Each connection logs in, then sends one frame at a time and waits for its ack, as real
 * devices do, and checks that ack byte for byte (Teltonika: AVL frame of N records -> u32 N; GT06:
 * 0x22 frame -> 10-byte ack; gl200: +RESP:GTFRI -> +SACK:<count>$; Ruptela: records -> 0002640113bc;
 * Wialon: #D# -> #AD#1; Navtelecom: FLEX ~A of N records -> ~A N CRC-8).
 */
import net from 'node:net';
import tls from 'node:tls';
import { cpuMsOfNamed, machineBusyMs, serveCommands } from './child.js';
import { ownCpuMs, treeCpuMs } from './cost.js';
import {
  BENCH_PROTOCOLS,
  GL200_LOGIN_ACK,
  RUPTELA_LOGIN_ACK,
  NAVIS_LOGIN_ACK,
  WIALON_LOGIN_ACK,
  encodeFrames,
  expectedAck,
  loginFrame,
  positionsPerFrame,
  type BenchProtocol,
} from './frames.js';

type Protocol = BenchProtocol;

export interface ConnectArgs {
  /**
   * where to connect; with several addresses, connection i goes to `host[i % host.length]`. Linux
   * picks a connection's source port from the even half of the ephemeral range first, and once a
   * destination holds about half the range each further connect scans it in the kernel (measured:
   * a generator's system time rose to a whole CPU past about 12,000 connections to one address),
   * so a generator that opens many spreads them over several addresses.
   */
  host: string | readonly string[];
  ports: Partial<Record<Protocol, number>>;
  /** connections per protocol; device indexes `first`…`first + count - 1` */
  teltonika?: { first: number; count: number };
  gt06?: { first: number; count: number };
  gl200?: { first: number; count: number };
  ruptela?: { first: number; count: number };
  wialon?: { first: number; count: number };
  navis?: { first: number; count: number };
  /** connections opened (and logged in) at a time */
  batch: number;
  /** connect over TLS (TRACKGATE_<P>_TLS_PORT), trusting any certificate: the benchmark's own */
  tls?: boolean;
}

export interface ConnectResult {
  loggedIn: number;
  failed: number;
  seconds: number;
  firstError?: string;
}

export interface PrepareArgs {
  framesPerConnection: Partial<Record<Protocol, number>>;
  recordsPerFrame: number;
}

export interface StreamArgs {
  /** frames flow but acks are not counted yet (JIT, caches) */
  warmupMs: number;
  /** the measured window */
  durationMs: number;
  /** a process whose CPU use during the window is reported (the server under test) */
  watchPid?: number;
  /** start again at the first frame when a connection has sent all of its frames (ack-only servers) */
  cycle: boolean;
  /** also report the CPU of the PostgreSQL server's processes (`postgres`) during the window */
  watchPostgres?: boolean;
}

export interface StreamResult {
  /** positions acknowledged while the window was open, per second */
  windowPositionsPerSec: number;
  windowPositions: number;
  /** all positions acknowledged, the drain after the window included */
  ackedPositions: number;
  ackedByProtocol: Record<Protocol, number>;
  /** per connection: frames acknowledged (in connection order: teltonika, gt06, gl200, ruptela) */
  framesAcked: { protocol: Protocol; index: number; frames: number }[];
  warmupSeconds: number;
  windowSeconds: number;
  drainSeconds: number;
  /** connections that ran out of pre-encoded frames before the window closed */
  exhausted: number;
  errors: number;
  firstError?: string;
  /** CPU used by this generator process during the window, % of one core */
  generatorCpuPct: number;
  /** CPU used by `watchPid` and every process below it (gateway processes) during the window, % of one core */
  serverCpuPct?: number;
  /** the same in ms of CPU time (for the cost per position: bench/lib/cost.ts) */
  serverCpuMs?: number;
  /** CPU used by `watchPid` alone (trackgate's core when it has gateway processes) during the window, % of one core */
  coreCpuPct?: number;
  /** every CPU of the machine busy during the window (/proc/stat), % of one core: everything the load costs, the database server included */
  machineCpuPct: number;
  /** CPU used by processes named `postgres` during the window, % of one core (when StreamArgs.watchPostgres) */
  postgresCpuPct?: number;
  /** the same in ms of CPU time */
  postgresCpuMs?: number;
  /** positions acknowledged in each second, warm-up included */
  perSecond: number[];
}

interface Conn {
  protocol: Protocol;
  index: number;
  socket: net.Socket;
  pending: Buffer;
  onAck?: (ack: Buffer) => void;
  frames?: Buffer;
  frameBytes: number;
  /** the ack of each frame, byte for byte */
  acks?: Buffer[];
  next: number;
  acked: number;
  done: boolean;
}

const conns: Conn[] = [];

/**
 * CPU time (ms) of `pid` alone (the core) and with every process below it (trackgate's gateway
 * processes), read synchronously so it lines up with the window edges (bench/lib/cost.ts).
 */
function serverCpu(pid: number | undefined): { core: number; tree: number } | undefined {
  if (pid === undefined) return undefined;
  return { core: ownCpuMs(pid), tree: treeCpuMs(pid) };
}
let recordsPerFrame = 1;

/** Bytes of the next acknowledgement in `pending`, or undefined while it is incomplete. */
function ackLength(c: Conn, loggedIn: boolean, pending: Buffer): number | undefined {
  if (pending.length === 0) return undefined;
  let need: number;
  if (!loggedIn) {
    if (c.protocol === 'gl200') {
      const end = pending.indexOf(0x24); // `$`
      return end < 0 ? undefined : end + 1;
    }
    need = LOGIN_ACK_BYTES[c.protocol];
  } else {
    if (!c.acks)
      throw new Error(`${c.protocol} ${c.index}: unexpected bytes after the login ack: ${pending.toString('hex')}`);
    need = c.acks[(c.next - 1) % c.acks.length].length;
  }
  return pending.length >= need ? need : undefined;
}

/** the length of each protocol's login acknowledgement (gl200's ends at its `$`) */
const LOGIN_ACK_BYTES: Record<Exclude<Protocol, 'gl200'>, number> = {
  teltonika: 1,
  gt06: 10,
  ruptela: RUPTELA_LOGIN_ACK.length,
  wialon: WIALON_LOGIN_ACK.length,
  navis: NAVIS_LOGIN_ACK.length,
};

function loginAccepted(protocol: Protocol, ack: Buffer): boolean {
  if (protocol === 'teltonika') return ack[0] === 0x01;
  if (protocol === 'gt06') return ack[3] === 0x01;
  if (protocol === 'gl200') return ack.equals(GL200_LOGIN_ACK);
  if (protocol === 'wialon') return ack.equals(WIALON_LOGIN_ACK);
  if (protocol === 'navis') return ack.equals(NAVIS_LOGIN_ACK);
  return ack.equals(RUPTELA_LOGIN_ACK);
}

function open(host: string, port: number, protocol: Protocol, index: number, overTls = false): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket: net.Socket = overTls
      ? tls.connect({
          socket: net.connect({ host, port, noDelay: true }),
          rejectUnauthorized: false,
          servername: 'localhost',
        })
      : net.connect({ host, port });
    socket.setNoDelay(true);
    const c: Conn = {
      protocol,
      index,
      socket,
      pending: Buffer.alloc(0),
      frameBytes: 0,
      next: 0,
      acked: 0,
      done: false,
    };
    let loggedIn = false;
    socket.on('data', (chunk: Buffer) => {
      c.pending = c.pending.length ? Buffer.concat([c.pending, chunk]) : chunk;
      for (;;) {
        const need = ackLength(c, loggedIn, c.pending);
        if (need === undefined) return;
        const ack = c.pending.subarray(0, need);
        c.pending = c.pending.subarray(need);
        if (!loggedIn) {
          loggedIn = true;
          if (loginAccepted(protocol, ack)) resolve(c);
          else reject(new Error(`${protocol} login of device ${index} refused (${ack.toString('hex')})`));
        } else {
          c.onAck?.(ack);
        }
      }
    });
    socket.once('error', reject);
    // a connection the server closes, or never answers, before the login's ack fails instead of hanging the run
    socket.once('close', () => {
      if (!loggedIn)
        reject(new Error(`${protocol} device ${index}: connection closed before the login was acknowledged`));
    });
    const timer = setTimeout(() => {
      if (!loggedIn) {
        socket.destroy();
        reject(new Error(`${protocol} device ${index}: no login acknowledgement within 60 s`));
      }
    }, 60_000);
    timer.unref();
    socket.once(overTls ? 'secureConnect' : 'connect', () => socket.write(loginFrame(protocol, index)));
  });
}

serveCommands({
  async connect(a: ConnectArgs): Promise<ConnectResult> {
    const t0 = performance.now();
    const todo: { protocol: Protocol; index: number }[] = [];
    for (const p of BENCH_PROTOCOLS) {
      const range = a[p];
      if (range) for (let i = 0; i < range.count; i++) todo.push({ protocol: p, index: range.first + i });
    }
    let failed = 0;
    let firstError: string | undefined;
    // `batch` logins in flight at a time, each tracker on its own (one slow login holds back no
    // other), as trackers connect; kept in `todo` order
    const opened: (Conn | undefined)[] = new Array(todo.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < todo.length) {
        const i = next++;
        const t = todo[i];
        try {
          opened[i] = await open(
            typeof a.host === 'string' ? a.host : a.host[i % a.host.length],
            a.ports[t.protocol]!,
            t.protocol,
            t.index,
            a.tls,
          );
        } catch (e) {
          failed++;
          firstError ??= String(e);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(a.batch, todo.length) }, worker));
    for (const c of opened) if (c) conns.push(c);
    return {
      loggedIn: conns.length,
      failed,
      seconds: (performance.now() - t0) / 1000,
      ...(firstError && { firstError }),
    };
  },

  /** Encodes every connection's frames (before any clock starts); returns the bytes held. */
  prepare(a: PrepareArgs): { bytes: number; frames: number } {
    recordsPerFrame = a.recordsPerFrame;
    let bytes = 0;
    let frames = 0;
    for (const c of conns) {
      const count = a.framesPerConnection[c.protocol];
      if (!count) throw new Error(`no frame count for ${c.protocol}`);
      const plan = {
        protocol: c.protocol,
        index: c.index,
        frames: count,
        recordsPerFrame: positionsPerFrame(c.protocol, a.recordsPerFrame),
      };
      const e = encodeFrames(plan);
      c.frames = e.bytes;
      c.frameBytes = e.frameBytes;
      c.acks = Array.from({ length: count }, (_, i) => expectedAck(plan, i));
      bytes += e.bytes.length;
      frames += count;
    }
    return { bytes, frames };
  },

  stream(a: StreamArgs): Promise<StreamResult> {
    return new Promise((resolve) => {
      const acked = Object.fromEntries(BENCH_PROTOCOLS.map((p) => [p, 0])) as Record<Protocol, number>;
      const perSecond: number[] = [];
      let windowPositions = 0;
      let errors = 0;
      let firstError: string | undefined;
      let exhausted = 0;
      let open = conns.length;
      // phases: warm-up (sending, not counted) -> window (counted) -> drain (no new frames)
      let phase: 'warmup' | 'window' | 'drain' = 'warmup';
      const t0 = performance.now();
      const postgresMs = (): number | undefined => (a.watchPostgres ? cpuMsOfNamed('postgres') : undefined);
      const mark = () => ({
        t: performance.now(),
        cpu: process.cpuUsage(),
        server: serverCpu(a.watchPid),
        machine: machineBusyMs(),
        postgres: postgresMs(),
      });
      let at = mark();
      let windowSeconds = 0;
      let generatorCpuPct = 0;
      let serverCpuPct: number | undefined;
      let serverCpuMs: number | undefined;
      let postgresCpuMs: number | undefined;
      let coreCpuPct: number | undefined;
      let machineCpuPct = 0;
      let postgresCpuPct: number | undefined;

      const openWindow = (): void => {
        phase = 'window';
        at = mark();
      };
      const closeWindow = (): void => {
        if (phase === 'drain') return;
        if (phase === 'warmup') openWindow();
        phase = 'drain';
        const ms = performance.now() - at.t;
        const cpu = process.cpuUsage(at.cpu);
        windowSeconds = ms / 1000;
        generatorCpuPct = ((cpu.user + cpu.system) / 1000 / ms) * 100;
        machineCpuPct = ((machineBusyMs() - at.machine) / ms) * 100;
        const postgres = postgresMs();
        if (postgres !== undefined && at.postgres !== undefined) {
          postgresCpuMs = postgres - at.postgres;
          postgresCpuPct = (postgresCpuMs / ms) * 100;
        }
        const server = serverCpu(a.watchPid);
        if (server !== undefined && at.server !== undefined) {
          serverCpuMs = server.tree - at.server.tree;
          serverCpuPct = (serverCpuMs / ms) * 100;
          coreCpuPct = ((server.core - at.server.core) / ms) * 100;
        }
      };
      const finish = (): void => {
        clearTimeout(warmupTimer);
        clearTimeout(windowTimer);
        closeWindow();
        resolve({
          windowPositionsPerSec: windowPositions / windowSeconds,
          windowPositions,
          ackedPositions: BENCH_PROTOCOLS.reduce((n, p) => n + acked[p], 0),
          ackedByProtocol: acked,
          framesAcked: conns.map((c) => ({ protocol: c.protocol, index: c.index, frames: c.acked })),
          warmupSeconds: a.warmupMs / 1000,
          windowSeconds,
          drainSeconds: (performance.now() - t0) / 1000 - a.warmupMs / 1000 - windowSeconds,
          exhausted,
          errors,
          ...(firstError && { firstError }),
          generatorCpuPct,
          ...(serverCpuPct !== undefined && { serverCpuPct, serverCpuMs }),
          ...(coreCpuPct !== undefined && { coreCpuPct }),
          machineCpuPct,
          ...(postgresCpuPct !== undefined && { postgresCpuPct, postgresCpuMs }),
          perSecond: Array.from(perSecond, (n) => n ?? 0),
        });
      };
      const end = (c: Conn): void => {
        if (c.done) return;
        c.done = true;
        if (--open === 0) finish();
      };
      const send = (c: Conn): void => {
        const total = c.frames!.length / c.frameBytes;
        if (phase === 'drain') return end(c);
        if (c.next >= total) {
          if (!a.cycle) {
            exhausted++;
            return end(c);
          }
          c.next = 0;
        }
        const offset = c.next++ * c.frameBytes;
        c.socket.write(c.frames!.subarray(offset, offset + c.frameBytes));
      };
      const warmupTimer = setTimeout(openWindow, a.warmupMs);
      const windowTimer = setTimeout(closeWindow, a.warmupMs + a.durationMs);

      for (const c of conns) {
        c.next = 0;
        c.acked = 0;
        c.done = false;
        const positions = positionsPerFrame(c.protocol, recordsPerFrame);
        c.onAck = (ack) => {
          if (!ack.equals(c.acks![(c.next - 1) % c.acks!.length])) {
            errors++;
            firstError ??= `${c.protocol} device ${c.index}: unexpected ack ${ack.toString('hex')}`;
            return end(c);
          }
          c.acked++;
          acked[c.protocol] += positions;
          if (phase === 'window') windowPositions += positions;
          if (phase !== 'drain') {
            const second = Math.floor((performance.now() - t0) / 1000);
            perSecond[second] = (perSecond[second] ?? 0) + positions;
          }
          send(c);
        };
        c.socket.removeAllListeners('error');
        c.socket.on('error', (e) => {
          errors++;
          firstError ??= `${c.protocol} device ${c.index}: ${e.message}`;
          end(c);
        });
        c.socket.on('close', () => end(c));
        send(c);
      }
    });
  },

  close(): number {
    for (const c of conns) c.socket.destroy();
    const n = conns.length;
    conns.length = 0;
    return n;
  },
});
