/**
 * The server under test: a real trackgate (`node --import=tsx main.ts`) in its own process, on a
 * temporary SQLite data dir prepared beforehand (account, admin, devices, optional history) by
 * this process through the project's own repositories.
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../../config/config.js';
import { openStorage } from '../../main.js';
import { openDb, type Db } from '../../core/db/db.js';
import { systemClock } from '../../core/clock.js';
import { createAccountsService } from '../../core/accounts/accounts.service.js';
import * as devices from '../../core/devices/devices.repository.js';
import type { DeviceRecord } from '../../core/model/device.js';
import { ROOT, memoryOf, spawnNode, terminate } from './child.js';
import { testEnv } from '../../test/helpers/server.js';

export const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
/** The tests' settings (loopback, free HTTP port, listeners off unless given), for load: no request limits, info log for the `listening` line. */
export function benchEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return testEnv({
    TRACKGATE_ADMIN_API_KEY: ADMIN_KEY,
    TRACKGATE_LICENSES: '1000000',
    TRACKGATE_RATE_LIMIT: '0',
    TRACKGATE_LOG_LEVEL: 'info',
    TRACKGATE_DATA_DIR: dataDir,
    ...extra,
  });
}

export function tempDir(tag: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `trackgate-bench-${tag}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function deviceRecord(id: string, accountId: string, nowMs: number): DeviceRecord {
  return {
    id,
    accountId,
    name: `bench ${id}`,
    description: null,
    min: null,
    tags: {},
    expiresAt: null,
    dailyEmailLimit: 10,
    dailySmsLimit: 10,
    alertEmails: [],
    alertPhones: [],
    protocol: null,
    lastConnection: null,
    model: null,
    protocolOptions: {},
    mqttPasswordHash: null,
    creation: nowMs,
    modification: nowMs,
  };
}

/**
 * Creates the schema, the account with its admin (ADMIN_KEY) and the devices, directly in the
 * database of `dataDir` (or the one `extra.TRACKGATE_DATABASE_URL` names); `fill` may add more
 * (e.g. history) before the handle is closed.
 */
export async function prepareDataDir(
  dataDir: string,
  deviceIds: string[],
  fill?: (db: Db, accountId: string) => Promise<void>,
  extra: Record<string, string> = {},
): Promise<void> {
  const db = await openStorage(loadConfig(benchEnv(dataDir, extra)));
  try {
    const created = await createAccountsService(db, systemClock).bootstrap({
      name: 'Bench account',
      licenses: 1_000_000,
      adminUser: 'admin',
      adminApiKey: ADMIN_KEY,
    });
    const accountId = created?.accountId ?? (await db('accounts').first('id')).id;
    const now = Date.now();
    for (let i = 0; i < deviceIds.length; i += 5000) {
      await db.transaction(async (trx) => {
        for (const id of deviceIds.slice(i, i + 5000)) await devices.insert(trx, deviceRecord(id, accountId, now));
      });
    }
    if (fill) await fill(db, accountId);
  } finally {
    await db.destroy();
  }
}

/** The rows in `locations` of the SQLite database in `dataDir` (a server's, once it stopped). */
export async function rowsStoredIn(dataDir: string): Promise<number> {
  const db = openDb({ dataDir });
  try {
    return Number((await db('locations').count({ n: '*' }))[0].n);
  } finally {
    await db.destroy();
  }
}

export interface ServerProcess {
  pid: number;
  ports: Record<string, number>;
  base: string;
  memory(): Promise<{ rssKb: number; hwmKb: number }>;
  /** the last log lines (for diagnostics) */
  log(): string[];
  stop(): Promise<void>;
}

let built = false;
/** `npm run build` once per bench run (dist/, what `npm start` runs). */
function buildOnce(): void {
  if (built) return;
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`npm run build failed (${r.status ?? r.signal})`);
  built = true;
}

/**
 * Starts `node --import=tsx main.ts` with benchEnv and waits for its `"msg":"listening"` line;
 * with `compiled`, what `npm start` runs instead: the build (`npm run build`, once) and `node
 * --enable-source-maps dist/main.js`, without tsx's loader in each process.
 * BENCH_PROFILE_DIR=<dir> writes a V8 CPU profile of each server process there (for diagnosis);
 * BENCH_NODE_ARGS adds node flags to the server's; BENCH_COMPILED=1 runs every server under test
 * from the build, as `compiled` does (profiles then name the build's functions, without tsx's
 * helpers in between).
 */
export async function startServerProcess(
  dataDir: string,
  extra: Record<string, string> = {},
  cpus?: string,
  options: { compiled?: boolean } = {},
): Promise<ServerProcess> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TRACKGATE_')) env[k] = v;
  Object.assign(env, benchEnv(dataDir, extra));
  const profileDir = process.env.BENCH_PROFILE_DIR;
  // BENCH_NODE_ARGS: more node flags for the server (diagnosis: a heap profiler's --import, a V8 flag to try)
  const extraArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const nodeArgs = [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : []), ...extraArgs];
  if (process.env.BENCH_COMPILED === '1') options = { ...options, compiled: true };
  if (options.compiled) buildOnce();
  const proc = spawnNode(path.join(ROOT, options.compiled ? 'dist/main.js' : 'main.ts'), [], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    nodeArgs: options.compiled ? [...nodeArgs, '--enable-source-maps'] : nodeArgs,
    cpus,
    tsx: !options.compiled,
  });
  const lines: string[] = [];
  let exited = false;
  const exit = new Promise<void>((resolve) => proc.once('exit', () => ((exited = true), resolve())));
  const ports = await new Promise<Record<string, number>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`trackgate did not log "listening" within 60 s:\n${lines.join('\n')}`)),
      60_000,
    );
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`trackgate exited (${code}) before listening:\n${lines.join('\n')}`));
    });
    // BENCH_SERVER_LOG=<file>: every line the server logs is also written there (for diagnosis)
    const logFile = process.env.BENCH_SERVER_LOG
      ? createWriteStream(process.env.BENCH_SERVER_LOG, { flags: 'a' })
      : undefined;
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      logFile?.write(`${line}\n`);
      lines.push(line);
      if (lines.length > 200) lines.shift();
      if (!line.includes('"msg":"listening"')) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { ports: Record<string, number> }).ports);
    });
  });
  return {
    pid: proc.pid!,
    ports,
    base: `http://127.0.0.1:${ports.http}`,
    memory: () => memoryOf(proc.pid!),
    log: () => [...lines],
    async stop() {
      if (!exited) await terminate(proc, exit, 15_000);
    },
  };
}

/** A bearer token for the admin, through the REST API. */
export async function adminToken(base: string): Promise<string> {
  const res = await fetch(`${base}/api/Auth/Token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
  });
  const body = (await res.json()) as { token?: string };
  if (res.status !== 200 || !body.token) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}
