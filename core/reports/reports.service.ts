/**
 * Trips, stops and a summary for one device or a group over a time range (GET /api/reports/*,
 * docs/rest.md "Trips, stops and summary"). A report is not computed from every fix on every
 * request: each device's day (midnight to midnight in the account's time zone) is computed once
 * into runs (day-runs.ts) and cached (report_days); a request reads the cached days and joins
 * them (trips.stitch.ts). A cached day is computed again when it is not what its fixes are now:
 * - other settings or another time zone (`params`);
 * - a late or corrected fix stored in it (the group commit's change marks, counted before the
 *   day's fixes are read, so a fix committed meanwhile is never lost: it changes the count);
 * - a fix newer than every other stored after it was computed, or its first fix gone
 *   (retention, a deleted device): its first and last fix time are probed, two index lookups.
 */
import { DateTime } from 'luxon';
import type { Db } from '../db/db.js';
import type { Principal } from '../model/user.js';
import { DomainError, notFound } from '../errors.js';
import { requirePrivilege, visibleDevice } from '../access/access.js';
import * as groups from '../groups/groups.repository.js';
import { localTimeWriter } from '../export/local-time.js';
import { MARK_BUCKET_MS } from '../locations/fix-marks.repository.js';
import { dayRuns, type DayRuns } from './day-runs.js';
import { engineMs, stitch, type Span } from './trips.stitch.js';
import { changedSettings, readSettings, settingsKey, type ReportSettings } from './report.settings.js';
import * as repo from './reports.repository.js';

/** the longest range a report covers: a calendar month in any zone, DST included */
export const REPORT_MAX_DAYS = 32;
const DAY_MS = 86_400_000;

export interface ReportQuery {
  deviceId?: string;
  groupId?: string;
  from: string;
  to: string;
}

export interface Trip {
  deviceId: string;
  startTime: string;
  endTime: string;
  startLatitude: number;
  startLongitude: number;
  endLatitude: number;
  endLongitude: number;
  /** km */
  distance: number;
  /** s */
  duration: number;
  maxSpeed: number;
  averageSpeed: number;
}

export interface Stop {
  deviceId: string;
  startTime: string;
  endTime: string;
  latitude: number;
  longitude: number;
  duration: number;
}

export interface Summary {
  deviceId: string;
  distance: number;
  maxSpeed: number;
  averageSpeed: number;
  drivingTime: number;
  stoppedTime: number;
  /** h, when the device reports ignition */
  engineHours?: number;
}

export interface ReportsService {
  trips(p: Principal, q: ReportQuery): Promise<Trip[]>;
  stops(p: Principal, q: ReportQuery): Promise<Stop[]>;
  summary(p: Principal, q: ReportQuery): Promise<Summary[]>;
  settings(p: Principal): Promise<ReportSettings>;
  /** admin */
  setSettings(p: Principal, change: Partial<ReportSettings>): Promise<ReportSettings>;
}

interface DeviceReport {
  deviceId: string;
  spans: Span[];
  days: DayRuns[];
}

interface Scope {
  deviceIds: string[];
  fromMs: number;
  toMs: number;
  timeZone: string;
  settings: ReportSettings;
}

const km3 = (km: number) => Math.round(km * 1000) / 1000;
const one = (x: number) => Math.round(x * 10) / 10;
const seconds = (ms: number) => Math.round(ms / 1000);
const kmh = (km: number, ms: number) => (ms > 0 ? one(km / (ms / 3_600_000)) : 0);
const overlaps = (x: Span, fromMs: number, toMs: number) => x.t <= toMs && x.endT >= fromMs;

export function createReportsService(deps: { db: Db }): ReportsService {
  const { db } = deps;
  return {
    async trips(p, q) {
      const { s, list } = await reports(db, p, q);
      const local = localTimeWriter(s.timeZone);
      return list.flatMap((r) => tripsOf(r, s, local));
    },
    async stops(p, q) {
      const { s, list } = await reports(db, p, q);
      const local = localTimeWriter(s.timeZone);
      return list.flatMap((r) => stopsOf(r, s, local));
    },
    async summary(p, q) {
      const { s, list } = await reports(db, p, q);
      return list.map((r) => summaryOf(r, s));
    },
    async settings(p) {
      requirePrivilege(p, 'read');
      return readSettings((await repo.accountInfo(db, p.accountId))?.settings);
    },
    async setSettings(p, change) {
      requirePrivilege(p, 'admin');
      const next = changedSettings(readSettings((await repo.accountInfo(db, p.accountId))?.settings), change);
      await repo.saveSettings(db, p.accountId, JSON.stringify(next));
      return next;
    },
  };
}

async function scope(db: Db, p: Principal, q: ReportQuery): Promise<Scope> {
  requirePrivilege(p, 'read');
  const fromMs = Date.parse(q.from);
  const toMs = Date.parse(q.to);
  if (fromMs > toMs) throw new DomainError('VALIDATION_FAILED', 'from must not be after to.', { field: 'from' });
  if (toMs - fromMs > REPORT_MAX_DAYS * DAY_MS)
    throw new DomainError('VALIDATION_FAILED', `A report covers at most ${REPORT_MAX_DAYS} days; ask for less.`, {
      field: 'to',
    });
  if ((q.deviceId === undefined) === (q.groupId === undefined))
    throw new DomainError('VALIDATION_FAILED', 'Give either deviceId or groupId.', { field: 'deviceId' });
  let deviceIds: string[];
  if (q.deviceId !== undefined) deviceIds = [(await visibleDevice(db, p, q.deviceId)).id];
  else {
    const g = await groups.findById(db, q.groupId!);
    // the groups convention: another account's group, or one outside the caller's own, is not found
    if (!g || g.accountId !== p.accountId || (p.groupId && p.groupId !== q.groupId))
      throw notFound('GROUP_NOT_FOUND', `Group "${q.groupId}"`);
    deviceIds = await repo.groupDeviceIds(db, p.accountId, g.id);
  }
  const account = await repo.accountInfo(db, p.accountId);
  return {
    deviceIds,
    fromMs,
    toMs,
    timeZone: account?.timeZone ?? 'UTC',
    settings: readSettings(account?.settings),
  };
}

/** The device's days around the range, each from the cache or computed (and cached). */
async function daysOf(db: Db, deviceId: string, s: Scope): Promise<DayRuns[]> {
  const zone = DateTime.fromMillis(s.fromMs, { zone: s.timeZone }).isValid ? s.timeZone : 'UTC';
  // a day before and after: trips and stops that cross the range's ends are seen whole
  let day = DateTime.fromMillis(s.fromMs - DAY_MS, { zone }).startOf('day');
  const lastStart = DateTime.fromMillis(s.toMs + DAY_MS, { zone })
    .startOf('day')
    .toMillis();
  const bounds: [number, number][] = [];
  while (day.toMillis() <= lastStart) {
    const next = day.plus({ days: 1 }).startOf('day');
    bounds.push([day.toMillis(), next.toMillis()]);
    day = next;
  }
  const params = settingsKey(s.settings, zone);
  const cached = await repo.cachedDays(db, deviceId, bounds[0][0], lastStart);
  const marks = await repo.marks(db, deviceId, bounds[0][0], bounds[bounds.length - 1][1]);
  const stored = await repo.firstAndLast(db, deviceId, bounds);
  const out: DayRuns[] = [];
  for (const [startMs, endMs] of bounds) {
    let count = 0;
    for (let b = startMs; b < endMs; b += MARK_BUCKET_MS) count += marks.get(b) ?? 0;
    const day = { deviceId, startMs, endMs, params, marks: count, stored: stored.get(startMs) };
    const runs = await dayOf(db, day, cached.get(startMs), s.settings);
    if (runs) out.push(runs);
  }
  return out;
}

async function dayOf(
  db: Db,
  day: {
    deviceId: string;
    startMs: number;
    endMs: number;
    params: string;
    marks: number;
    stored: { firstMs: number; lastMs: number } | undefined;
  },
  row: repo.DayRow | undefined,
  settings: ReportSettings,
): Promise<DayRuns | undefined> {
  const { deviceId, startMs, endMs, params, marks, stored } = day;
  if (
    row &&
    stored &&
    row.params === params &&
    row.marks === marks &&
    row.dayEndMs === endMs &&
    row.firstMs === stored.firstMs &&
    row.lastMs === stored.lastMs
  )
    return JSON.parse(row.data) as DayRuns;
  if (!stored) {
    if (row) await repo.dropDay(db, deviceId, startMs);
    return undefined;
  }
  const fixes = await repo.fixes(db, deviceId, startMs, endMs);
  // SQLite reads are synchronous: other requests and tracker frames get their turn between days
  await new Promise((resolve) => setImmediate(resolve));
  const runs = dayRuns(fixes, settings);
  if (fixes.length)
    await repo.saveDay(db, deviceId, {
      dayStartMs: startMs,
      dayEndMs: endMs,
      params,
      firstMs: fixes[0].t,
      lastMs: fixes[fixes.length - 1].t,
      marks,
      data: JSON.stringify(runs ?? null),
    });
  return runs;
}

async function reports(db: Db, p: Principal, q: ReportQuery): Promise<{ s: Scope; list: DeviceReport[] }> {
  const s = await scope(db, p, q);
  const list: DeviceReport[] = [];
  for (const deviceId of s.deviceIds) {
    const days = (await daysOf(db, deviceId, s)).filter((d) => d !== null);
    list.push({ deviceId, days, spans: stitch(days, s.settings) });
  }
  return { s, list };
}

function tripsOf(r: DeviceReport, s: Scope, local: (ms: number) => string): Trip[] {
  return r.spans
    .filter((x) => x.moving && overlaps(x, s.fromMs, s.toMs))
    .map((x) => ({
      deviceId: r.deviceId,
      startTime: local(x.t),
      endTime: local(x.endT),
      startLatitude: x.latitude,
      startLongitude: x.longitude,
      endLatitude: x.endLatitude,
      endLongitude: x.endLongitude,
      distance: km3(x.km),
      duration: seconds(x.endT - x.t),
      maxSpeed: one(x.maxSpeedKmh),
      averageSpeed: kmh(x.km, x.endT - x.t),
    }));
}

function stopsOf(r: DeviceReport, s: Scope, local: (ms: number) => string): Stop[] {
  return r.spans
    .filter((x) => !x.moving && overlaps(x, s.fromMs, s.toMs))
    .map((x) => ({
      deviceId: r.deviceId,
      startTime: local(x.t),
      endTime: local(x.endT),
      latitude: x.latitude,
      longitude: x.longitude,
      duration: seconds(x.endT - x.t),
    }));
}

function summaryOf(r: DeviceReport, s: Scope): Summary {
  const trips = r.spans.filter((x) => x.moving && overlaps(x, s.fromMs, s.toMs));
  const stops = r.spans.filter((x) => !x.moving && overlaps(x, s.fromMs, s.toMs));
  const km = trips.reduce((n, x) => n + x.km, 0);
  const drivingMs = trips.reduce((n, x) => n + (x.endT - x.t), 0);
  const engine = engineMs(r.days, s.fromMs, s.toMs);
  const out: Summary = {
    deviceId: r.deviceId,
    distance: km3(km),
    maxSpeed: one(trips.reduce((n, x) => Math.max(n, x.maxSpeedKmh), 0)),
    averageSpeed: kmh(km, drivingMs),
    drivingTime: seconds(drivingMs),
    stoppedTime: seconds(stops.reduce((n, x) => n + (x.endT - x.t), 0)),
  };
  if (engine !== undefined) out.engineHours = Math.round((engine / 3_600_000) * 100) / 100;
  return out;
}
