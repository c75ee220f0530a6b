/**
 * One day of a device's fixes as runs (docs/rest.md "Trips, stops and summary"): the fixes in time
 * order, each moving or not, cut into runs of the same kind. This is the part of a report that
 * reads every fix; it is cached per device and day (reports.repository.ts), and the runs of the
 * days are then joined into trips and stops (trips.stitch.ts), which reads only runs.
 *
 * - An invalid fix (`valid: false`) is not a place the device was: it is skipped.
 * - A jump (a leg faster than any vehicle, distance.ts `legKm`) is skipped; when the next fix
 *   agrees with the jumped-to place the device is there, as the distance rules decide.
 * - Moving: the fix's speed (the leg's speed when it reports none) at least `movingSpeedKmh`, and,
 *   where the fix reports ignition and `useIgnition` is set, ignition on.
 * - A gap of `minStopSeconds` or more between two fixes is a stop at the fix before it, whatever
 *   the fixes around it say (a tracker that sleeps with the engine off sends nothing).
 * - Distance is counted by the distance rules themselves (distance.ts `advance`: no jitter while
 *   stopped, no jumps, no invalid fixes) over the day's fixes in time order, so late fixes count
 *   where they belong (the stored running totals give a late fix only its own leg).
 */
import type { Location } from '../model/location.js';
import { advance, haversineKm, type DistanceState, type Fix } from '../locations/distance.js';
import type { ReportSettings } from './report.settings.js';

/** A fix as a report reads it. */
export interface ReportFix {
  /** epoch ms */
  t: number;
  latitude: number;
  longitude: number;
  speedKmh?: number;
  valid?: boolean;
  ignition?: boolean;
}

/** A run of fixes of one kind; it lasts until the next run begins (or the day's last fix). */
export interface Run {
  moving: boolean;
  /** the first fix's time (epoch ms) and place */
  t: number;
  latitude: number;
  longitude: number;
  /** km from this run's first fix to the next run's first fix (the last run: to the day's last fix) */
  km: number;
  /** the fastest fix of the run (km/h) */
  maxSpeedKmh: number;
}

/** The day's last fix counted. */
export interface DayEnd {
  t: number;
  latitude: number;
  longitude: number;
}

export interface DayRuns {
  runs: Run[];
  first: DayEnd;
  last: DayEnd;
  /** ignition-on spans [from, to] (epoch ms) between fixes of the day */
  ignitionOn: [number, number][];
  /** the last fix's ignition (its span goes on to the next day's first fix) */
  ignitionAtEnd?: boolean;
  /** whether any fix of the day reported ignition */
  ignitionSeen: boolean;
}

/** The fields a report needs, from a stored location. */
export function reportFix(t: number, l: Location): ReportFix {
  const a = l.attributes as Record<string, unknown> | undefined;
  // as the alert rules read it (core/rules/position-queue.ts): the attribute, else the first input
  const first = l.inputs?.[0];
  const ignition = typeof a?.ignition === 'boolean' ? a.ignition : typeof first === 'boolean' ? first : undefined;
  return {
    t,
    latitude: l.latitude,
    longitude: l.longitude,
    speedKmh: l.speed,
    valid: l.valid,
    ignition,
  };
}

const asFix = (f: ReportFix): Fix => ({
  dateTime: f.t,
  latitude: f.latitude,
  longitude: f.longitude,
  speedKmh: f.speedKmh,
  valid: f.valid,
});

/**
 * The fixes a report counts (valid ones that are not jumps) and each one's km from the day's first
 * fix, in one pass of the distance rules (distance.ts `advance`): a fix is a jump when the rules
 * hold it as the place jumped to.
 */
function placesOf(fixes: readonly ReportFix[]): { places: ReportFix[]; km: number[] } {
  const places: ReportFix[] = [];
  const km: number[] = [];
  let state: DistanceState | undefined;
  for (const f of fixes) {
    const fix = asFix(f);
    state = advance(state, fix);
    if (f.valid === false || state.jumped === fix) continue;
    places.push(f);
    km.push(state.totalKm);
  }
  return { places, km };
}

/** Runs of one day's fixes (in time order); undefined when none counts. */
export function dayRuns(fixes: readonly ReportFix[], s: ReportSettings): DayRuns | undefined {
  const { places, km } = placesOf(fixes);
  if (places.length === 0) return undefined;

  const runs: Run[] = [];
  const runKm: number[] = []; // km at each run's first place
  const open = (moving: boolean, i: number) => {
    const p = places[i];
    runs.push({ moving, t: p.t, latitude: p.latitude, longitude: p.longitude, km: 0, maxSpeedKmh: 0 });
    runKm.push(km[i]);
  };
  const gapMs = s.minStopSeconds * 1000;
  for (let i = 0; i < places.length; i++) {
    const p = places[i];
    const before = i > 0 ? places[i - 1] : undefined;
    const speed = p.speedKmh ?? (before ? legSpeed(before, p) : 0);
    const moving = speed >= s.movingSpeedKmh && !(s.useIgnition && p.ignition === false);
    let current = runs[runs.length - 1];
    if (before && p.t - before.t >= gapMs && current.moving) {
      // the trip ended at the last fix before the gap
      open(false, i - 1);
      current = runs[runs.length - 1];
    }
    if (!current || current.moving !== moving) {
      open(moving, i);
      current = runs[runs.length - 1];
    }
    if (speed > current.maxSpeedKmh) current.maxSpeedKmh = speed;
  }
  const lastKm = km[places.length - 1];
  for (let r = 0; r < runs.length; r++) runs[r].km = (r + 1 < runs.length ? runKm[r + 1] : lastKm) - runKm[r];
  const end = (i: number): DayEnd => ({
    t: places[i].t,
    latitude: places[i].latitude,
    longitude: places[i].longitude,
  });
  return { runs, first: end(0), last: end(places.length - 1), ...ignitionOf(places) };
}

/** the leg's own speed, km/h (0 when no time passed) */
function legSpeed(a: ReportFix, b: ReportFix): number {
  const hours = (b.t - a.t) / 3_600_000;
  return hours > 0 ? haversineKm(a, b) / hours : 0;
}

function ignitionOf(places: readonly ReportFix[]): Pick<DayRuns, 'ignitionOn' | 'ignitionAtEnd' | 'ignitionSeen'> {
  const spans: [number, number][] = [];
  let seen = false;
  for (let i = 0; i < places.length; i++) {
    const p = places[i];
    if (p.ignition !== undefined) seen = true;
    if (p.ignition !== true || i + 1 === places.length) continue;
    const to = places[i + 1].t;
    const last = spans[spans.length - 1];
    if (last && last[1] === p.t) last[1] = to;
    else spans.push([p.t, to]);
  }
  return { ignitionOn: spans, ignitionAtEnd: places[places.length - 1].ignition, ignitionSeen: seen };
}
