/**
 * TCP ingest over TLS (BENCHMARKS.md "tls-ingest"): tcp-ingest's trackers and frames, once on the
 * plain tracker ports and once on the TLS ports (TRACKGATE_<P>_TLS_PORT, a 2048-bit RSA
 * certificate made for the run), in alternating rounds of a fresh server each; the best round of
 * each is reported. Measured: positions stored and acknowledged per second. The figure is the ratio
 * TLS over plain, in the same run, so the machine's speed cancels out.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import { trackgateRound, type TrackgateRound } from './tcp-ingest.bench.js';
import { alternatingRounds, bestRound } from './lib/paired-rounds.js';
import { CONNECTIONS, GATEWAY_PROCESSES, GENERATOR_CPUS, pinSelf } from './lib/ingest-load.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';
import { compareCost, costTable, figure, usPer, type Cost } from './lib/cost.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));

export interface TlsIngestResult {
  name: 'tls-ingest';
  machine: Machine;
  settings: { connections: number; rounds: number; gatewayProcesses: string; certificate: string };
  rounds: {
    variant: 'plain' | 'tls';
    positionsPerSec: number;
    rowsMatchAcks: boolean;
    serverCpuPct?: number;
    /** µs of CPU of trackgate's processes per position acknowledged in the window */
    cpuUsPerPosition: number;
  }[];
  plainPositionsPerSec: number;
  tlsPositionsPerSec: number;
  /** TLS positions/s over plain positions/s, best round of each */
  ratio: number;
  allStored: boolean;
  /** trackgate's CPU per position over TLS against the same on the plain ports (bench/lib/cost.ts) */
  cost: Cost;
}

async function certificateFiles(): Promise<{ certFile: string; keyFile: string; remove(): void }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-bench-tls-'));
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, algorithm: 'sha256' });
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  writeFileSync(certFile, pems.cert);
  writeFileSync(keyFile, pems.private);
  return { certFile, keyFile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function run(): Promise<TlsIngestResult> {
  const atStart = machine();
  const files = await certificateFiles();
  log(`preparing: ${fmt(CONNECTIONS)} trackers, plain and TLS rounds alternating, ${ROUNDS} each`);
  pinSelf(GENERATOR_CPUS);
  try {
    const rounds = await alternatingRounds<'plain' | 'tls', TrackgateRound & { over: 'plain' | 'tls' }>(
      'plain',
      'tls',
      ROUNDS,
      async (v) => ({ ...(await trackgateRound(v === 'tls' ? files : undefined)), over: v }),
    );
    const of = (v: 'plain' | 'tls') => rounds.filter((r) => r.over === v);
    const speed = (r: TrackgateRound) => r.ingest.windowPositionsPerSec;
    const plain = speed(bestRound(of('plain'), speed));
    const overTls = speed(bestRound(of('tls'), speed));
    const costOf = (r: TrackgateRound): number => usPer(r.ingest.serverCpuMs ?? NaN, r.ingest.windowPositions);
    const processes = rounds[0]?.gatewayProcesses ?? 0;
    const cost = compareCost(
      'position',
      figure(`trackgate over TLS (core + ${processes} gateway processes)`, of('tls').map(costOf)),
      figure('trackgate on the plain ports, same trackers', of('plain').map(costOf)),
    );
    const result: TlsIngestResult = {
      name: 'tls-ingest',
      machine: atStart,
      settings: {
        connections: CONNECTIONS,
        rounds: ROUNDS,
        gatewayProcesses: GATEWAY_PROCESSES,
        certificate: 'RSA 2048, TLS 1.3 (Node default suites)',
      },
      rounds: rounds.map((r) => ({
        variant: r.over,
        positionsPerSec: speed(r),
        rowsMatchAcks: r.ingest.rowsMatchAcks,
        serverCpuPct: r.ingest.serverCpuPct,
        cpuUsPerPosition: costOf(r),
      })),
      plainPositionsPerSec: plain,
      tlsPositionsPerSec: overTls,
      ratio: overTls / plain,
      allStored: rounds.every((r) => r.ingest.rowsMatchAcks),
      cost,
    };
    printTable(
      'TCP ingest over TLS against plain TCP',
      ['', 'positions/s (best round)'],
      [
        ['plain TCP', fmt(plain)],
        ['TLS', fmt(overTls)],
        ['TLS / plain', pct(result.ratio)],
      ],
    );
    costTable('TCP ingest over TLS against plain TCP', cost);
    if (!result.allStored) throw new Error('a round stored other rows than it acknowledged');
    return result;
  } finally {
    files.remove();
  }
}
