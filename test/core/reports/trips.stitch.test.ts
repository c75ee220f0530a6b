/**
 * Days joined into trips and stops (core/reports/trips.stitch.ts): a trip over midnight is one
 * trip, whichever day's runs hold its parts; a gap over midnight is a stop; a trip too short is
 * part of the stop around it.
 */
import test from 'ava';
import { dayRuns, type ReportFix } from '../../../core/reports/day-runs.js';
import { stitch } from '../../../core/reports/trips.stitch.js';
import { DEFAULT_REPORT_SETTINGS as S } from '../../../core/reports/report.settings.js';

const MIDNIGHT = Date.UTC(2026, 5, 2);
/** a fix `s` seconds from midnight, `m` metres north */
const fix = (s: number, m: number, speedKmh: number): ReportFix => ({
  t: MIDNIGHT + s * 1000,
  latitude: 40 + m / 111_195,
  longitude: -3,
  speedKmh,
});
const parked = (from: number, to: number, m: number) =>
  Array.from({ length: Math.floor((to - from) / 60) }, (_, i) => fix(from + i * 60, m, 0));
const drive = (from: number, to: number, m0: number) =>
  Array.from({ length: Math.floor((to - from) / 10) }, (_, i) => fix(from + i * 10, m0 + i * 100, 36));

function split(fixes: ReportFix[]) {
  const before = fixes.filter((f) => f.t < MIDNIGHT);
  const after = fixes.filter((f) => f.t >= MIDNIGHT);
  return [dayRuns(before, S)!, dayRuns(after, S)!];
}

test('trips.stitch: a drive over midnight is one trip, its distance both days', (t) => {
  const fixes = [...parked(-3600, -600, 0), ...drive(-600, 600, 0), ...parked(600, 3600, 12_000)];
  const spans = stitch(split(fixes), S);
  t.deepEqual(
    spans.map((x) => [x.moving, (x.t - MIDNIGHT) / 1000, (x.endT - MIDNIGHT) / 1000]),
    [
      [false, -3600, -600],
      [true, -600, 600],
      [false, 600, 3540],
    ],
  );
  t.true(Math.abs(spans[1].km - 12) < 0.12, `${spans[1].km} km`);
  const rounded = (days: Parameters<typeof stitch>[0]) =>
    stitch(days, S).map((x) => ({ ...x, km: Math.round(x.km * 1e6) }));
  t.deepEqual(rounded(split(fixes)), rounded([dayRuns(fixes, S)!]), 'the same as one day of the fixes');
});

test('trips.stitch: a gap without fixes over midnight ends the trip; a jitter blip is no trip', (t) => {
  const fixes = [
    ...drive(-1200, -600, 0),
    ...drive(600, 1200, 8000),
    ...parked(1200, 4800, 14_000),
    fix(4800, 14_030, 7),
    ...parked(4810, 7200, 14_000),
  ];
  const spans = stitch(split(fixes), S);
  t.deepEqual(
    spans.map((x) => [x.moving, (x.t - MIDNIGHT) / 1000, (x.endT - MIDNIGHT) / 1000]),
    [
      [true, -1200, -610],
      [false, -610, 600],
      [true, 600, 1200],
      [false, 1200, 4810 + 38 * 60],
    ],
  );
});
