/**
 * The TCP ingest load that tcp-ingest and pg-ingest share: 1,000 trackers of four protocols
 * (issue 13's mix), pre-encoded frames, the CPUs they are pinned to, and the rows trackgate stores
 * for acknowledged frames (decoded from the same frames, for the raw-storage baselines).
 */
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import type { LocationRow } from '../../core/locations/locations.repository.js';
import { storedJson } from '../../core/model/location.js';
import { runSteps } from '../../core/ingest/ingest.steps.js';
import { teltonikaProtocol } from '../../protocols/teltonika/teltonika.protocol.js';
import { gt06Protocol } from '../../protocols/gt06/gt06.protocol.js';
import { gl200Protocol } from '../../protocols/gl200/gl200.protocol.js';
import { ruptelaProtocol } from '../../protocols/ruptela/ruptela.protocol.js';
import { wialonProtocol } from '../../protocols/wialon/wialon.protocol.js';
import { navisProtocol } from '../../protocols/navis/navis.protocol.js';
import type { DecodeContext, ProtocolModule } from '../../protocols/types.js';
import { autoGatewayProcesses } from '../../config/config.js';
import { childPids, type Child } from './child.js';
import { log } from './report.js';
import { BENCH_PROTOCOLS, encodeFrame, imeiOf, loginFrame, positionsPerFrame, type BenchProtocol } from './frames.js';
import type { ConnectResult, StreamResult } from './tracker-generator.js';

/**
 * Trackers connected: 1,000 unless BENCH_TRACKERS says otherwise (the mix keeps its shares). Each
 * has one frame in flight, as a real device does, so the count sets how much work waits for a
 * commit at once (BENCHMARKS.md).
 */
export const TRACKERS = Number(process.env.BENCH_TRACKERS ?? 1000);
if (!Number.isInteger(TRACKERS) || TRACKERS < 100 || TRACKERS > 20_000)
  throw new Error(`BENCH_TRACKERS must be 100-20000, not ${process.env.BENCH_TRACKERS}`);
/**
 * connections per protocol, per 1,000: Teltonika 300, GT06 250, gl200 100, Ruptela 100, Wialon IPS
 * 100, Navtelecom FLEX 150 (issue 39 added the last two: before, 400/300/150/150 of the first four).
 * Frames of several records (Teltonika, Ruptela, FLEX) stay 55 % of the connections, as before.
 * BENCH_MIX=wave2 runs the mix before them.
 */
const MIXES = {
  current: { teltonika: 0.3, gt06: 0.25, gl200: 0.1, ruptela: 0.1, wialon: 0.1, navis: 0.15 },
  /** BENCH_MIX=wave2: the mix before issue 39, to compare both in one session */
  wave2: { teltonika: 0.4, gt06: 0.3, gl200: 0.15, ruptela: 0.15, wialon: 0, navis: 0 },
} satisfies Record<string, Record<BenchProtocol, number>>;
/** BENCH_MIX=only:<protocol>: every tracker of one protocol (to tell what one family costs) */
function mixNamed(name: string): Record<BenchProtocol, number> {
  const only = /^only:(.+)$/.exec(name)?.[1] as BenchProtocol | undefined;
  if (only && BENCH_PROTOCOLS.includes(only))
    return Object.fromEntries(BENCH_PROTOCOLS.map((p) => [p, p === only ? 1 : 0])) as Record<BenchProtocol, number>;
  if (name in MIXES) return { ...MIXES[name as keyof typeof MIXES] };
  throw new Error(`BENCH_MIX must be one of ${Object.keys(MIXES).join(', ')} or only:<protocol>`);
}
export const MIX = mixNamed(process.env.BENCH_MIX ?? 'current');
for (const p of BENCH_PROTOCOLS) MIX[p] *= TRACKERS;
for (const p of BENCH_PROTOCOLS) MIX[p] = Math.round(MIX[p]);
/**
 * Pre-encoded frames per connection for a load sized for 1,000 trackers: with more trackers each
 * needs fewer (the same total), never under 40.
 */
export function framesPerConnection(per1000: Record<BenchProtocol, number>): Record<BenchProtocol, number> {
  const out = { ...per1000 };
  for (const p of BENCH_PROTOCOLS) out[p] = Math.max(40, Math.ceil((per1000[p] * 1000) / TRACKERS));
  return out;
}
export const CONNECTIONS = BENCH_PROTOCOLS.reduce((n, p) => n + MIX[p], 0);
/** Teltonika and Ruptela records per frame (GT06 and gl200 frames carry one position) */
export const RECORDS_PER_FRAME = 10;

const PIN = os.cpus().length >= 2;
/** trackgate (and the raw-storage baselines after it) on the last CPU, the generator on CPU 0 */
export const SERVER_CPUS = PIN ? String(os.cpus().length - 1) : undefined;
export const GENERATOR_CPUS = PIN ? '0' : undefined;

const PROTOCOL_MODULES: Record<BenchProtocol, ProtocolModule> = {
  teltonika: teltonikaProtocol,
  gt06: gt06Protocol,
  gl200: gl200Protocol,
  ruptela: ruptelaProtocol,
  wialon: wialonProtocol,
  navis: navisProtocol,
};

/** Pins this process (and what it starts later) to `cpus`; `undefined`: every CPU again. */
export function pinSelf(cpus: string | undefined): void {
  if (PIN)
    spawnSync('taskset', ['-a', '-p', '-c', cpus ?? `0-${os.cpus().length - 1}`, String(process.pid)], {
      stdio: 'ignore',
    });
}

/**
 * Pins the child processes of `pid` (trackgate's gateway processes) to `cpus`, leaving `pid` (the
 * core) where it is: on a 2-CPU machine the core keeps its CPU and the gateway processes share the
 * other with the generator. The pids pinned.
 */
export function pinChildren(pid: number, cpus: string | undefined): number[] {
  if (!PIN) return [];
  const children = childPids(pid);
  for (const child of children)
    spawnSync('taskset', ['-a', '-p', '-c', cpus ?? `0-${os.cpus().length - 1}`, String(child)], { stdio: 'ignore' });
  return children;
}

/**
 * trackgate's gateway processes (docs/scaling.md "Scaling") in tcp-ingest and pg-ingest: by default as
 * `npm start` runs them (`auto`, one per CPU; counted here, since trackgate, started on one CPU,
 * would see one and run none); BENCH_GATEWAY_PROCESSES=n sets n (0: every listener in the core's
 * process, as the figures before BENCHMARKS.md).
 */
export const GATEWAY_PROCESSES = process.env.BENCH_GATEWAY_PROCESSES ?? String(autoGatewayProcesses(os.cpus().length));

/**
 * Where they run: on every CPU, placed by the system (they run below the core's priority and the
 * generator's), or with BENCH_GATEWAY_CPUS=generator on the generator's CPU (BENCHMARKS.md).
 */
export const GATEWAY_CPUS = process.env.BENCH_GATEWAY_CPUS === 'generator' ? (GENERATOR_CPUS ?? 'any') : 'any';

/** Places the gateway processes of trackgate `pid` (its children) as GATEWAY_CPUS says; their pids. */
export function placeGatewayProcesses(pid: number): number[] {
  const pids = pinChildren(pid, GATEWAY_CPUS === 'any' ? undefined : GATEWAY_CPUS);
  if (pids.length)
    log(
      `${pids.length} gateway processes on CPU ${GATEWAY_CPUS}${GATEWAY_CPUS === 'any' ? ' (placed by the system)' : ' (with the generator)'}; the core on CPU ${SERVER_CPUS ?? 'any'}`,
    );
  return pids;
}

export function deviceIds(): string[] {
  const ids: string[] = [];
  for (const p of BENCH_PROTOCOLS) for (let i = 0; i < MIX[p]; i++) ids.push(imeiOf(p, i));
  return ids;
}

export async function connectAll(
  gen: Child,
  ports: Record<BenchProtocol, number>,
  overTls = false,
): Promise<ConnectResult> {
  const ranges = Object.fromEntries(BENCH_PROTOCOLS.map((p) => [p, { first: 0, count: MIX[p] }]));
  const r = await gen.call<ConnectResult>('connect', {
    host: '127.0.0.1',
    ports,
    ...ranges,
    batch: 250,
    tls: overTls,
  });
  if (r.failed > 0) throw new Error(`${r.failed} trackers could not log in: ${r.firstError}`);
  return r;
}

/** The rows trackgate stores for the acknowledged frames, in arrival-like order (frame by frame across connections). */
export function* rowsOf(framesAcked: StreamResult['framesAcked']): Generator<LocationRow> {
  // each connection's session as its login left it (a FLEX negotiation sets the record layout)
  const sessions = framesAcked.map((c) => loggedInSession(c.protocol, c.index));
  const rounds = Math.max(...framesAcked.map((c) => c.frames));
  for (let i = 0; i < rounds; i++) {
    for (let j = 0; j < framesAcked.length; j++) {
      const c = framesAcked[j];
      if (i >= c.frames) continue;
      const frame = encodeFrame(
        {
          protocol: c.protocol,
          index: c.index,
          frames: 0,
          recordsPerFrame: positionsPerFrame(c.protocol, RECORDS_PER_FRAME),
        },
        i,
      );
      const receivedAt = new Date();
      const deviceId = imeiOf(c.protocol, c.index);
      const ctx: DecodeContext = {
        now: receivedAt,
        transport: 'tcp',
        deviceId,
        checksum: 'accept',
        session: sessions[j],
      };
      for (const m of PROTOCOL_MODULES[c.protocol].decode!(frame, ctx).messages) {
        const d = runSteps(m, c.protocol, receivedAt);
        if (d.drop || !d.location) throw new Error(`frame ${i} of ${deviceId} gives no location (${d.drop})`);
        yield {
          deviceId,
          dateTime: d.fixTime.getTime(),
          serverTime: receivedAt.getTime(),
          location: { ...d.location, serverTime: receivedAt.toISOString() },
        };
      }
    }
  }
}

/** The decoder session of a connection once its login frames are decoded. */
function loggedInSession(protocol: BenchProtocol, index: number): Record<string, unknown> {
  const p = PROTOCOL_MODULES[protocol];
  const session: Record<string, unknown> = {};
  const frames = p.createSplitter!().push(loginFrame(protocol, index));
  for (const frame of frames) p.decode!(frame, { now: new Date(), transport: 'tcp', checksum: 'accept', session });
  return session;
}

/** `frames` frames of every connection of the mix, as a generator's `framesAcked` would list them. */
export function everyConnection(frames: number): StreamResult['framesAcked'] {
  return BENCH_PROTOCOLS.flatMap((protocol) =>
    Array.from({ length: MIX[protocol] }, (_, index) => ({ protocol, index, frames })),
  );
}

/** A row as the raw baselines insert it: device id, fix time, server time, the stored JSON. */
export type RawRow = [string, number, number, string];

/** `source`'s rows, serialised as the baselines insert them, `size` at a time (done outside their clocks). */
export function* rawBlocks(source: Generator<LocationRow>, size = 50_000): Generator<RawRow[]> {
  for (;;) {
    const block: RawRow[] = [];
    while (block.length < size) {
      const r = source.next();
      if (r.done) break;
      block.push([r.value.deviceId, r.value.dateTime, r.value.serverTime, storedJson(r.value.location)]);
    }
    if (block.length === 0) return;
    yield block;
  }
}
