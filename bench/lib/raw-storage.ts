/**
 * The raw-storage baseline that tcp-ingest and mqtt-ingest share: the rows trackgate stored, inserted
 * by better-sqlite3 in this process into a fresh database with trackgate's schema and writer settings,
 * each transaction timed by the wall clock and by this process's CPU (process.cpuUsage).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteWriterPragmas } from '../../core/db/db.js';
import type { RawRow } from './ingest-load.js';
import { prepareDataDir, tempDir } from './trackgate.js';

export interface RawStorageResult {
  rows: number;
  seconds: number;
  rowsPerSec: number;
  transactions: number;
  cpuSeconds: number;
  rowsPerCpuSec: number;
}

export const INSERT = 'insert into locations (device_id, date_time, server_time, data) values (?, ?, ?, ?)';
/** the raw baseline's rows per transaction */
export const TX_ROWS = 10_000;

/**
 * Times storing `blocks` in a fresh database with trackgate's schema (and `devices`) and writer
 * settings (sqliteWriterPragmas: WAL, synchronous=FULL, its checkpoint interval). The blocks are
 * made outside the clock; `plan` gets the connection and answers what to do with each block,
 * calling `commit` with one transaction at a time: only those are timed. Every row must end up
 * stored once.
 */
export async function timedStorage(
  label: string,
  devices: string[],
  blocks: Iterable<RawRow[]>,
  expected: number,
  plan: (db: Database.Database) => (block: RawRow[], commit: (transaction: () => number) => void) => void,
): Promise<RawStorageResult> {
  const data = tempDir(label);
  try {
    await prepareDataDir(data.dir, devices);
    const db = new Database(path.join(data.dir, 'trackgate.sqlite'));
    try {
      sqliteWriterPragmas(db);
      let rows = 0;
      let transactions = 0;
      let ms = 0;
      let cpuMicros = 0;
      const commit = (transaction: () => number): void => {
        const t0 = performance.now();
        const cpu0 = process.cpuUsage();
        rows += transaction();
        const cpu = process.cpuUsage(cpu0);
        ms += performance.now() - t0;
        cpuMicros += cpu.user + cpu.system;
        transactions++;
      };
      const each = plan(db);
      for (const block of blocks) each(block, commit);
      const stored = (db.prepare('select count(*) as n from locations').get() as { n: number }).n;
      if (rows !== expected || stored !== expected)
        throw new Error(`${label} storage inserted ${rows} rows (${stored} stored), expected ${expected}`);
      return {
        rows,
        seconds: ms / 1000,
        rowsPerSec: rows / (ms / 1000),
        transactions,
        cpuSeconds: cpuMicros / 1e6,
        rowsPerCpuSec: rows / (cpuMicros / 1e6),
      };
    } finally {
      db.close();
    }
  } finally {
    data.remove();
  }
}

/** The baseline: better-sqlite3, one prepared insert, TX_ROWS rows per transaction. */
export const rawStorage = (
  devices: string[],
  blocks: Iterable<RawRow[]>,
  expected: number,
): Promise<RawStorageResult> =>
  timedStorage('raw', devices, blocks, expected, (db) => {
    const insert = db.prepare(INSERT);
    const insertAll = db.transaction((rows: RawRow[]) => {
      for (const r of rows) insert.run(r[0], r[1], r[2], r[3]);
    });
    return (block, commit) => {
      for (let i = 0; i < block.length; i += TX_ROWS) {
        const chunk = block.slice(i, i + TX_ROWS);
        commit(() => (insertAll(chunk), chunk.length));
      }
    };
  });

/** The rows of `locations` in trackgate's SQLite file of `dataDir`, as the baselines insert them, `size` at a time. */
export function* storedBlocks(dataDir: string, size = 50_000): Generator<RawRow[]> {
  const db = new Database(path.join(dataDir, 'trackgate.sqlite'));
  try {
    let block: RawRow[] = [];
    const rows = db
      .prepare('select device_id, date_time, server_time, data from locations')
      .raw()
      .iterate() as IterableIterator<RawRow>;
    for (const r of rows) {
      block.push([r[0], Number(r[1]), Number(r[2]), r[3]]);
      if (block.length >= size) {
        yield block;
        block = [];
      }
    }
    if (block.length) yield block;
  } finally {
    db.close();
  }
}

/** µs of CPU per row a raw-storage run spent. */
export const rawUsPerRow = (r: RawStorageResult): number => (r.cpuSeconds * 1e6) / r.rows;
