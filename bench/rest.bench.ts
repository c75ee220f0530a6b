/**
 * Issue 2: REST read path. Requests/s of `GET /api/devices/{id}/lastLocation` (bearer token) on a
 * real trackgate, for a device with 1,000 stored locations and one with 1,000,000, each beside a
 * bare Koa app answering the same JSON body on the same route; and `POST /api/Auth/Token` beside a
 * bare Koa POST route returning a token-shaped body. Both devices are stored before one server
 * starts, so both are read from the same process. Server, baseline and the generator each run in
 * their own process; the generator is wrk (Debian's package: a C client, faster than the server),
 * or autocannon where wrk is not installed (it cannot load the server as hard, which flatters the
 * ratio: the table says which one ran). Same settings for both sides, after a warm-up of each;
 * BENCH_ROUNDS rounds (default 3) of baseline, trackgate and the ceiling interleaved, the best of each.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import type { Db } from '../core/db/db.js';
import * as locations from '../core/locations/locations.repository.js';
import type { Location } from '../core/model/location.js';
import { startChild, type Child } from './lib/child.js';
import type { LoadResult } from './lib/autocannon-child.js';
import { hasWrk, runWrk } from './lib/wrk.js';
import {
  ADMIN_KEY,
  adminToken,
  prepareDataDir,
  startServerProcess,
  tempDir,
  type ServerProcess,
} from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';

const CONNECTIONS = 50;
const DURATION_S = QUICK ? 3 : 10;
const WARMUP_S = QUICK ? 1 : 3;
const SMALL = 1_000;
const LARGE = QUICK ? 100_000 : 1_000_000;
const LAST_LOCATION_GOAL = 0.7;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const WRK = process.env.BENCH_HTTP_GENERATOR !== 'autocannon' && hasWrk();
/**
 * With two or more CPUs the server (trackgate or the bare app, one at a time) runs on CPU 1 and
 * autocannon on CPU 0 (taskset): left to the scheduler, the two sometimes share a core and a 10 s
 * figure swings by a third either way.
 */
const PIN = os.cpus().length >= 2;
const SERVER_CPUS = PIN ? '1' : undefined;
const GENERATOR_CPUS = PIN ? '0' : undefined;

const DEVICE_SMALL = '350000000001000';
const DEVICE_LARGE = '350000001000000';
const FIRST_FIX_MS = Date.UTC(2025, 0, 1);

export interface Comparison {
  scenario: string;
  trackgate: LoadResult;
  baseline: LoadResult;
  ratio: number;
  /** the pre-serialised-text bare route (lastLocation only): the cheapest answer Koa gives */
  ceiling?: LoadResult;
  goal?: string;
  met?: boolean;
}

export interface RestResult {
  name: 'rest';
  machine: Machine;
  settings: {
    connections: number;
    durationS: number;
    warmupS: number;
    rounds: number;
    generator: 'wrk' | 'autocannon';
    serverCpus: string;
    generatorCpus: string;
  };
  fill: { rows: number; seconds: number; rowsPerSec: number }[];
  comparisons: Comparison[];
  /** lastLocation 1M / 1k requests/s */
  largeVsSmall: number;
}

export function location(i: number): Location {
  const dateTime = new Date(FIRST_FIX_MS + i * 1000).toISOString();
  return {
    dateTime,
    latitude: 40.4168 + (i % 1000) * 1e-5,
    longitude: -3.7038 - (i % 700) * 1e-5,
    speed: 30 + (i % 60),
    course: i % 360,
    altitude: 650,
    satellites: 9,
    valid: true,
    milleage: 123.456,
    alerts: [],
    hasCriticalAlert: false,
    attributes: {
      priority: 0,
      sat: 9,
      event: 0,
      ignition: true,
      motion: true,
      rssi: 4,
      power: 12.5,
      battery: 4,
      odometer: 123456,
    },
    protocol: 'teltonika',
    inputs: [true],
    serverTime: dateTime,
  };
}

/** `count` locations of one device through the repository, 50,000 rows per transaction. */
async function fill(
  db: Db,
  deviceId: string,
  count: number,
): Promise<{ rows: number; seconds: number; rowsPerSec: number }> {
  const t0 = performance.now();
  for (let i = 0; i < count; i += 50_000) {
    const rows: locations.LocationRow[] = [];
    for (let j = i; j < Math.min(count, i + 50_000); j++) {
      const fix = FIRST_FIX_MS + j * 1000;
      rows.push({ deviceId, dateTime: fix, serverTime: fix, location: location(j) });
    }
    await db.transaction((trx) => locations.insertMany(trx, rows));
  }
  const seconds = (performance.now() - t0) / 1000;
  return { rows: count, seconds, rowsPerSec: count / seconds };
}

interface Target {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

async function load(cannon: Child | undefined, t: Target, duration: number): Promise<LoadResult> {
  const r = cannon
    ? await cannon.call<LoadResult>('run', { ...t, connections: CONNECTIONS, duration })
    : await runWrk(t, { connections: CONNECTIONS, durationS: duration, cpus: GENERATOR_CPUS });
  if (duration >= DURATION_S && (r.non2xx > 0 || r.errors > 0)) {
    throw new Error(
      `${t.method} ${t.url}: ${r.non2xx} non-2xx responses, ${r.errors} errors: the figures would be meaningless`,
    );
  }
  return r;
}

const best = (runs: LoadResult[]): LoadResult => runs.reduce((a, b) => (b.requestsPerSec > a.requestsPerSec ? b : a));

/** Warm each, then ROUNDS rounds of the baseline, trackgate (and the ceiling) back to back with the same settings; the best of each. */
async function compare(
  cannon: Child | undefined,
  scenario: string,
  tg: Target,
  bare: Target,
  goal?: number,
  text?: Target,
): Promise<Comparison> {
  log(
    `${scenario}: warm-up ${WARMUP_S} s each, then ${ROUNDS} rounds of ${DURATION_S} s each (baseline, trackgate${text ? ', pre-serialised baseline' : ''})`,
  );
  for (const t of [bare, tg, text]) if (t) await load(cannon, t, WARMUP_S);
  const runs: { baseline: LoadResult[]; trackgate: LoadResult[]; ceiling: LoadResult[] } = {
    baseline: [],
    trackgate: [],
    ceiling: [],
  };
  for (let r = 0; r < ROUNDS; r++) {
    runs.baseline.push(await load(cannon, bare, DURATION_S));
    runs.trackgate.push(await load(cannon, tg, DURATION_S));
    if (text) runs.ceiling.push(await load(cannon, text, DURATION_S));
  }
  const baseline = best(runs.baseline);
  const trackgate = best(runs.trackgate);
  const ceiling = text ? best(runs.ceiling) : undefined;
  const ratio = trackgate.requestsPerSec / baseline.requestsPerSec;
  return {
    scenario,
    trackgate,
    baseline,
    ratio,
    ceiling,
    ...(goal !== undefined && { goal: `>= ${pct(goal)} of the bare route`, met: ratio >= goal }),
  };
}

async function getJson(url: string, token: string): Promise<object> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as object;
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** One server and one bare app: lastLocation of each device and the token endpoint, each against the bare route. */
async function measure(dataDir: string): Promise<Comparison[]> {
  const server: ServerProcess = await startServerProcess(dataDir, {}, SERVER_CPUS);
  const bare = await startChild('bare-koa.ts', undefined, SERVER_CPUS);
  const cannon = WRK ? undefined : await startChild('autocannon-child.ts', undefined, GENERATOR_CPUS);
  try {
    const token = await adminToken(server.base);
    const auth = { authorization: `Bearer ${token}` };
    const devices = [
      { id: DEVICE_SMALL, label: `${fmt(SMALL)} stored locations`, lastMs: FIRST_FIX_MS + (SMALL - 1) * 1000 },
      { id: DEVICE_LARGE, label: `${fmt(LARGE)} stored locations`, lastMs: FIRST_FIX_MS + (LARGE - 1) * 1000 },
    ];
    const bodies = [];
    for (const d of devices) {
      const body = (await getJson(`${server.base}/api/devices/${d.id}/lastLocation`, token)) as {
        lastLocation: Location;
      };
      if (body.lastLocation.dateTime !== new Date(d.lastMs).toISOString())
        throw new Error(`lastLocation of ${d.id} is ${body.lastLocation.dateTime}`);
      bodies.push(body);
    }
    // The bare route answers the small device's body (the large one's differs only in digits).
    const tokenBody = { success: true, token, expires: new Date(Date.now() + 3600_000).toISOString() };
    const ports = await bare.call<{ plain: number; text: number }>('start', {
      lastLocation: bodies[0],
      token: tokenBody,
    });
    const bareBase = `http://127.0.0.1:${ports.plain}`;
    const textBase = `http://127.0.0.1:${ports.text}`;
    const out: Comparison[] = [];
    for (const d of devices) {
      const path = `/api/devices/${d.id}/lastLocation`;
      out.push(
        await compare(
          cannon,
          `GET lastLocation, ${d.label}`,
          { url: server.base + path, method: 'GET', headers: auth },
          { url: bareBase + path, method: 'GET', headers: auth },
          LAST_LOCATION_GOAL,
          { url: textBase + path, method: 'GET', headers: auth },
        ),
      );
    }
    const post = {
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
    };
    out.push(
      await compare(
        cannon,
        'POST /api/Auth/Token',
        { url: `${server.base}/api/Auth/Token`, ...post },
        { url: `${bareBase}/api/Auth/Token`, ...post },
      ),
    );
    return out;
  } finally {
    await cannon?.stop();
    await bare.stop();
    await server.stop();
  }
}

export async function run(): Promise<RestResult> {
  const atStart = machine();
  const data = tempDir('rest');
  try {
    const fills: RestResult['fill'] = [];
    log(
      `preparing: 2 devices, ${fmt(SMALL)} locations for ${DEVICE_SMALL} and ${fmt(LARGE)} for ${DEVICE_LARGE} (insertMany, 50,000 rows per transaction)`,
    );
    await prepareDataDir(data.dir, [DEVICE_SMALL, DEVICE_LARGE], async (db) => {
      fills.push(await fill(db, DEVICE_SMALL, SMALL));
      fills.push(await fill(db, DEVICE_LARGE, LARGE));
    });
    const f = fills[1];
    log(`filled ${fmt(f.rows)} rows in ${f.seconds.toFixed(1)} s (${fmt(f.rowsPerSec)} rows/s)`);
    // The fill leaves hundreds of MB of dirty pages: written back now, not during the first measurement.
    spawnSync('sync');
    // This process (idle while measuring) stays off the server's CPU too, and lets go afterwards:
    // the processes it starts later inherit its CPUs.
    const pinSelf = (cpus: string) =>
      spawnSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });
    if (GENERATOR_CPUS) pinSelf(GENERATOR_CPUS);
    const comparisons = await measure(data.dir).finally(() => GENERATOR_CPUS && pinSelf(`0-${os.cpus().length - 1}`));
    const [small, large] = comparisons;
    const result: RestResult = {
      name: 'rest',
      machine: atStart,
      settings: {
        connections: CONNECTIONS,
        durationS: DURATION_S,
        warmupS: WARMUP_S,
        rounds: ROUNDS,
        generator: WRK ? 'wrk' : 'autocannon',
        serverCpus: SERVER_CPUS ?? 'any',
        generatorCpus: GENERATOR_CPUS ?? 'any',
      },
      fill: fills,
      comparisons,
      largeVsSmall: large.trackgate.requestsPerSec / small.trackgate.requestsPerSec,
    };
    printRest(result);
    return result;
  } finally {
    data.remove();
  }
}

export function printRest(r: RestResult): void {
  printTable(
    `REST (${r.settings.generator}, ${r.settings.connections} connections, best of ${r.settings.rounds} interleaved rounds of ${r.settings.durationS} s after ${r.settings.warmupS} s warm-up; server on CPU ${r.settings.serverCpus}, generator on CPU ${r.settings.generatorCpus})`,
    [
      'scenario',
      'trackgate req/s',
      'bare Koa req/s',
      'ratio',
      'goal',
      'met',
      'pre-serialised bare req/s (ratio)',
      'p99 ms (tg/bare)',
      'generator CPU (tg/bare)',
    ],
    r.comparisons.map((c) => [
      c.scenario,
      fmt(c.trackgate.requestsPerSec),
      fmt(c.baseline.requestsPerSec),
      pct(c.ratio),
      c.goal ?? '-',
      c.met === undefined ? '-' : c.met ? 'yes' : 'NO',
      c.ceiling
        ? `${fmt(c.ceiling.requestsPerSec)} (${pct(c.trackgate.requestsPerSec / c.ceiling.requestsPerSec)})`
        : '-',
      `${c.trackgate.latencyP99Ms} / ${c.baseline.latencyP99Ms}`,
      `${c.trackgate.generatorCpuPct.toFixed(0)} % / ${c.baseline.generatorCpuPct.toFixed(0)} %`,
    ]),
  );
  console.log(
    `lastLocation with ${fmt(r.fill[r.fill.length - 1].rows)} stored vs ${fmt(r.fill[0].rows)} stored: ${pct(r.largeVsSmall)} of the requests/s`,
  );
  for (const f of r.fill)
    console.log(`fill: ${fmt(f.rows)} rows in ${f.seconds.toFixed(1)} s (${fmt(f.rowsPerSec)} rows/s)`);
}
