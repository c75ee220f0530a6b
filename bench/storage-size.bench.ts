/**
 * Bytes on disk per stored position (BENCHMARKS.md "storage-size"), on SQLite and PostgreSQL, for
 * sizing the disk (docs/operations.md "Sizing the disk"). The tcp-ingest mix's frames are decoded
 * by their real decoders and run through the ingest steps (bench/lib/ingest-load.ts rowsOf), then
 * stored through the locations repository (core/locations/locations.repository.ts insertMany, as
 * the group commit stores them, ROWS_PER_TRANSACTION a transaction) into a fresh database with the
 * account and the mix's devices. Measured: the database's growth divided by the positions stored
 * (SQLite: its file after a truncating checkpoint, so the -wal is folded in; PostgreSQL:
 * pg_database_size, without its write-ahead log in pg_wal). Baseline: the bytes of what is stored,
 * per position (device id, the two times as 8 bytes each, the stored JSON): the ratio is the
 * storage's overhead (pages, row headers, the primary key index, last_locations).
 * BENCH_SIZE_POSITIONS sets how many (default 200,000; 20,000 quick).
 */
import pg from 'pg';
import { storedJson } from '../core/model/location.js';
import type { Db } from '../core/db/db.js';
import * as locations from '../core/locations/locations.repository.js';
import { loadConfig } from '../config/config.js';
import { openStorage } from '../main.js';
import { CONNECTIONS, RECORDS_PER_FRAME, deviceIds, everyConnection, rowsOf } from './lib/ingest-load.js';
import { benchEnv, prepareDataDir, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, printTable, type Machine } from './lib/report.js';
import { statSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

const PG_URL = (process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const POSITIONS = Number(process.env.BENCH_SIZE_POSITIONS ?? (QUICK ? 20_000 : 200_000));
const ROWS_PER_TRANSACTION = 1_000;

interface Measured {
  backend: 'sqlite' | 'postgres';
  positions: number;
  growthBytes: number;
  bytesPerPosition: number;
  /** the baseline: what is stored, per position */
  payloadBytesPerPosition: number;
  ratio: number;
  /** where the bytes are: table, its indexes, last_locations (bytes) */
  parts: Record<string, number>;
  seconds: number;
}

export interface StorageSizeResult {
  name: 'storage-size';
  machine: Machine;
  settings: { positions: number; devices: number; rowsPerTransaction: number };
  results: Measured[];
  /** per 1,000,000 positions, from each backend's bytes per position */
  perMillionPositions: Record<string, string>;
}

/** the mix's frames, enough of them for POSITIONS positions, decoded: the first POSITIONS rows */
function* positions(): Generator<locations.LocationRow> {
  const frames = Math.ceil(POSITIONS / (CONNECTIONS * RECORDS_PER_FRAME)) + 1;
  let n = 0;
  for (const row of rowsOf(everyConnection(frames))) {
    if (n++ >= POSITIONS) return;
    yield row;
  }
}

async function sizeOf(db: Db, backend: Measured['backend'], file: string): Promise<number> {
  if (backend === 'sqlite') {
    await db.raw('PRAGMA wal_checkpoint(TRUNCATE)');
    return statSync(file).size;
  }
  return Number((await db.raw('select pg_database_size(current_database()) as n')).rows[0].n);
}

async function parts(db: Db, backend: Measured['backend']): Promise<Record<string, number>> {
  if (backend === 'sqlite') {
    const rows = (await db.raw('select name, sum(pgsize) as bytes from dbstat group by name')) as {
      name: string;
      bytes: number;
    }[];
    const of = (re: RegExp) => rows.filter((r) => re.test(r.name)).reduce((s, r) => s + r.bytes, 0);
    return {
      locations: of(/^locations$/),
      locationsIndexes: of(/^(sqlite_autoindex_locations|locations_|idx_locations)/),
      lastLocations: of(/last_locations/),
    };
  }
  const q = async (sql: string) => Number((await db.raw(sql)).rows[0].n);
  return {
    locations: await q("select pg_table_size('locations') as n"),
    locationsIndexes: await q("select pg_indexes_size('locations') as n"),
    lastLocations: await q("select pg_total_relation_size('last_locations') as n"),
  };
}

async function measure(backend: Measured['backend']): Promise<Measured> {
  const data = tempDir(`size-${backend}`);
  const name = `tg_bench_size_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: `${PG_URL}/postgres` });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  const extra: Record<string, string> = backend === 'postgres' ? { TRACKGATE_DATABASE_URL: `${PG_URL}/${name}` } : {};
  if (backend === 'postgres') await admin(`create database ${name}`);
  try {
    await prepareDataDir(data.dir, deviceIds(), undefined, extra);
    const db = await openStorage(loadConfig(benchEnv(data.dir, extra)));
    try {
      const file = path.join(data.dir, 'trackgate.sqlite');
      const before = await sizeOf(db, backend, file);
      const t0 = performance.now();
      let stored = 0;
      let payload = 0;
      let batch: locations.LocationRow[] = [];
      const flush = async () => {
        const rows = batch;
        batch = [];
        stored += (await db.transaction((trx) => locations.insertMany(trx, rows))).length;
      };
      for (const row of positions()) {
        payload += Buffer.byteLength(row.deviceId) + 16 + Buffer.byteLength(storedJson(row.location));
        batch.push(row);
        if (batch.length >= ROWS_PER_TRANSACTION) await flush();
      }
      await flush();
      const seconds = (performance.now() - t0) / 1000;
      if (backend === 'postgres') await db.raw('checkpoint');
      const growth = (await sizeOf(db, backend, file)) - before;
      const bytesPerPosition = growth / stored;
      const payloadBytesPerPosition = payload / stored;
      return {
        backend,
        positions: stored,
        growthBytes: growth,
        bytesPerPosition,
        payloadBytesPerPosition,
        ratio: bytesPerPosition / payloadBytesPerPosition,
        parts: await parts(db, backend),
        seconds,
      };
    } finally {
      await db.destroy();
    }
  } finally {
    data.remove();
    if (backend === 'postgres') await admin(`drop database if exists ${name} with (force)`).catch(() => {});
  }
}

async function postgresAnswers(): Promise<boolean> {
  const c = new pg.Client({ connectionString: `${PG_URL}/postgres`, connectionTimeoutMillis: 5_000 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

export async function run(): Promise<StorageSizeResult> {
  const backends: Measured['backend'][] = ['sqlite'];
  if (await postgresAnswers()) backends.push('postgres');
  else log(`PostgreSQL does not answer at ${PG_URL}: SQLite only`);
  const results: Measured[] = [];
  for (const b of backends) {
    log(`${b}: storing ${fmt(POSITIONS)} positions of ${fmt(CONNECTIONS)} devices`);
    results.push(await measure(b));
  }
  const MiB = 2 ** 20;
  printTable(
    `storage-size: bytes on disk per stored position (${fmt(POSITIONS)} positions, ${fmt(CONNECTIONS)} devices)`,
    [
      'backend',
      'growth',
      'bytes/position',
      'payload/position (baseline)',
      'ratio',
      'table',
      'indexes',
      'last_locations',
    ],
    results.map((r) => [
      r.backend,
      `${(r.growthBytes / MiB).toFixed(1)} MiB`,
      r.bytesPerPosition.toFixed(0),
      r.payloadBytesPerPosition.toFixed(0),
      `${r.ratio.toFixed(2)}×`,
      `${(r.parts.locations / MiB).toFixed(1)} MiB`,
      `${(r.parts.locationsIndexes / MiB).toFixed(1)} MiB`,
      `${(r.parts.lastLocations / MiB).toFixed(2)} MiB`,
    ]),
  );
  return {
    name: 'storage-size',
    machine: machine(),
    settings: { positions: POSITIONS, devices: CONNECTIONS, rowsPerTransaction: ROWS_PER_TRANSACTION },
    results,
    perMillionPositions: Object.fromEntries(
      results.map((r) => [r.backend, `${((r.bytesPerPosition * 1e6) / 2 ** 30).toFixed(2)} GiB`]),
    ),
  };
}
