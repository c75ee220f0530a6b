/**
 * TCP ingest on PostgreSQL (BENCHMARKS.md "pg-ingest"): the tcp-ingest load against trackgate
 * storing in a database of the bench's own on BENCH_PG_URL. Measured: positions stored AND
 * acknowledged per second; the rows in `locations` must equal them. Baseline: the same rows by
 * `COPY FROM STDIN`, 10,000 a COPY (bench/lib/pg-copy.ts); for information, by the `unnest` insert
 * trackgate uses. Rounds alternate on fresh databases, best of each reported; trackgate runs on the
 * last CPU, the generator on CPU 0.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { pgInt8Array, pgTextArray } from '../core/db/pg-arrays.js';
import { cpuMsOfNamed, machineBusyMs, startChild } from './lib/child.js';
import { BENCH_PROTOCOLS, type BenchProtocol } from './lib/frames.js';
import {
  CONNECTIONS,
  framesPerConnection,
  GATEWAY_CPUS,
  GATEWAY_PROCESSES,
  GENERATOR_CPUS,
  MIX,
  RECORDS_PER_FRAME,
  SERVER_CPUS,
  connectAll,
  deviceIds,
  everyConnection,
  pinSelf,
  placeGatewayProcesses,
  rawBlocks,
  rowsOf,
  type RawRow,
} from './lib/ingest-load.js';
import { bestOf, bestRound } from './lib/paired-rounds.js';
import { copyFrom, copyText } from './lib/pg-copy.js';
import type { StreamResult } from './lib/tracker-generator.js';
import { prepareDataDir, startServerProcess, rowsStoredIn, tempDir } from './lib/trackgate.js';
import { QUICK, cpuUsPer, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';
import { compareCost, costTable, figure, usPer, type Cost } from './lib/cost.js';

const PG_URL = (process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
/** rounds of each (BENCH_ROUNDS: another count) */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const WARMUP_MS = QUICK ? 1_000 : 3_000;
const DURATION_MS = QUICK ? 4_000 : 15_000;
/** pre-encoded frames per connection: far more than a connection gets acknowledged in the window */
const FRAMES: Record<BenchProtocol, number> = framesPerConnection(
  QUICK
    ? { teltonika: 60, gt06: 300, gl200: 300, ruptela: 60, wialon: 300, navis: 60 }
    : { teltonika: 300, gt06: 500, gl200: 500, ruptela: 300, wialon: 500, navis: 300 },
);
/** the baseline's rows: this many frames of every connection (5,950 rows per frame round) */
const BASELINE_FRAMES = QUICK ? 10 : 60;
const TX_ROWS = 10_000;
const GOAL = 0.5;
/** the cost goal (issue 45): trackgate's CPU per position on PostgreSQL at most its CPU per position on SQLite + 50 % */
const COST_GOAL = 1.5;

/** trackgate on PostgreSQL, trackgate on SQLite (same load: the cost baseline), COPY (the rate baseline) */
type Variant = 'trackgate' | 'sqlite' | 'copy';

interface Round {
  variant: Variant;
  /** trackgate, sqlite: positions acknowledged per second in the window; copy: rows per second copied */
  perSec: number;
  trackgate?: {
    windowPositions: number;
    ackedPositions: number;
    storedRows: number;
    rowsMatchAcks: boolean;
    serverCpuPct: number | undefined;
    generatorCpuPct: number;
    drainSeconds: number;
    /** every CPU of the machine, and PostgreSQL's processes, during the window (% of one core) */
    machineCpuPct: number;
    postgresCpuPct: number;
    /** µs of CPU per position acknowledged in the window: trackgate's processes (core and gateway processes); PostgreSQL's (0 on SQLite) */
    cpuUsPerPosition: number;
    postgresCpuUsPerPosition: number;
  };
  /**
   * postgresCpuMs, clientCpuMs, machineCpuMs: CPU time while the COPYs ran (PostgreSQL's processes;
   * the bench's process sending them; every CPU of the machine)
   */
  copy?: {
    rows: number;
    seconds: number;
    statements: number;
    postgresCpuMs: number;
    clientCpuMs: number;
    machineCpuMs: number;
  };
  /** the unnest insert of the same rows (information) */
  unnest?: { rows: number; seconds: number; perSec: number };
}

export interface PgIngestResult {
  name: 'pg-ingest';
  machine: Machine;
  settings: {
    connections: number;
    mix: Record<BenchProtocol, number>;
    recordsPerFrame: number;
    warmupSeconds: number;
    windowSeconds: number;
    rounds: number;
    baselineRows: number;
    rowsPerCopy: number;
    serverCpus: string;
    generatorCpus: string;
    postgres: string;
    /** trackgate's gateway processes (bench/lib/ingest-load.ts GATEWAY_PROCESSES) and their CPUs */
    gatewayProcesses: string;
    gatewayCpus: string;
  };
  rounds: Round[];
  /** sqlite: trackgate on SQLite, same load (the cost baseline) */
  best: { trackgate: number; copy: number; unnest: number; sqlite: number };
  ratio: number;
  /**
   * Where the CPU goes, per position of the best trackgate round (µs of CPU, every process) and per
   * row of the best COPY round, and what that means for the goal on this machine's CPUs.
   */
  cpu: CpuBudget;
  goal: string;
  met: boolean;
  /**
   * trackgate's CPU per position on PostgreSQL against the same on SQLite (the goal), and trackgate's
   * and PostgreSQL's together against COPY's per row, PostgreSQL's processes counted (bench/lib/cost.ts)
   */
  cost: Cost[];
}

export interface CpuBudget {
  cpus: number;
  /** per position acknowledged, in the best trackgate round: µs of CPU */
  perPosition: { machine: number; trackgate: number; postgres: number; generator: number };
  /** per row copied, in the best COPY round: µs of CPU of PostgreSQL's processes, and of the machine */
  copyPerRow: { postgres: number; machine: number };
  /** the goal's rate: GOAL × the best COPY rate */
  goalPerSec: number;
  /** CPUs the goal's rate takes at this round's cost per position (more than `cpus`: out of reach on this machine at this cost) */
  coresAtGoal: number;
  /** CPUs the goal's rate takes for PostgreSQL's and the generator's part alone, as if trackgate's processes cost nothing */
  coresAtGoalWithoutTrackgate: number;
  /** positions/s with every CPU busy at this round's cost per position */
  ceilingPerSec: number;
}

/** A database of the bench's own on PG_URL, dropped by `drop()`. */
async function freshDatabase(tag: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `tg_bench_${tag}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: `${PG_URL}/postgres` });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  return { url: `${PG_URL}/${name}`, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

async function countRows(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query('select count(*) as n from locations')).rows[0].n);
  } finally {
    await c.end();
  }
}

/** One round of trackgate on PostgreSQL (a fresh database) or, the cost baseline, on SQLite with the same load. */
async function trackgateRound(on: 'postgres' | 'sqlite'): Promise<Round> {
  const data = tempDir('pg-ingest');
  const database = on === 'postgres' ? await freshDatabase('tg') : undefined;
  try {
    const storage: Record<string, string> = database ? { TRACKGATE_DATABASE_URL: database.url } : {};
    await prepareDataDir(data.dir, deviceIds(), undefined, storage);
    pinSelf(GENERATOR_CPUS);
    const server = await startServerProcess(
      data.dir,
      {
        ...storage,
        ...Object.fromEntries(BENCH_PROTOCOLS.map((p) => [`TRACKGATE_${p.toUpperCase()}_PORT`, '0'])),
        TRACKGATE_GATEWAY_PROCESSES: GATEWAY_PROCESSES,
      },
      SERVER_CPUS,
    );
    placeGatewayProcesses(server.pid);
    let stream: StreamResult;
    try {
      const gen = await startChild('tracker-generator.ts', undefined, GENERATOR_CPUS);
      try {
        await connectAll(
          gen,
          Object.fromEntries(BENCH_PROTOCOLS.map((p) => [p, server.ports[p]])) as Record<BenchProtocol, number>,
        );
        await gen.call('prepare', { framesPerConnection: FRAMES, recordsPerFrame: RECORDS_PER_FRAME });
        stream = await gen.call<StreamResult>('stream', {
          warmupMs: WARMUP_MS,
          durationMs: DURATION_MS,
          cycle: false,
          watchPid: server.pid,
          watchPostgres: database !== undefined,
        });
        await gen.call('close');
      } finally {
        await gen.stop();
      }
    } finally {
      await server.stop();
      pinSelf(undefined);
    }
    if (stream.errors > 0) throw new Error(`${stream.errors} stream errors: ${stream.firstError}`);
    if (stream.exhausted > 0)
      log(`WARNING: ${stream.exhausted} connections ran out of frames before the window closed`);
    const storedRows = database ? await countRows(database.url) : await rowsStoredIn(data.dir);
    const cpuUsPerPosition = usPer(stream.serverCpuMs ?? NaN, stream.windowPositions);
    const postgresCpuUsPerPosition = database ? usPer(stream.postgresCpuMs ?? NaN, stream.windowPositions) : 0;
    log(
      `trackgate on ${database ? 'PostgreSQL' : 'SQLite'}: ${fmt(stream.windowPositionsPerSec)} positions/s acknowledged; ${fmt(storedRows)} rows stored, ${fmt(stream.ackedPositions)} acknowledged; CPU: trackgate ${stream.serverCpuPct?.toFixed(0)} %${database ? `, PostgreSQL ${stream.postgresCpuPct?.toFixed(0)} %` : ''}, machine ${stream.machineCpuPct.toFixed(0)} %; per position: trackgate ${cpuUsPerPosition.toFixed(1)} µs${database ? `, PostgreSQL ${postgresCpuUsPerPosition.toFixed(1)} µs` : ''}`,
    );
    return {
      variant: database ? 'trackgate' : 'sqlite',
      perSec: stream.windowPositionsPerSec,
      trackgate: {
        windowPositions: stream.windowPositions,
        ackedPositions: stream.ackedPositions,
        storedRows,
        rowsMatchAcks: storedRows === stream.ackedPositions,
        serverCpuPct: stream.serverCpuPct,
        generatorCpuPct: stream.generatorCpuPct,
        drainSeconds: stream.drainSeconds,
        machineCpuPct: stream.machineCpuPct,
        postgresCpuPct: stream.postgresCpuPct ?? 0,
        cpuUsPerPosition,
        postgresCpuUsPerPosition,
      },
    };
  } finally {
    await database?.drop();
    data.remove();
  }
}

const COPY = 'copy locations (device_id, date_time, server_time, data) from stdin';
const UNNEST =
  'insert into locations (device_id, date_time, server_time, data) select * from unnest($1::text[], $2::int8[], $3::int8[], $4::text[])';

/** The baseline rows, decoded and serialised 50,000 at a time (outside the clock). */
const blocks = (): Generator<RawRow[]> => rawBlocks(rowsOf(everyConnection(BASELINE_FRAMES)));

/** COPY's text format of `rows`, in buffers of about 64 KiB. */
function copyChunks(rows: RawRow[]): Buffer[] {
  const chunks: Buffer[] = [];
  let text = '';
  for (const r of rows) {
    text += `${r[0]}\t${r[1]}\t${r[2]}\t${copyText(r[3])}\n`;
    if (text.length >= 65_536) {
      chunks.push(Buffer.from(text, 'utf8'));
      text = '';
    }
  }
  if (text) chunks.push(Buffer.from(text, 'utf8'));
  return chunks;
}

async function copyRound(): Promise<Round> {
  const data = tempDir('pg-copy');
  const database = await freshDatabase('copy');
  try {
    await prepareDataDir(data.dir, deviceIds(), undefined, { TRACKGATE_DATABASE_URL: database.url });
    pinSelf(SERVER_CPUS);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      let copied = 0;
      let copyMs = 0;
      let postgresCpuMs = 0;
      let machineCpuMs = 0;
      let clientCpuMs = 0;
      let statements = 0;
      let inserted = 0;
      let insertMs = 0;
      // COPY every block, then (information) the unnest insert of the same rows into the emptied table
      const all: RawRow[][] = [];
      for (const block of blocks()) {
        for (let i = 0; i < block.length; i += TX_ROWS) {
          const chunks = copyChunks(block.slice(i, i + TX_ROWS));
          const cpu0 = { postgres: cpuMsOfNamed('postgres'), machine: machineBusyMs() };
          const client0 = process.cpuUsage();
          const t0 = performance.now();
          copied += await copyFrom(client, COPY, chunks);
          copyMs += performance.now() - t0;
          const used = process.cpuUsage(client0);
          clientCpuMs += (used.user + used.system) / 1000;
          postgresCpuMs += cpuMsOfNamed('postgres') - cpu0.postgres;
          machineCpuMs += machineBusyMs() - cpu0.machine;
          statements++;
        }
        all.push(block);
      }
      if ((await countRows(database.url)) !== copied)
        throw new Error('COPY: the rows in locations differ from the rows copied');
      await client.query('truncate locations');
      for (const block of all) {
        for (let i = 0; i < block.length; i += TX_ROWS) {
          const rows = block.slice(i, i + TX_ROWS);
          const t0 = performance.now();
          const params = [
            pgTextArray(rows.map((r) => r[0])),
            pgInt8Array(rows.map((r) => r[1])),
            pgInt8Array(rows.map((r) => r[2])),
            pgTextArray(rows.map((r) => r[3])),
          ];
          inserted += (await client.query(UNNEST, params)).rowCount ?? 0;
          insertMs += performance.now() - t0;
        }
      }
      if (inserted !== copied) throw new Error(`unnest inserted ${inserted} rows, COPY ${copied}`);
      const perSec = copied / (copyMs / 1000);
      const unnest = { rows: inserted, seconds: insertMs / 1000, perSec: inserted / (insertMs / 1000) };
      log(
        `COPY: ${fmt(perSec)} rows/s (${fmt(copied)} rows, ${statements} COPYs of ${fmt(TX_ROWS)}; PostgreSQL ${((postgresCpuMs / copyMs) * 100).toFixed(0)} % CPU); unnest insert of the same rows: ${fmt(unnest.perSec)} rows/s`,
      );
      return {
        variant: 'copy',
        perSec,
        copy: { rows: copied, seconds: copyMs / 1000, statements, postgresCpuMs, clientCpuMs, machineCpuMs },
        unnest,
      };
    } finally {
      await client.end();
      pinSelf(undefined);
    }
  } finally {
    await database.drop();
    data.remove();
  }
}

export async function run(): Promise<PgIngestResult> {
  const atStart = machine();
  const version = await (async () => {
    const c = new pg.Client({ connectionString: `${PG_URL}/postgres` });
    await c.connect();
    try {
      return String((await c.query('show server_version')).rows[0].server_version);
    } finally {
      await c.end();
    }
  })();
  log(
    `PostgreSQL ${version} at ${PG_URL.replace(/\/\/[^@]*@/, '//')}; ${fmt(CONNECTIONS)} trackers (${BENCH_PROTOCOLS.map((p) => `${MIX[p]} ${p}`).join(', ')}); CPUs: trackgate ${SERVER_CPUS ?? 'any'}, generator ${GENERATOR_CPUS ?? 'any'}; ${ROUNDS} round(s) each`,
  );
  // COPY, trackgate on PostgreSQL and on SQLite in each round; the order turns round by round, so
  // PostgreSQL and SQLite alternate which goes first
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const order: Variant[] = i % 2 === 0 ? ['copy', 'trackgate', 'sqlite'] : ['sqlite', 'trackgate', 'copy'];
    for (const v of order)
      rounds.push(await (v === 'copy' ? copyRound() : trackgateRound(v === 'sqlite' ? v : 'postgres')));
  }
  const best = {
    trackgate: bestOf(rounds, 'trackgate', (r) => r.perSec),
    copy: bestOf(rounds, 'copy', (r) => r.perSec),
    unnest: bestOf(rounds, 'copy', (r) => r.unnest?.perSec ?? 0),
    sqlite: bestOf(rounds, 'sqlite', (r) => r.perSec),
  };
  const ratio = best.trackgate / best.copy;
  const tg = rounds.filter((r) => r.variant === 'trackgate');
  const copies = rounds.filter((r) => r.variant === 'copy');
  const onSqlite = rounds.filter((r) => r.variant === 'sqlite');
  const copyUs = (r: Round, ms: (c: NonNullable<Round['copy']>) => number) => usPer(ms(r.copy!), r.copy!.rows);
  const cost = [
    compareCost(
      'position',
      figure(
        'trackgate on PostgreSQL (core + gateway processes)',
        tg.map((r) => r.trackgate!.cpuUsPerPosition),
      ),
      figure(
        'trackgate on SQLite, same load',
        onSqlite.map((r) => r.trackgate!.cpuUsPerPosition),
      ),
      { name: 'PostgreSQL vs SQLite', goal: { text: '<= SQLite + 50 %', maxRatio: COST_GOAL } },
    ),
    compareCost(
      'position',
      figure(
        "trackgate on PostgreSQL and PostgreSQL's processes, per position",
        tg.map((r) => r.trackgate!.cpuUsPerPosition + r.trackgate!.postgresCpuUsPerPosition),
      ),
      figure(
        `COPY FROM STDIN, ${fmt(TX_ROWS)} rows a COPY: PostgreSQL's processes and the client, per row`,
        copies.map((r) => copyUs(r, (c) => c.postgresCpuMs + c.clientCpuMs)),
      ),
      {
        name: 'against COPY',
        more: [
          figure(
            "PostgreSQL's processes during trackgate's window, per row",
            tg.map((r) => r.trackgate!.postgresCpuUsPerPosition),
          ),
          figure(
            "PostgreSQL's processes during the COPYs, per row",
            copies.map((r) => copyUs(r, (c) => c.postgresCpuMs)),
          ),
          figure(
            'the COPY client (this process), per row',
            copies.map((r) => copyUs(r, (c) => c.clientCpuMs)),
          ),
        ],
      },
    ),
  ];
  const cpu = cpuBudget(
    bestRound(tg, (r) => r.perSec),
    bestRound(copies, (r) => r.perSec),
  );
  const result: PgIngestResult = {
    name: 'pg-ingest',
    machine: atStart,
    settings: {
      connections: CONNECTIONS,
      mix: MIX,
      recordsPerFrame: RECORDS_PER_FRAME,
      warmupSeconds: WARMUP_MS / 1000,
      windowSeconds: DURATION_MS / 1000,
      rounds: ROUNDS,
      baselineRows: copies[0]?.copy?.rows ?? 0,
      rowsPerCopy: TX_ROWS,
      serverCpus: SERVER_CPUS ?? 'any',
      generatorCpus: GENERATOR_CPUS ?? 'any',
      postgres: version,
      gatewayProcesses: GATEWAY_PROCESSES,
      gatewayCpus: GATEWAY_CPUS,
    },
    rounds,
    best,
    ratio,
    cpu,
    goal: `>= ${pct(GOAL)} of COPY`,
    met: ratio >= GOAL && tg.every((r) => r.trackgate?.rowsMatchAcks),
    cost,
  };
  printTable(
    `TCP ingest on PostgreSQL ${version} (${CONNECTIONS} connections, as tcp-ingest; best of ${ROUNDS} alternating round(s), ${DURATION_MS / 1000} s windows; CPUs: trackgate ${result.settings.serverCpus}, generator ${result.settings.generatorCpus})`,
    ['measure', 'per second (best)', 'rounds', 'ratio', 'goal', 'met'],
    [
      [
        'trackgate on PostgreSQL: positions stored and acknowledged',
        fmt(best.trackgate),
        tg.map((r) => fmt(r.perSec)).join(' / '),
        pct(ratio),
        result.goal,
        result.met ? 'yes' : 'NO',
      ],
      [
        `COPY FROM STDIN, ${fmt(TX_ROWS)} rows per COPY: rows`,
        fmt(best.copy),
        copies.map((r) => fmt(r.perSec)).join(' / '),
        '100 %',
        '',
        '',
      ],
      [
        '(information) trackgate on SQLite, same load: positions stored and acknowledged',
        fmt(best.sqlite),
        onSqlite.map((r) => fmt(r.perSec)).join(' / '),
        pct(best.sqlite / best.copy),
        '',
        '',
      ],
      [
        `(information) INSERT … SELECT FROM unnest, ${fmt(TX_ROWS)} rows per statement`,
        fmt(best.unnest),
        copies.map((r) => fmt(r.unnest?.perSec ?? 0)).join(' / '),
        pct(best.unnest / best.copy),
        '',
        '',
      ],
    ],
  );
  for (const r of [...tg, ...onSqlite]) {
    const t = r.trackgate!;
    console.log(
      `trackgate round${r.variant === 'sqlite' ? ' on SQLite' : ''}: ${fmt(t.ackedPositions)} acknowledged, ${fmt(t.storedRows)} rows -> ${t.rowsMatchAcks ? 'equal' : 'MISMATCH'}; CPU trackgate ${t.serverCpuPct?.toFixed(0)} %, generator ${t.generatorCpuPct.toFixed(0)} %; drain ${t.drainSeconds.toFixed(2)} s`,
    );
  }
  console.log(
    `baseline rows per round: ${fmt(result.settings.baselineRows)} (${BASELINE_FRAMES} frames of every connection)`,
  );
  const us = (n: number) => `${n.toFixed(1)} µs`;
  printTable(
    `CPU per position (best trackgate round) and per row (best COPY round), every process; ${cpu.cpus} CPUs; the goal's rate: ${fmt(cpu.goalPerSec)}/s`,
    ['measure', 'CPU', "CPUs at the goal's rate"],
    [
      [
        'trackgate round, per position: the whole machine',
        us(cpu.perPosition.machine),
        `${cpu.coresAtGoal.toFixed(2)} of ${cpu.cpus}`,
      ],
      [
        '  of which trackgate (core and gateway processes)',
        us(cpu.perPosition.trackgate),
        ((cpu.goalPerSec * cpu.perPosition.trackgate) / 1e6).toFixed(2),
      ],
      [
        '  of which PostgreSQL',
        us(cpu.perPosition.postgres),
        ((cpu.goalPerSec * cpu.perPosition.postgres) / 1e6).toFixed(2),
      ],
      [
        '  of which the generator',
        us(cpu.perPosition.generator),
        ((cpu.goalPerSec * cpu.perPosition.generator) / 1e6).toFixed(2),
      ],
      [
        'PostgreSQL and the generator alone (trackgate costing nothing)',
        us(cpu.perPosition.postgres + cpu.perPosition.generator),
        cpu.coresAtGoalWithoutTrackgate.toFixed(2),
      ],
      [
        'COPY round, per row: PostgreSQL (the whole machine)',
        `${us(cpu.copyPerRow.postgres)} (${us(cpu.copyPerRow.machine)})`,
        '',
      ],
    ],
  );
  console.log(
    `at this cost per position every CPU busy takes ${fmt(cpu.ceilingPerSec)} positions/s: ${pct(cpu.ceilingPerSec / best.copy)} of COPY's best${cpu.coresAtGoal > cpu.cpus ? `; the goal's rate needs the cost per position cut to ${pct(cpu.cpus / cpu.coresAtGoal)} of what it is` : ''}`,
  );
  costTable('TCP ingest on PostgreSQL against SQLite and COPY', cost);
  return result;
}

/** What the best rounds cost in CPU per position and per row, and what the goal's rate takes at that cost. */
function cpuBudget(t: Round, c: Round): CpuBudget {
  const cpus = os.cpus().length;
  const per = (cpuPct: number) => cpuUsPer(cpuPct, t.perSec);
  const x = t.trackgate!;
  const perPosition = {
    machine: per(x.machineCpuPct),
    trackgate: per(x.serverCpuPct ?? 0),
    postgres: per(x.postgresCpuPct),
    generator: per(x.generatorCpuPct),
  };
  const copyPerRow = {
    postgres: (c.copy!.postgresCpuMs * 1000) / c.copy!.rows,
    machine: (c.copy!.machineCpuMs * 1000) / c.copy!.rows,
  };
  const goalPerSec = GOAL * c.perSec;
  return {
    cpus,
    perPosition,
    copyPerRow,
    goalPerSec,
    coresAtGoal: (goalPerSec * perPosition.machine) / 1e6,
    coresAtGoalWithoutTrackgate: (goalPerSec * (perPosition.postgres + perPosition.generator)) / 1e6,
    ceilingPerSec: (cpus * 1e6) / perPosition.machine,
  };
}
