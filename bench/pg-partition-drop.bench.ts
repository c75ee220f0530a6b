/**
 * Retention on PostgreSQL (BENCHMARKS.md "pg-partition-drop"): a month partition of `locations`
 * holding BENCH_PARTITION_ROWS rows (default 10,000,000, made by `insert … select
 * generate_series`, then vacuumed and checkpointed as an old month is) dropped by dropBefore, against the same rows removed by the `DELETE` a purge
 * without partitions runs, in the same run, on a database of the bench's own (BENCH_PG_URL) with
 * trackgate's schema. Reported: both times and their ratio; goal: the drop under one second.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { closeDb, migrate, openDb, type Db } from '../core/db/db.js';
import { dropBefore, makeAhead } from '../core/db/partitions/pg-partitions.js';
import { fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';

const PG_URL = (process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const ROWS = Number(process.env.BENCH_PARTITION_ROWS ?? 10_000_000);
const DEVICES = 1000;
const MONTH_START = Date.UTC(2025, 0, 1);
const MONTH_END = Date.UTC(2025, 1, 1);
const GOAL_MS = 1000;

export interface PartitionDropResult {
  name: 'pg-partition-drop';
  machine: Machine;
  settings: { rows: number; devices: number; postgres: string };
  fillSeconds: number[];
  dropMs: number;
  /** a writer inserting into locations one row at a time during the drop: its slowest insert, and how many */
  writer: { inserts: number; maxMs: number };
  deleteMs: number;
  /** the partition's size, and the time this host's file system takes to remove a file of that size where PostgreSQL keeps its data (when it is local) */
  partitionBytes: number;
  fileRemoveMs?: number;
  ratio: number;
  goal: string;
  met: boolean;
}

/** The month of January 2025 filled with ROWS rows over DEVICES devices, in one statement; returns its seconds. */
async function fill(db: Db): Promise<number> {
  await makeAhead(db, 'locations', MONTH_START, 'month');
  const stepMs = Math.max(1, Math.floor((MONTH_END - MONTH_START - DEVICES) / Math.ceil(ROWS / DEVICES)));
  const t0 = performance.now();
  await db.raw(
    `insert into locations (device_id, date_time, server_time, data)
     select 'dev' || (g % ${DEVICES}), ${MONTH_START}::int8 + (g / ${DEVICES}) * ${stepMs} + (g % ${DEVICES}),
            ${MONTH_START}::int8 + (g / ${DEVICES}) * ${stepMs},
            '{"dateTime":"2025-01-01T00:00:00.000Z","latitude":40.4168,"longitude":-3.7038,"speed":12.5,"course":90}'
       from generate_series(0::int8, ${ROWS - 1}::int8) g`,
  );
  // an old month as retention finds it: vacuumed and analysed long ago, its pages written; else
  // the drop would first wait for autovacuum, busy with the rows just inserted, to give way
  await db.raw('vacuum (analyze) locations_p202501');
  await db.raw('checkpoint');
  return (performance.now() - t0) / 1000;
}

/** Inserts one row at a time into the next month (a writer of the parent) until `done`; the slowest insert's ms. */
async function writeDuring(url: string, done: Promise<unknown>): Promise<{ inserts: number; maxMs: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  let over = false;
  void done.finally(() => {
    over = true;
  });
  let inserts = 0;
  let maxMs = 0;
  try {
    while (!over) {
      const t0 = performance.now();
      await c.query(`insert into locations values ('writer', $1, $1, '{}')`, [MONTH_END + inserts]);
      maxMs = Math.max(maxMs, performance.now() - t0);
      inserts++;
    }
  } finally {
    await c.end();
  }
  return { inserts, maxMs };
}

/**
 * What freeing the partition's files costs the file system alone: a file of `bytes` written and
 * flushed in PostgreSQL's data directory (when that is on this host), then removed, timed. On a
 * disk mounted with online discard (`mount -o discard`) or a thin virtual disk this is most of a
 * drop: PostgreSQL frees the files before its DROP returns.
 */
async function fileRemoveMs(db: Db, bytes: number): Promise<number | undefined> {
  const dir = String((await db.raw('show data_directory')).rows[0].data_directory);
  if (!existsSync(dir)) return undefined;
  const file = path.join(dir, `tg-bench-${randomBytes(4).toString('hex')}.tmp`);
  const chunk = Buffer.alloc(8 << 20, 1);
  try {
    const fd = openSync(file, 'wx');
    try {
      for (let left = bytes; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(left, chunk.length));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    rmSync(file, { force: true });
    return undefined; // not ours to write (another user's PostgreSQL)
  }
  const t0 = performance.now();
  rmSync(file);
  return performance.now() - t0;
}

async function count(db: Db): Promise<number> {
  return Number((await db.raw('select count(*) as n from locations')).rows[0].n);
}

export async function run(): Promise<PartitionDropResult> {
  const atStart = machine();
  const name = `tg_bench_part_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  const version = String((await admin.query('show server_version')).rows[0].server_version);
  await admin.query(`create database ${name}`);
  const db = openDb({ databaseUrl: `${PG_URL}/${name}` });
  try {
    await migrate(db);
    log(`PostgreSQL ${version}: ${fmt(ROWS)} rows in one month partition of locations, dropped, then deleted`);
    const fillSeconds = [await fill(db)];
    if ((await count(db)) !== ROWS) throw new Error('the month does not hold every row');
    const partitionBytes = Number((await db.raw(`select pg_total_relation_size('locations_p202501') as n`)).rows[0].n);
    let t0 = performance.now();
    const dropping = dropBefore(db, 'locations', MONTH_END);
    const writer = await writeDuring(`${PG_URL}/${name}`, dropping);
    const dropped = await dropping;
    const dropMs = performance.now() - t0;
    await db.raw(`delete from locations where device_id = 'writer'`);
    if (dropped.join() !== 'locations_p202501' || (await count(db)) !== 0)
      throw new Error(`dropBefore dropped ${dropped.join() || 'nothing'}`);
    log(`dropped in ${fmt(dropMs, 1)} ms; the same rows again, then DELETE`);
    fillSeconds.push(await fill(db));
    t0 = performance.now();
    const deleted = (
      await db.raw(`delete from locations where date_time >= ${MONTH_START} and date_time < ${MONTH_END}`)
    ).rowCount as number;
    const deleteMs = performance.now() - t0;
    if (deleted !== ROWS) throw new Error(`DELETE removed ${deleted} rows`);
    const ratio = dropMs / deleteMs;
    const removeMs = await fileRemoveMs(db, partitionBytes);
    const result: PartitionDropResult = {
      name: 'pg-partition-drop',
      machine: atStart,
      settings: { rows: ROWS, devices: DEVICES, postgres: version },
      fillSeconds,
      dropMs,
      writer,
      deleteMs,
      partitionBytes,
      fileRemoveMs: removeMs,
      ratio,
      goal: `drop < ${GOAL_MS} ms`,
      met: dropMs < GOAL_MS,
    };
    printTable(
      `Retention on PostgreSQL ${version}: one month of ${fmt(ROWS)} locations (${DEVICES} devices)`,
      ['measure', 'ms', 'ratio', 'goal', 'met'],
      [
        ['dropBefore: the month partition dropped', fmt(dropMs, 1), pct(ratio), result.goal, result.met ? 'yes' : 'NO'],
        [`  meanwhile ${fmt(writer.inserts)} inserts into locations: the slowest`, fmt(writer.maxMs, 1), '', '', ''],
        ['baseline: DELETE of the same rows', fmt(deleteMs, 0), '100 %', '', ''],
        [
          `the file system alone: a file of the partition's ${fmt(partitionBytes / 2 ** 20)} MiB removed`,
          removeMs === undefined ? 'n/a' : fmt(removeMs, 1),
          '',
          '',
          '',
        ],
      ],
    );
    return result;
  } finally {
    await closeDb(db);
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
