/**
 * Issue 2: REST read path. Requests/s of `GET /api/devices/{id}/lastLocation` (bearer token) on a
 * real trackgate, for a device with 1,000 stored locations and one with 1,000,000, each beside a
 * bare Koa app answering the same JSON body on the same route; and `POST /api/Auth/Token` beside a
 * bare Koa POST route returning a token-shaped body. Server, baseline and autocannon each run in
 * their own process; same autocannon settings for both sides, after a warm-up of each.
 */
import type { Db } from '../core/db/db.js';
import * as locations from '../core/locations/locations.repository.js';
import type { Location } from '../core/model/location.js';
import { startChild, type Child } from './lib/child.js';
import type { LoadResult } from './lib/autocannon-child.js';
import { openStorage } from '../main.js';
import { loadConfig } from '../config/config.js';
import { ADMIN_KEY, adminToken, benchEnv, prepareDataDir, startServerProcess, tempDir, type ServerProcess } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';

const CONNECTIONS = 50;
const DURATION_S = QUICK ? 3 : 10;
const WARMUP_S = QUICK ? 1 : 3;
const SMALL = 1_000;
const LARGE = QUICK ? 100_000 : 1_000_000;
const LAST_LOCATION_GOAL = 0.7;

const DEVICE_SMALL = '350000000001000';
const DEVICE_LARGE = '350000001000000';
const FIRST_FIX_MS = Date.UTC(2025, 0, 1);

export interface Comparison {
  scenario: string;
  trackgate: LoadResult;
  baseline: LoadResult;
  ratio: number;
  goal?: string;
  met?: boolean;
}

export interface RestResult {
  name: 'rest';
  machine: Machine;
  settings: { connections: number; durationS: number; warmupS: number };
  fill: { rows: number; seconds: number; rowsPerSec: number }[];
  comparisons: Comparison[];
  /** lastLocation 1M / 1k requests/s */
  largeVsSmall: number;
}

function location(i: number): Location {
  const dateTime = new Date(FIRST_FIX_MS + i * 1000).toISOString();
  return {
    dateTime, latitude: 40.4168 + (i % 1000) * 1e-5, longitude: -3.7038 - (i % 700) * 1e-5, speed: 30 + (i % 60), course: i % 360,
    altitude: 650, accuracy: null, satellites: 9, valid: true, battery: null, fuel: null, temperature: null, temperature2: null,
    rpm: null, milleage: 123.456, alerts: [], hasCriticalAlert: false,
    attributes: { priority: 0, sat: 9, event: 0, ignition: true, motion: true, rssi: 4, power: 12.5, battery: 4, odometer: 123456 },
    protocol: 'teltonika', inputs: [true], serverTime: dateTime,
  };
}

/** `count` locations of one device through the repository, 50,000 rows per transaction. */
async function fill(db: Db, deviceId: string, count: number): Promise<{ rows: number; seconds: number; rowsPerSec: number }> {
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

async function load(cannon: Child, t: Target, duration: number): Promise<LoadResult> {
  const r = await cannon.call<LoadResult>('run', { ...t, connections: CONNECTIONS, duration });
  if (duration >= DURATION_S && (r.non2xx > 0 || r.errors > 0)) {
    throw new Error(`${t.method} ${t.url}: ${r.non2xx} non-2xx responses, ${r.errors} errors: the figures would be meaningless`);
  }
  return r;
}

/** Warm both, then measure the baseline and trackgate back to back with the same settings. */
async function compare(cannon: Child, scenario: string, tg: Target, bare: Target, goal?: number): Promise<Comparison> {
  log(`${scenario}: warm-up ${WARMUP_S} s each, then ${DURATION_S} s each (baseline, trackgate)`);
  await load(cannon, bare, WARMUP_S);
  await load(cannon, tg, WARMUP_S);
  const baseline = await load(cannon, bare, DURATION_S);
  const trackgate = await load(cannon, tg, DURATION_S);
  const ratio = trackgate.requestsPerSec / baseline.requestsPerSec;
  return {
    scenario, trackgate, baseline, ratio,
    ...(goal !== undefined && { goal: `>= ${pct(goal)} of the bare route`, met: ratio >= goal }),
  };
}

async function getJson(url: string, token: string): Promise<object> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as object;
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** One server start: lastLocation of `deviceId` (and the token endpoint when asked) against the bare app. */
async function measure(dataDir: string, deviceId: string, label: string, withToken: boolean, expectedLastMs: number): Promise<Comparison[]> {
  const server: ServerProcess = await startServerProcess(dataDir);
  const bare = await startChild('bare-koa.ts');
  const cannon = await startChild('autocannon-child.ts');
  try {
    const token = await adminToken(server.base);
    const path = `/api/devices/${deviceId}/lastLocation`;
    const body = (await getJson(server.base + path, token)) as { lastLocation: Location };
    if (body.lastLocation.dateTime !== new Date(expectedLastMs).toISOString()) throw new Error(`lastLocation of ${deviceId} is ${body.lastLocation.dateTime}`);
    const tokenBody = { success: true, token, expires: new Date(Date.now() + 3600_000).toISOString() };
    const barePort = await bare.call<number>('start', { lastLocation: body, token: tokenBody });
    const bareBase = `http://127.0.0.1:${barePort}`;
    const auth = { authorization: `Bearer ${token}` };
    const out = [await compare(cannon, `GET lastLocation, ${label}`, { url: server.base + path, method: 'GET', headers: auth }, { url: bareBase + path, method: 'GET', headers: auth }, LAST_LOCATION_GOAL)];
    if (withToken) {
      const post = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }) };
      out.push(await compare(cannon, 'POST /api/Auth/Token', { url: `${server.base}/api/Auth/Token`, ...post }, { url: `${bareBase}/api/Auth/Token`, ...post }));
    }
    return out;
  } finally {
    await cannon.stop();
    await bare.stop();
    await server.stop();
  }
}

export async function run(): Promise<RestResult> {
  const atStart = machine();
  const data = tempDir('rest');
  try {
    const fills: RestResult['fill'] = [];
    log(`preparing: 2 devices, ${fmt(SMALL)} locations for ${DEVICE_SMALL}`);
    await prepareDataDir(data.dir, [DEVICE_SMALL, DEVICE_LARGE], async (db) => {
      fills.push(await fill(db, DEVICE_SMALL, SMALL));
    });
    const comparisons = await measure(data.dir, DEVICE_SMALL, `${fmt(SMALL)} stored locations`, true, FIRST_FIX_MS + (SMALL - 1) * 1000);

    log(`filling ${fmt(LARGE)} locations for ${DEVICE_LARGE} (insertMany, 50,000 rows per transaction)`);
    const db = await openStorage(loadConfig(benchEnv(data.dir)));
    try {
      const f = await fill(db, DEVICE_LARGE, LARGE);
      fills.push(f);
      log(`filled ${fmt(f.rows)} rows in ${f.seconds.toFixed(1)} s (${fmt(f.rowsPerSec)} rows/s)`);
    } finally {
      await db.destroy();
    }
    comparisons.push(...(await measure(data.dir, DEVICE_LARGE, `${fmt(LARGE)} stored locations`, false, FIRST_FIX_MS + (LARGE - 1) * 1000)));

    const small = comparisons[0];
    const large = comparisons[comparisons.length - 1];
    const result: RestResult = {
      name: 'rest',
      machine: atStart,
      settings: { connections: CONNECTIONS, durationS: DURATION_S, warmupS: WARMUP_S },
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
    `REST (autocannon, ${r.settings.connections} connections, ${r.settings.durationS} s each after ${r.settings.warmupS} s warm-up)`,
    ['scenario', 'trackgate req/s', 'bare Koa req/s', 'ratio', 'goal', 'met', 'p99 ms (tg/bare)', 'generator CPU (tg/bare)'],
    r.comparisons.map((c) => [
      c.scenario, fmt(c.trackgate.requestsPerSec), fmt(c.baseline.requestsPerSec), pct(c.ratio), c.goal ?? '-', c.met === undefined ? '-' : c.met ? 'yes' : 'NO',
      `${c.trackgate.latencyP99Ms} / ${c.baseline.latencyP99Ms}`, `${c.trackgate.generatorCpuPct.toFixed(0)} % / ${c.baseline.generatorCpuPct.toFixed(0)} %`,
    ]),
  );
  console.log(`lastLocation with ${fmt(r.fill[r.fill.length - 1].rows)} stored vs ${fmt(r.fill[0].rows)} stored: ${pct(r.largeVsSmall)} of the requests/s`);
  for (const f of r.fill) console.log(`fill: ${fmt(f.rows)} rows in ${f.seconds.toFixed(1)} s (${fmt(f.rowsPerSec)} rows/s)`);
}
