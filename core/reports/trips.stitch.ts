/**
 * The runs of consecutive days (day-runs.ts) joined into trips and stops (docs/rest.md "Trips,
 * stops and summary"). Reads only runs, never fixes, so a month of cached days is joined in
 * microseconds.
 *
 * 1. The days' runs in order; a run that goes on past midnight is one run; a gap of
 *    `minStopSeconds` between one day's last fix and the next day's first is a stop there.
 * 2. A halt shorter than `minStopSeconds` between two moving runs (a traffic light) is part of
 *    the trip.
 * 3. A trip shorter than `minTripKm` or `minTripSeconds` (a parked tracker's jitter) is part of
 *    the stop around it.
 */
import { legKm } from '../locations/distance.js';
import type { DayRuns, Run } from './day-runs.js';
import type { ReportSettings } from './report.settings.js';

/** A trip or a stop, as stitched: from `t` to `endT`. */
export interface Span {
  moving: boolean;
  t: number;
  latitude: number;
  longitude: number;
  endT: number;
  endLatitude: number;
  endLongitude: number;
  km: number;
  maxSpeedKmh: number;
}

/** The days' runs as one list, in order (days without fixes left out). */
function joined(days: readonly DayRuns[], s: ReportSettings): { runs: Run[]; end: DayRuns['last'] } | undefined {
  if (days.length === 0) return undefined;
  const runs: Run[] = [];
  for (let d = 0; d < days.length; d++) {
    const day = days[d];
    const next = days[d + 1];
    const own = day.runs.map((r) => ({ ...r }));
    if (next) {
      const last = own[own.length - 1];
      const a = day.last;
      const b = next.first;
      const cross = legKm({ dateTime: a.t, ...a }, { dateTime: b.t, ...b }) ?? 0;
      if (last.moving && b.t - a.t >= s.minStopSeconds * 1000)
        own.push({ moving: false, t: a.t, latitude: a.latitude, longitude: a.longitude, km: cross, maxSpeedKmh: 0 });
      else last.km += cross;
    }
    runs.push(...own);
  }
  return { runs, end: days[days.length - 1].last };
}

/** Spans from runs: each lasts until the next begins. */
function spansOf(runs: readonly Run[], end: DayRuns['last']): Span[] {
  return runs.map((r, i) => {
    const n = runs[i + 1] ?? { t: end.t, latitude: end.latitude, longitude: end.longitude };
    return {
      moving: r.moving,
      t: r.t,
      latitude: r.latitude,
      longitude: r.longitude,
      endT: n.t,
      endLatitude: n.latitude,
      endLongitude: n.longitude,
      km: r.km,
      maxSpeedKmh: r.maxSpeedKmh,
    };
  });
}

/** Neighbours of the same kind as one span. */
function merged(spans: readonly Span[]): Span[] {
  const out: Span[] = [];
  for (const x of spans) {
    const last = out[out.length - 1];
    if (last && last.moving === x.moving) {
      last.endT = x.endT;
      last.endLatitude = x.endLatitude;
      last.endLongitude = x.endLongitude;
      last.km += x.km;
      last.maxSpeedKmh = Math.max(last.maxSpeedKmh, x.maxSpeedKmh);
    } else out.push({ ...x });
  }
  return out;
}

/** Every trip and stop of the days, in time order, alternating. */
export function stitch(days: readonly DayRuns[], s: ReportSettings): Span[] {
  const j = joined(days, s);
  if (!j) return [];
  let spans = merged(spansOf(j.runs, j.end));
  const stopMs = s.minStopSeconds * 1000;
  // a short halt between two stretches of driving is driving
  spans = merged(
    spans.map((x, i) =>
      !x.moving && i > 0 && i < spans.length - 1 && x.endT - x.t < stopMs ? { ...x, moving: true } : x,
    ),
  );
  // a trip too short to be one is part of the stop around it
  spans = merged(
    spans.map((x) =>
      x.moving && (x.km < s.minTripKm || x.endT - x.t < s.minTripSeconds * 1000) ? { ...x, moving: false } : x,
    ),
  );
  return spans;
}

/** Ignition-on time within [fromMs, toMs] (ms), and whether any fix reported ignition. */
export function engineMs(days: readonly DayRuns[], fromMs: number, toMs: number): number | undefined {
  let total = 0;
  let seen = false;
  const add = (a: number, b: number) => {
    const lo = Math.max(a, fromMs);
    const hi = Math.min(b, toMs);
    if (hi > lo) total += hi - lo;
  };
  days.forEach((d, i) => {
    if (d.ignitionSeen) seen = true;
    for (const [a, b] of d.ignitionOn) add(a, b);
    const next = days[i + 1];
    if (next && d.ignitionAtEnd === true) add(d.last.t, next.first.t);
  });
  return seen ? total : undefined;
}
