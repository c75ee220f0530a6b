/**
 * Free space where the database lives, watched before it runs out (docs/operations.md "Sizing the
 * disk"). Every interval it reads the file system's free space (statfs) and the database's size;
 * below TRACKGATE_DISK_WARN one warn line, below TRACKGATE_DISK_ERROR one error line and
 * GET /api/health `degraded` (code STORAGE_LOW), back above both one info line. Each line names the
 * space left and how many days of ingest it holds at the rate the database grew over the last
 * RATE_WINDOW_MS. What happens once the disk is full (writes refused, no acknowledgements, recovery
 * by itself) is storage.watch.ts's; this watch is there so that it never happens unseen.
 *
 * SQLite: the file system of its file. PostgreSQL: that of its data directory when the server runs
 * on this machine and the role may read where the directory is; otherwise free space is unknown
 * (no threshold applies, no metric), and only the database's size is read.
 */
import { statfsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../logger.js';
import type { Db } from './db.js';
import { sqliteFile } from './db.js';
import { databaseBytes, postgresDataDirectory } from './storage-size.repository.js';

/** how often free space and the database's size are read, unless told */
export const DISK_CHECK_MS = 30_000;
/** the growth rate is measured over at most this long… */
export const RATE_WINDOW_MS = 24 * 3600_000;
/** …and is unknown until it spans this many checks */
export const RATE_MIN_CHECKS = 10;
/** how long the start waits for the first check (a PostgreSQL query may hang) */
const FIRST_CHECK_WAIT_MS = 1_000;
const DAY_MS = 86_400_000;

/** free space below max(percent % of the file system, bytes) is too little; both 0: never (config/disk-threshold.ts) */
export interface FreeSpaceThreshold {
  readonly percent: number;
  readonly bytes: number;
}

export type DiskLevel = 'ok' | 'warn' | 'error';

/** What one check found. */
export interface DiskReading {
  level: DiskLevel;
  /** the file system measured; undefined where free space is unknown (PostgreSQL elsewhere) */
  dir?: string;
  freeBytes?: number;
  totalBytes?: number;
  databaseBytes: number;
  /** bytes the database grew per day over the window; undefined until measured */
  growthBytesPerDay?: number;
}

export interface DiskWatch {
  /** Free bytes now on the database's file system (one statfs), or undefined where unknown. */
  freeBytes(): number | undefined;
  /** The database's size now. */
  databaseBytes(): Promise<number>;
  /** Why health is degraded: free space below the error threshold now; else undefined. */
  problem(): string | undefined;
  /** The last check's reading (undefined before the first). */
  last(): DiskReading | undefined;
  stop(): Promise<void>;
}

export interface DiskWatchDeps {
  db: Db;
  logger: Logger;
  warn: FreeSpaceThreshold;
  error: FreeSpaceThreshold;
  intervalMs?: number;
  /** PostgreSQL: its URL names this machine (a loopback address or a socket), so its data directory can be measured here */
  databaseOnThisHost?: boolean;
}

/** The free bytes below which `t` holds on a file system of `totalBytes`. */
export function thresholdBytes(t: FreeSpaceThreshold, totalBytes: number): number {
  return Math.max((t.percent / 100) * totalBytes, t.bytes);
}

/** 1536 → "1.5 KiB" */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(v)} bytes` : `${v.toFixed(1)} ${units[i]}`;
}

/** How many days `freeBytes` hold at `growthBytesPerDay`: a number, "unknown" (not measured yet) or "not growing". */
export function daysLeft(freeBytes: number, growthBytesPerDay: number | undefined): number | 'unknown' | 'not growing' {
  if (growthBytesPerDay === undefined) return 'unknown';
  if (growthBytesPerDay <= 0) return 'not growing';
  return Math.round((freeBytes / growthBytesPerDay) * 10) / 10;
}

function describeDays(days: ReturnType<typeof daysLeft>, growth: number | undefined): string {
  if (days === 'unknown') return 'days of ingest left unknown (the write rate is not measured yet)';
  if (days === 'not growing') return 'the database is not growing';
  return `about ${days} days of ingest at the current rate (${formatBytes(growth ?? 0)}/day)`;
}

function statfs(dir: string): { freeBytes: number; totalBytes: number } {
  const s = statfsSync(dir);
  return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
}

/** Where free space is measured: SQLite's directory, PostgreSQL's data directory if it is here and readable. */
async function measuredDir(deps: DiskWatchDeps): Promise<string | undefined> {
  const file = sqliteFile(deps.db);
  if (file) return path.dirname(file);
  if (!deps.databaseOnThisHost) return undefined;
  const dir = await postgresDataDirectory(deps.db);
  if (!dir) return undefined;
  try {
    statfs(dir);
    return dir;
  } catch {
    return undefined;
  }
}

/** The database's growth per day from samples of its size, once they span `minMs`. */
class GrowthRate {
  private samples: { atMs: number; bytes: number }[] = [];
  constructor(private readonly minMs: number) {}

  add(bytes: number, atMs = performance.now()): void {
    this.samples.push({ atMs, bytes });
    while (this.samples.length > 2 && atMs - this.samples[1].atMs >= RATE_WINDOW_MS) this.samples.shift();
  }

  perDay(): number | undefined {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.atMs - first.atMs < this.minMs) return undefined;
    return ((last.bytes - first.bytes) / (last.atMs - first.atMs)) * DAY_MS;
  }
}

const LEVEL_VARIABLE = { warn: 'TRACKGATE_DISK_WARN', error: 'TRACKGATE_DISK_ERROR' } as const;

/** The line said when the level changes to `r.level`, with its fields. */
function levelLine(r: DiskReading, deps: DiskWatchDeps): { fields: Record<string, unknown>; msg: string } {
  const free = r.freeBytes ?? 0;
  const total = r.totalBytes ?? 0;
  const days = daysLeft(free, r.growthBytesPerDay);
  const fields = {
    dir: r.dir,
    freeBytes: free,
    totalBytes: total,
    databaseBytes: r.databaseBytes,
    growthBytesPerDay: r.growthBytesPerDay === undefined ? 'unknown' : Math.round(r.growthBytesPerDay),
    daysLeft: days,
    ...(r.level !== 'ok' && { thresholdBytes: Math.round(thresholdBytes(deps[r.level], total)) }),
  };
  const left = `${formatBytes(free)} free of ${formatBytes(total)} where the database lives`;
  const said = describeDays(days, r.growthBytesPerDay);
  if (r.level === 'ok') return { fields, msg: `free disk space is above the thresholds again: ${left}, ${said}` };
  const below = `below ${LEVEL_VARIABLE[r.level]} (${formatBytes(fields.thresholdBytes ?? 0)})`;
  if (r.level === 'warn') return { fields, msg: `free disk space is low: ${left}, ${below}; ${said}` };
  return {
    fields,
    msg: `free disk space is very low: ${left}, ${below}; ${said}. GET /api/health says degraded; once the disk is full nothing is stored and trackers get no acknowledgement: free space, shorten retention (TRACKGATE_RETENTION_DAYS) or move the data to a larger disk`,
  };
}

function levelOf(r: Omit<DiskReading, 'level'>, deps: DiskWatchDeps): DiskLevel {
  if (r.freeBytes === undefined || r.totalBytes === undefined) return 'ok';
  if (r.freeBytes < thresholdBytes(deps.error, r.totalBytes)) return 'error';
  if (r.freeBytes < thresholdBytes(deps.warn, r.totalBytes)) return 'warn';
  return 'ok';
}

export async function watchDisk(deps: DiskWatchDeps): Promise<DiskWatch> {
  const { db, logger } = deps;
  const intervalMs = deps.intervalMs ?? DISK_CHECK_MS;
  const dir = await measuredDir(deps).catch(() => undefined);
  const rate = new GrowthRate(intervalMs * RATE_MIN_CHECKS);
  let last: DiskReading | undefined;
  let failing = false;

  async function check(): Promise<void> {
    try {
      const space = dir ? statfs(dir) : undefined;
      const bytes = await databaseBytes(db);
      rate.add(bytes);
      const reading = { dir, ...space, databaseBytes: bytes, growthBytesPerDay: rate.perDay() };
      const r: DiskReading = { ...reading, level: levelOf(reading, deps) };
      // the first check says only what is not fine; later ones say each change
      if (r.level !== (last?.level ?? 'ok')) {
        const { fields, msg } = levelLine(r, deps);
        logger[r.level === 'ok' ? 'info' : r.level](fields, msg);
      }
      last = r;
      failing = false;
    } catch (e) {
      if (!failing)
        logger.warn({ err: (e as Error).message, dir }, 'free disk space or the database size cannot be read');
      failing = true;
    }
  }

  let checking: Promise<void> | undefined;
  const run = () => {
    checking ??= check().finally(() => {
      checking = undefined;
    });
    return checking;
  };
  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  await Promise.race([run(), new Promise((resolve) => setTimeout(resolve, FIRST_CHECK_WAIT_MS).unref())]);

  return {
    freeBytes: () => (dir ? statfs(dir).freeBytes : undefined),
    databaseBytes: () => databaseBytes(db),
    problem() {
      // free space read now (one statfs): health follows space freed or taken at once, not at the next check
      if (!dir) return undefined;
      let space: { freeBytes: number; totalBytes: number };
      try {
        space = statfs(dir);
      } catch {
        return undefined;
      }
      const limit = thresholdBytes(deps.error, space.totalBytes);
      if (space.freeBytes >= limit) return undefined;
      const growth = last?.growthBytesPerDay;
      return `Free disk space is very low: ${formatBytes(space.freeBytes)} left (below TRACKGATE_DISK_ERROR, ${formatBytes(limit)}), ${describeDays(daysLeft(space.freeBytes, growth), growth)}.`;
    },
    last: () => last,
    async stop() {
      clearInterval(timer);
      await checking;
    },
  };
}
