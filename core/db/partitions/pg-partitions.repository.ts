/**
 * The SQL of PostgreSQL's time partitions (see pg-partitions.ts): the catalogue reads, a table's
 * conversion to a partitioned one, and the statements that make and drop partitions. Every table
 * named here is one of PARTITIONED_TABLES or a partition the catalogue listed, never user input.
 */
import type { Knex } from 'knex';

type Q = Knex | Knex.Transaction;

/** One partition of a table: its range of fix times [fromMs, toMs), or the DEFAULT one. */
export interface Partition {
  name: string;
  isDefault: boolean;
  /** inclusive; -Infinity for MINVALUE (and for the DEFAULT partition) */
  fromMs: number;
  /** exclusive; +Infinity for MAXVALUE (and for the DEFAULT partition) */
  toMs: number;
}

/** The partitioned tables, each by `date_time`, with the primary key each gets (it must hold the partition key). */
export const PARTITIONED_TABLES = {
  locations: ['device_id', 'date_time'],
  // was `id` alone: a partitioned table's unique keys hold the partition key; ids stay unique (one sequence)
  alerts: ['id', 'date_time'],
} as const;

export type PartitionedTable = keyof typeof PARTITIONED_TABLES;

/** How long a maintenance statement waits for a table lock before it gives up until the next run. */
export const LOCK_TIMEOUT = '2s';

const rows = async <T>(db: Q, sql: string, params: Knex.RawBinding[] = []): Promise<T[]> =>
  ((await db.raw(sql, params)) as { rows: T[] }).rows;

const bound = (v: string): number => (v === 'MINVALUE' ? -Infinity : v === 'MAXVALUE' ? Infinity : Number(v));
/** An epoch-ms bound, checked to be an integer before it is written into a DDL statement. */
const ms = (v: unknown): number => {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer bound: ${String(v)}`);
  return n;
};
const BOUNDS = /FROM \('?(-?\d+|MINVALUE)'?\) TO \('?(-?\d+|MAXVALUE)'?\)/;

/** 'p': partitioned; 'r': a plain table; undefined: none. */
export async function tableKind(db: Q, table: string): Promise<string | undefined> {
  const [r] = await rows<{ relkind: string }>(db, 'select relkind from pg_class where oid = to_regclass(?)', [table]);
  return r?.relkind;
}

/** The partitions of `table`, by their lower bound (the DEFAULT one last). */
export async function listPartitions(db: Q, table: string): Promise<Partition[]> {
  const found = await rows<{ name: string; bound: string }>(
    db,
    `select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
       from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = to_regclass(?)`,
    [table],
  );
  return found
    .map(({ name, bound: b }) => {
      if (b === 'DEFAULT') return { name, isDefault: true, fromMs: -Infinity, toMs: Infinity };
      const m = BOUNDS.exec(b);
      if (!m) throw new Error(`partition ${name} of ${table}: unexpected bound ${b}`);
      return { name, isDefault: false, fromMs: bound(m[1]), toMs: bound(m[2]) };
    })
    .sort((a, b) => (a.isDefault ? 1 : b.isDefault ? -1 : a.fromMs - b.fromMs));
}

/**
 * Makes `table` (a plain one, as 001-initial made it) range-partitioned by `date_time`: the table
 * is renamed `<table>_legacy`; a partitioned table of the same columns takes its name, with a
 * DEFAULT partition; the legacy table, if it holds rows, is attached as the partition of its
 * min..max fix times (two scans of it, under the migration's lock), else dropped.
 */
export async function convertToPartitioned(trx: Knex.Transaction, table: PartitionedTable): Promise<void> {
  if ((await tableKind(trx, table)) !== 'r') return;
  const legacy = `${table}_legacy`;
  await trx.raw(`lock table ${table} in access exclusive mode`);
  const indexes = await rows<{ name: string; def: string; primary: boolean; unique: boolean }>(
    trx,
    `select c.relname as name, pg_get_indexdef(x.indexrelid) as def, x.indisprimary as primary, x.indisunique as unique
       from pg_index x join pg_class c on c.oid = x.indexrelid where x.indrelid = to_regclass(?)`,
    [table],
  );
  const serials = await rows<{ column: string; sequence: string }>(
    trx,
    `select a.attname as column, pg_get_serial_sequence(?, a.attname) as sequence
       from pg_attribute a where a.attrelid = to_regclass(?) and a.attnum > 0 and not a.attisdropped
        and pg_get_serial_sequence(?, a.attname) is not null`,
    [table, table, table],
  );
  await trx.raw(`alter table ${table} rename to ${legacy}`);
  for (const i of indexes) {
    const rest = i.name.startsWith(`${table}_`) ? i.name.slice(table.length + 1) : i.name;
    await trx.raw(`alter index "${i.name}" rename to "${legacy}_${rest}"`);
  }
  await trx.raw(
    `create table ${table} (like ${legacy} including defaults including constraints including storage) partition by range (date_time)`,
  );
  for (const s of serials) {
    await trx.raw(`alter sequence ${s.sequence} owned by ${table}."${s.column}"`);
    await trx.raw(`alter table ${legacy} alter column "${s.column}" drop default`);
  }
  await trx.raw(`alter table ${table} add primary key (${PARTITIONED_TABLES[table].join(', ')})`);
  for (const i of indexes) {
    if (i.primary) continue;
    if (i.unique && !/\bdate_time\b/.test(i.def))
      throw new Error(`${i.name}: a unique index of a partitioned table must hold date_time`);
    await trx.raw(i.def); // its original name, now on the partitioned table
  }
  await trx.raw(`create table ${table}_default partition of ${table} default`);
  const [range] = await rows<{ min: number | string | null; max: number | string | null }>(
    trx,
    `select min(date_time) as min, max(date_time) as max from ${legacy}`,
  );
  if (range.min === null || range.max === null) {
    await trx.raw(`drop table ${legacy}`);
    return;
  }
  // the partition's primary key must be the parent's: alerts' (id) becomes (id, date_time), one index build
  const key = PARTITIONED_TABLES[table].join(', ');
  const primary = indexes.find((i) => i.primary);
  if (primary && !primary.def.endsWith(`(${key})`)) {
    const rest = primary.name.startsWith(`${table}_`) ? primary.name.slice(table.length + 1) : primary.name;
    await trx.raw(`alter table ${legacy} drop constraint "${legacy}_${rest}"`);
    await trx.raw(`alter table ${legacy} add primary key (${key})`);
  }
  // DDL takes no bind parameters: the bounds are integers read above
  await trx.raw(
    `alter table ${table} attach partition ${legacy} for values from (${ms(range.min)}) to (${ms(range.max) + 1})`,
  );
}

/** Back to a plain table (the down migration): every row copied into one, the keys of 001-initial. */
export async function convertToPlain(trx: Knex.Transaction, table: PartitionedTable, key: string[]): Promise<void> {
  if ((await tableKind(trx, table)) !== 'p') return;
  const flat = `${table}_flat`;
  const serials = await rows<{ column: string; sequence: string }>(
    trx,
    `select a.attname as column, pg_get_serial_sequence(?, a.attname) as sequence
       from pg_attribute a where a.attrelid = to_regclass(?) and a.attnum > 0 and not a.attisdropped
        and pg_get_serial_sequence(?, a.attname) is not null`,
    [table, table, table],
  );
  await trx.raw(`create table ${flat} (like ${table} including defaults including storage)`);
  await trx.raw(`insert into ${flat} select * from ${table}`);
  for (const s of serials) await trx.raw(`alter sequence ${s.sequence} owned by ${flat}."${s.column}"`);
  const indexes = await rows<{ def: string }>(
    trx,
    `select pg_get_indexdef(x.indexrelid) as def from pg_index x where x.indrelid = to_regclass(?) and not x.indisprimary`,
    [table],
  );
  await trx.raw(`drop table ${table}`);
  await trx.raw(`alter table ${flat} rename to ${table}`);
  await trx.raw(`alter table ${table} add primary key (${key.join(', ')})`);
  for (const i of indexes) await trx.raw(i.def);
}

/** Whether the DEFAULT partition holds a row in [fromMs, toMs). */
export async function defaultHolds(db: Q, table: string, fromMs: number, toMs: number): Promise<boolean> {
  const [r] = await rows<{ any: boolean }>(
    db,
    `select exists (select 1 from ${table}_default where date_time >= ? and date_time < ?) as any`,
    [fromMs, toMs],
  );
  return r.any;
}

/** The starts (epoch ms, UTC) of the intervals (`month` or `day`) the DEFAULT partition's rows fall in, at most `limit`. */
export async function defaultIntervals(
  db: Q,
  table: string,
  interval: 'month' | 'day',
  limit: number,
): Promise<number[]> {
  const found = await rows<{ start: number | string }>(
    db,
    `select distinct (extract(epoch from date_trunc(?, to_timestamp(date_time / 1000.0) at time zone 'UTC')) * 1000)::int8 as start
       from ${table}_default order by 1 limit ?`,
    [interval, limit],
  );
  return found.map((r) => Number(r.start));
}

/**
 * Makes partition `name` of `table` for [fromMs, toMs), in one transaction: the DEFAULT
 * partition's rows of that range (if any) moved into it, so it can be made at all.
 */
export async function createPartition(
  db: Knex,
  table: string,
  name: string,
  fromMs: number,
  toMs: number,
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
    const moving = await defaultHolds(trx, table, fromMs, toMs);
    if (moving) {
      await trx.raw(`create temporary table tg_moving (like ${table}) on commit drop`);
      await trx.raw(
        `with m as (delete from ${table}_default where date_time >= ? and date_time < ? returning *) insert into tg_moving select * from m`,
        [fromMs, toMs],
      );
    }
    await trx.raw(`create table ${name} partition of ${table} for values from (${ms(fromMs)}) to (${ms(toMs)})`);
    if (moving) await trx.raw(`insert into ${table} select * from tg_moving`);
  });
}

/**
 * Detaches partition `name` from `table`, then drops it, in two transactions: the parent's lock is
 * held for the detach (milliseconds, no file touched), not while PostgreSQL frees the dropped
 * table's files at commit (about a second for 10 million rows), so writers of the parent never wait
 * for that. Each waits at most LOCK_TIMEOUT for its lock.
 */
export async function detachAndDrop(db: Knex, table: string, name: string): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
    await trx.raw(`alter table ${table} detach partition ${name}`);
  });
  await dropTable(db, name);
}

/** Drops table `name`, waiting at most LOCK_TIMEOUT for its lock. */
export async function dropTable(db: Knex, name: string): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
    await trx.raw(`drop table ${name}`);
  });
}

/**
 * Partitions of `table` detached but not dropped (a stop between detachAndDrop's two steps): plain
 * tables named as partitions are (`<table>_p…`, `<table>_legacy`) that are no partition.
 */
export async function detachedLeftovers(db: Q, table: string): Promise<string[]> {
  const found = await rows<{ name: string }>(
    db,
    `select relname as name from pg_class
      where relkind = 'r' and not relispartition and relnamespace = (select oid from pg_namespace where nspname = current_schema())
        and relname ~ ?`,
    [`^${table}_(p[0-9]+(_[0-9]+)?|legacy)$`],
  );
  return found.map((r) => r.name);
}
