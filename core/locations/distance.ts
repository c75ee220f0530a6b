/**
 * The distance a device travelled, from its positions (docs/rest.md "Distance"): each new fix adds
 * the great-circle leg from the last counted fix, except where that leg is not travel.
 *
 * - An invalid fix (`valid: false`) counts nothing and is not a place the device was.
 * - Jitter: a leg under JITTER_KM while the device is stopped (its speed, or the leg's own speed
 *   when it reports none, under STOPPED_KMH) counts nothing and keeps the last counted fix, so
 *   the wandering of a parked tracker's fixes never adds up; a slow device is counted once it has
 *   moved JITTER_KM from that fix.
 * - A jump: a leg faster than MAX_SPEED_KMH counts nothing. When the next fix agrees with the
 *   jumped-to place (the device really is there: carried on a ferry, or a long gap), counting
 *   goes on from there, still without the jump.
 *
 * Late fixes (older than the device's newest) do not change the running total: each is given the
 * total of the fix before it plus its own leg, at most the running total (distance.ledger.ts).
 */

/** below this a stopped device's leg is jitter (km) */
export const JITTER_KM = 0.05;
/** a device slower than this is stopped (km/h) */
export const STOPPED_KMH = 5;
/** no road vehicle goes faster: a leg faster than this is a jump (km/h) */
export const MAX_SPEED_KMH = 300;

const EARTH_RADIUS_KM = 6371.0088;
const RAD = Math.PI / 180;

export interface Place {
  latitude: number;
  longitude: number;
}

export interface Fix extends Place {
  /** fix time, epoch ms */
  dateTime: number;
  speedKmh?: number;
  valid?: boolean;
}

/** A device's distance so far, as stored between batches (table device_distance). */
export interface DistanceState {
  /** the newest fix seen (epoch ms): an older one is late */
  lastTime: number;
  /** the last counted fix: legs are measured from it */
  anchor: Fix;
  /** the place a jump went to, until a fix agrees with it or with the anchor */
  jumped?: Fix;
  totalKm: number;
}

/** great-circle distance (haversine, the mean earth radius), km */
export function haversineKm(a: Place, b: Place): number {
  const dLat = (b.latitude - a.latitude) * RAD;
  const dLon = (b.longitude - a.longitude) * RAD;
  const s = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * RAD) * Math.cos(b.latitude * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(s)));
}

/** the speed of going from `a` to `b` in their time apart, km/h (Infinity when no time passed) */
function legSpeedKmh(a: Fix, b: Fix, km: number): number {
  const hours = (b.dateTime - a.dateTime) / 3_600_000;
  return hours > 0 ? km / hours : km === 0 ? 0 : Number.POSITIVE_INFINITY;
}

/** What a leg from `from` to `fix` adds: its length, 0 for jitter, undefined for a jump. */
export function legKm(from: Fix, fix: Fix): number | undefined {
  const km = haversineKm(from, fix);
  const speed = legSpeedKmh(from, fix, km);
  if (speed > MAX_SPEED_KMH) return undefined;
  if (km < JITTER_KM && (fix.speedKmh ?? speed) < STOPPED_KMH) return 0;
  return km;
}

/**
 * The state after a fix newer than every fix before it (`state` undefined: the device's first),
 * a new object; `state` is left as it was.
 */
export function advance(state: DistanceState | undefined, fix: Fix): DistanceState {
  if (!state) return fix.valid === false ? { lastTime: fix.dateTime, anchor: fix, totalKm: 0 } : start(fix, 0);
  const next: DistanceState = { ...state, lastTime: Math.max(state.lastTime, fix.dateTime) };
  if (fix.valid === false) return next;
  if (state.anchor.valid === false) return start(fix, state.totalKm);
  const km = legKm(state.anchor, fix);
  if (km === undefined) {
    // a second fix beyond reach: does it agree with the first (the device is there now)?
    if (state.jumped && legKm(state.jumped, fix) !== undefined)
      return { lastTime: next.lastTime, anchor: fix, totalKm: state.totalKm };
    next.jumped = fix;
    return next;
  }
  next.jumped = undefined;
  if (km === 0) return next;
  next.anchor = fix;
  next.totalKm = state.totalKm + km;
  return next;
}

const start = (fix: Fix, totalKm: number): DistanceState => ({ lastTime: fix.dateTime, anchor: fix, totalKm });

/** a total as shown: km to the metre */
export const shownKm = (km: number): number => Math.round(km * 1000) / 1000;
