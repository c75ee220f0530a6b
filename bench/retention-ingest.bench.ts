/**
 * TCP ingest while retention purges a backlog (BENCHMARKS.md "retention-ingest"): the rules-ingest
 * load (Teltonika + GT06 trackers, one frame in flight each) on a database holding
 * BENCH_RETENTION_ROWS positions of 2,000 days ago, with TRACKGATE_RETENTION_DAYS=1000 (the
 * generator's fixes, from 2025-01-01 on, are kept; the purge starts
 * 20 s after start and runs through the window) against the same database without retention;
 * rounds alternate, best of each reported; SQLite and PostgreSQL (BENCH_RETENTION_DB=sqlite|postgres
 * for one). On SQLite the purge deletes in batches and must still be running when the window ends,
 * or the figure would not measure it. On PostgreSQL the backlog sits in its month's partition (the
 * template has had the partition maintenance run once, as a box has after its first start since the
 * upgrade), retention drops that partition whole, and the window opens 5 s before the purge's first
 * run so that the drop falls inside it: the backlog must be gone by the window's end.
 * The backlog is written once per database, into a template, and each round starts from a copy of
 * it (the data folder copied; on PostgreSQL `create database … template`), so 10 million rows cost
 * one fill, not one per round.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, cpSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openStorage } from '../server/storage.js';
import { loadConfig } from '../config/config.js';
import { dbKind, type Db } from '../core/db/db.js';
import { systemClock } from '../core/clock.js';
import { silentLogger } from '../core/logger.js';
import { startPartitionMaintenance } from '../core/db/partitions/pg-partitions.js';
import { insertOldRows } from '../test/helpers/old-rows.js';
import { startChild } from './lib/child.js';
import { alternatingRounds, bestOf, connectTeltonikaGt06, teltonikaGt06Ids } from './lib/paired-rounds.js';
import type { StreamResult } from './lib/tracker-generator.js';
import { benchEnv, prepareDataDir, startServerProcess, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';
import { compareCost, costTable, figure, usPer, type Cost } from './lib/cost.js';

const PER_PROTOCOL = 250;
const RECORDS_PER_FRAME = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 2));
const BACKLOG = Number(process.env.BENCH_RETENTION_ROWS ?? 10_000_000);
/** devices the backlog is spread over */
const BACKLOG_DEVICES = 100;
/** the purge's first run after start (core/retention/retention.purger.ts firstDelayMs) */
const PURGE_STARTS_MS = 20_000;
const DURATION_MS = QUICK ? 5_000 : 15_000;
const FRAMES = QUICK ? { teltonika: 80, gt06: 300 } : { teltonika: 300, gt06: 600 };
const GOAL = 0.9;
const PG_URL = process.env.TRACKGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const DAY_MS = 86_400_000;
/** kept: the generator's fixes (bench/lib/frames.ts BASE_FIX_MS, 2025-01-01) are younger; the backlog is older */
const RETENTION_DAYS = 1000;
const BACKLOG_AGE_DAYS = 2000;

type Variant = 'no-purge' | 'purge';
type Backend = 'sqlite' | 'postgres';

interface Round {
  variant: Variant;
  positionsPerSec: number;
  serverCpuPct: number | undefined;
  /** µs of CPU of trackgate's processes per position acknowledged in the window */
  cpuUsPerPosition: number;
  /** backlog rows the purge had removed when the window ended */
  removedByWindowEnd: number;
  /** the purge ran inside the window: SQLite still deleting at its end; PostgreSQL the partition dropped within it */
  purgeInWindow: boolean;
}

export interface RetentionIngestResult {
  name: 'retention-ingest';
  machine: Machine;
  settings: {
    connections: number;
    recordsPerFrame: number;
    backlogRows: number;
    rounds: number;
    windowSeconds: number;
  };
  backends: { backend: Backend; rounds: Round[]; best: Record<Variant, number>; ratio: number; met: boolean }[];
  goal: string;
  met: boolean;
  /** per database: trackgate's CPU per position while purging against without retention (bench/lib/cost.ts) */
  cost: Cost[];
}

const deviceIds = (): string[] => teltonikaGt06Ids(PER_PROTOCOL);

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A database of the bench's own: empty, or a copy of `template`. */
async function freshDatabase(template?: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `tg_bench_ret_${process.pid}_${randomBytes(3).toString('hex')}`;
  await admin(`create database ${name}${template ? ` template ${template}` : ''}`);
  return { name, url: `${PG_URL}/${name}`, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

interface Template {
  dir: string;
  database?: string;
  backlog: number;
  remove(): Promise<void>;
}

/** The data folder (and on PostgreSQL the database) holding the bench's devices and the backlog, once. */
async function makeTemplate(backend: Backend): Promise<Template> {
  const data = tempDir('retention-template');
  const database = backend === 'postgres' ? await freshDatabase() : undefined;
  const storage: Record<string, string> = database ? { TRACKGATE_DATABASE_URL: database.url } : {};
  const t0 = performance.now();
  await prepareDataDir(data.dir, deviceIds(), fillBacklog, storage);
  const backlog = await oldRows(data.dir, storage);
  log(`${backend}: backlog of ${fmt(backlog)} rows written in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return {
    dir: data.dir,
    database: database?.name,
    backlog,
    async remove() {
      data.remove();
      await database?.drop();
    },
  };
}

/** The backlog: BACKLOG rows of BACKLOG_AGE_DAYS ago over the first BACKLOG_DEVICES devices. */
async function fillBacklog(db: Db): Promise<void> {
  const ids = deviceIds().slice(0, BACKLOG_DEVICES);
  const per = Math.ceil(BACKLOG / ids.length);
  for (const id of ids) await insertOldRows(db, id, per, Date.now() - BACKLOG_AGE_DAYS * DAY_MS);
  if (dbKind(db) !== 'postgres') return;
  // the backlog moved out of the default partition into its month's, as the first start after the upgrade does
  const maintenance = startPartitionMaintenance({ db, clock: systemClock, logger: silentLogger, interval: 'month' });
  try {
    await maintenance.run();
  } finally {
    await maintenance.stop();
  }
}

async function oldRows(dataDir: string, storage: Record<string, string>): Promise<number> {
  const db = await openStorage(loadConfig(benchEnv(dataDir, storage)));
  try {
    const cutoff = Date.now() - RETENTION_DAYS * DAY_MS;
    return Number((await db('locations').where('date_time', '<', cutoff).count({ n: '*' }))[0].n);
  } finally {
    await db.destroy();
  }
}

/** The template's files copied into `to` and flushed: the copy's write-back would otherwise slow the round's fsyncs. */
function copyFlushed(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
  for (const f of readdirSync(to, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const fd = openSync(path.join(f.parentPath, f.name), 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

async function once(backend: Backend, variant: Variant, template: Template): Promise<Round> {
  const data = tempDir(`retention-${variant}`);
  const database = template.database ? await freshDatabase(template.database) : undefined;
  const storage: Record<string, string> = database ? { TRACKGATE_DATABASE_URL: database.url } : {};
  try {
    copyFlushed(template.dir, data.dir);
    const backlog = template.backlog;
    const server = await startServerProcess(data.dir, {
      ...storage,
      TRACKGATE_TELTONIKA_PORT: '0',
      TRACKGATE_GT06_PORT: '0',
      ...(variant === 'purge' && { TRACKGATE_RETENTION_DAYS: String(RETENTION_DAYS) }),
    });
    const started = performance.now();
    try {
      const gen = await startChild('tracker-generator.ts');
      let stream: StreamResult;
      try {
        await connectTeltonikaGt06(gen, { teltonika: server.ports.teltonika, gt06: server.ports.gt06 }, PER_PROTOCOL);
        await gen.call('prepare', { framesPerConnection: FRAMES, recordsPerFrame: RECORDS_PER_FRAME });
        // the window opens once the purge runs on SQLite, and 5 s before it on PostgreSQL, where the
        // drop takes about a second (the same waits without retention)
        const opensAtMs = backend === 'postgres' ? PURGE_STARTS_MS - 5000 : PURGE_STARTS_MS + 2000;
        const warmupMs = Math.max(1000, opensAtMs - (performance.now() - started));
        stream = await gen.call<StreamResult>('stream', {
          warmupMs,
          durationMs: DURATION_MS,
          cycle: true,
          watchPid: server.pid,
        });
        await gen.call('close');
      } finally {
        await gen.stop();
      }
      if (stream.errors > 0) throw new Error(`${stream.errors} stream errors: ${stream.firstError}`);
      const left = await oldRows(data.dir, storage);
      const round: Round = {
        variant,
        positionsPerSec: stream.windowPositionsPerSec,
        serverCpuPct: stream.serverCpuPct,
        cpuUsPerPosition: usPer(stream.serverCpuMs ?? NaN, stream.windowPositions),
        removedByWindowEnd: backlog - left,
        purgeInWindow: variant !== 'purge' || (backend === 'postgres' ? left === 0 : left > 0),
      };
      log(
        `${backend} ${variant}: ${fmt(round.positionsPerSec)} positions/s; server ${stream.serverCpuPct?.toFixed(0)} % CPU; purge removed ${fmt(round.removedByWindowEnd)} rows by the window's end`,
      );
      return round;
    } finally {
      await server.stop();
    }
  } finally {
    data.remove();
    await database?.drop();
  }
}

export async function run(): Promise<RetentionIngestResult> {
  const atStart = machine();
  const only = process.env.BENCH_RETENTION_DB as Backend | undefined;
  const results: RetentionIngestResult['backends'] = [];
  for (const backend of (['sqlite', 'postgres'] as const).filter((b) => !only || b === only)) {
    const template = await makeTemplate(backend);
    let rounds: Round[];
    try {
      rounds = await alternatingRounds<Variant, Round>('no-purge', 'purge', ROUNDS, (v) => once(backend, v, template));
    } finally {
      await template.remove();
    }
    const best = {
      'no-purge': bestOf(rounds, 'no-purge', (r) => r.positionsPerSec),
      purge: bestOf(rounds, 'purge', (r) => r.positionsPerSec),
    };
    const ratio = best.purge / best['no-purge'];
    results.push({ backend, rounds, best, ratio, met: ratio >= GOAL && rounds.every((r) => r.purgeInWindow) });
  }
  const result: RetentionIngestResult = {
    name: 'retention-ingest',
    machine: atStart,
    settings: {
      connections: PER_PROTOCOL * 2,
      recordsPerFrame: RECORDS_PER_FRAME,
      backlogRows: BACKLOG,
      rounds: ROUNDS,
      windowSeconds: DURATION_MS / 1000,
    },
    backends: results,
    goal: `>= ${pct(GOAL)} of the rate without purging`,
    met: results.every((r) => r.met),
    cost: results.map((r) => {
      const costs = (v: Variant) => r.rounds.filter((x) => x.variant === v).map((x) => x.cpuUsPerPosition);
      return compareCost(
        'position',
        figure('trackgate while retention purges the backlog', costs('purge')),
        figure('trackgate on the same backlog without retention', costs('no-purge')),
        { name: r.backend },
      );
    }),
  };
  printTable(
    `TCP ingest while retention purges ${fmt(BACKLOG)} old rows vs no purge (${PER_PROTOCOL * 2} trackers; best of ${ROUNDS} alternating rounds, ${DURATION_MS / 1000} s windows)`,
    ['database', 'no purge (positions/s)', 'purging (positions/s)', 'ratio', 'purged in window', 'goal', 'met'],
    results.map((r) => [
      r.backend,
      fmt(r.best['no-purge']),
      fmt(r.best.purge),
      pct(r.ratio),
      r.rounds
        .filter((x) => x.variant === 'purge')
        .map((x) => fmt(x.removedByWindowEnd))
        .join(' / '),
      result.goal,
      r.met ? 'yes' : 'NO',
    ]),
  );
  costTable('TCP ingest while retention purges against without', result.cost);
  return result;
}
