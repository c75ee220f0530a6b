/**
 * Issue 42: the fleet in one call. Requests/s of `GET /api/lastLocations` (bearer token) on a real
 * trackgate whose account has 10,000 devices, each with a last location, against a bare Koa route
 * answering the same body (bench/lib/bare-fleet.ts), in alternating rounds (BENCH_ROUNDS, default
 * 3; 1 with BENCH_QUICK), the best of each reported. Server and baseline run one at a time on the
 * same CPU, autocannon on the other (as bench/rest.bench.ts does); locations come from its generator.
 */
import os from 'node:os';
import type { Db } from '../core/db/db.js';
import * as locations from '../core/locations/locations.repository.js';
import { startChild, type Child } from './lib/child.js';
import type { LoadResult } from './lib/autocannon-child.js';
import { alternatingRounds, bestRound } from './lib/paired-rounds.js';
import { adminToken, prepareDataDir, startServerProcess, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';
import { location } from './rest.bench.js';

const DEVICES = 10_000;
const CONNECTIONS = 4;
const DURATION_S = QUICK ? 3 : 5;
const WARMUP_S = QUICK ? 1 : 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const GOAL = 0.7;
const PIN = os.cpus().length >= 2;
const SERVER_CPUS = PIN ? '1' : undefined;
const GENERATOR_CPUS = PIN ? '0' : undefined;
const FIRST_FIX_MS = Date.UTC(2025, 0, 1);

const deviceId = (i: number) => `35${String(i).padStart(13, '0')}`;

export interface LastLocationsResult {
  name: 'last-locations';
  machine: Machine;
  settings: { devices: number; connections: number; durationS: number; rounds: number; serverCpus: string };
  bodyBytes: number;
  rounds: { variant: 'bare' | 'trackgate'; result: LoadResult }[];
  trackgate: LoadResult;
  baseline: LoadResult;
  ratio: number;
  goal: string;
  met: boolean;
}

/** One last location per device: a stored location each, through the repository (which keeps last_locations). */
async function fill(db: Db, ids: string[]): Promise<void> {
  const rows: locations.LocationRow[] = ids.map((id, i) => {
    const fix = FIRST_FIX_MS + i * 1000;
    return { deviceId: id, dateTime: fix, serverTime: fix, location: location(i) };
  });
  for (let i = 0; i < rows.length; i += 5000)
    await db.transaction((trx) => locations.insertMany(trx, rows.slice(i, i + 5000)));
}

async function load(cannon: Child, url: string, headers: Record<string, string>, duration: number) {
  const r = await cannon.call<LoadResult>('run', { url, method: 'GET', headers, connections: CONNECTIONS, duration });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r;
}

export async function run(): Promise<LastLocationsResult> {
  const atStart = machine();
  const data = tempDir('last-locations');
  const ids = Array.from({ length: DEVICES }, (_, i) => deviceId(i));
  try {
    log(`preparing: ${fmt(DEVICES)} devices, one location each`);
    await prepareDataDir(data.dir, ids, (db) => fill(db, ids));
    const server = await startServerProcess(data.dir, {}, SERVER_CPUS);
    const bare = await startChild('bare-fleet.ts', undefined, SERVER_CPUS);
    const cannon = await startChild('autocannon-child.ts', undefined, GENERATOR_CPUS);
    try {
      const token = await adminToken(server.base);
      const headers = { authorization: `Bearer ${token}` };
      const res = await fetch(`${server.base}/api/lastLocations`, { headers });
      const text = await res.text();
      const body = JSON.parse(text) as { lastLocations: { lastLocation: unknown }[] };
      if (
        res.status !== 200 ||
        body.lastLocations.length !== DEVICES ||
        body.lastLocations.some((e) => !e.lastLocation)
      )
        throw new Error(`GET /api/lastLocations: ${res.status}, ${body.lastLocations?.length} devices`);
      const port = await bare.call<number>('start', { body });
      const urls = {
        trackgate: `${server.base}/api/lastLocations`,
        bare: `http://127.0.0.1:${port}/api/lastLocations`,
      };
      log(
        `answer: ${fmt(text.length)} bytes; warm-up ${WARMUP_S} s each, then ${ROUNDS} rounds of ${DURATION_S} s each`,
      );
      for (const url of Object.values(urls)) await load(cannon, url, headers, WARMUP_S);
      const rounds = await alternatingRounds('bare' as const, 'trackgate' as const, ROUNDS, async (variant) => ({
        variant,
        result: await load(cannon, urls[variant], headers, DURATION_S),
      }));
      const best = (v: string) =>
        bestRound(
          rounds.filter((r) => r.variant === v),
          (r) => r.result.requestsPerSec,
        ).result;
      const trackgate = best('trackgate');
      const baseline = best('bare');
      const ratio = trackgate.requestsPerSec / baseline.requestsPerSec;
      const result: LastLocationsResult = {
        name: 'last-locations',
        machine: atStart,
        settings: {
          devices: DEVICES,
          connections: CONNECTIONS,
          durationS: DURATION_S,
          rounds: ROUNDS,
          serverCpus: SERVER_CPUS ?? 'any',
        },
        bodyBytes: text.length,
        rounds,
        trackgate,
        baseline,
        ratio,
        goal: `>= ${pct(GOAL)} of the bare route`,
        met: ratio >= GOAL,
      };
      printTable(
        `GET /api/lastLocations, ${fmt(DEVICES)} devices (${fmt(text.length)} bytes; autocannon, ${CONNECTIONS} connections, best of ${ROUNDS} rounds of ${DURATION_S} s)`,
        ['scenario', 'trackgate req/s', 'bare Koa req/s', 'ratio', 'goal', 'met', 'p99 ms (tg/bare)'],
        [
          [
            'GET lastLocations',
            fmt(trackgate.requestsPerSec, 1),
            fmt(baseline.requestsPerSec, 1),
            pct(ratio),
            result.goal,
            result.met ? 'yes' : 'NO',
            `${trackgate.latencyP99Ms} / ${baseline.latencyP99Ms}`,
          ],
        ],
      );
      return result;
    } finally {
      await cannon.stop();
      await bare.stop();
      await server.stop();
    }
  } finally {
    data.remove();
  }
}
