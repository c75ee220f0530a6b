/**
 * The checks every position passes before it is stored, whatever brought it: REST, MQTT
 * `devices/{id}/locations`, OwnTracks and decoded tracker frames (CONTRIBUTING.md convention 4 lists the
 * same invariants for decoders). A fix dated 9999 would otherwise stay the last location for ever,
 * since the last location is the one with the latest fix time.
 *
 * INGEST_STEPS run them on every report. What a failed check does depends on the way in: REST
 * answers 400 naming the field, MQTT acknowledges and stores nothing of the message (both store
 * nothing of a request or message with a failing position), a tracker's position is dropped and
 * logged.
 */

/** Fixes before this are a tracker's unset clock (GPS week rollovers land in 1980 and 1999). */
export const EARLIEST_FIX_MS = Date.UTC(2000, 0, 1);
/** A fix may be ahead of the server's clock by time zones and clock drift, not by more. */
export const MAX_FIX_AHEAD_MS = 25 * 3600_000;

export interface Checked {
  /** the field that failed, as the REST shape names it */
  field: 'dateTime' | 'latitude' | 'longitude' | 'speed' | 'course';
  message: string;
}

export interface PositionToCheck {
  latitude: number;
  longitude: number;
  /** km/h; absent or null: unknown */
  speed?: number | null;
  /** degrees; absent or null: unknown */
  course?: number | null;
}

export function fixTimeProblem(fixMs: number, nowMs: number): Checked | undefined {
  if (!Number.isFinite(fixMs)) return { field: 'dateTime', message: 'is not a valid time' };
  if (fixMs < EARLIEST_FIX_MS) return { field: 'dateTime', message: 'must not be before 2000-01-01T00:00:00Z' };
  if (fixMs > nowMs + MAX_FIX_AHEAD_MS) {
    return {
      field: 'dateTime',
      message: `must not be more than 25 h ahead of the server time (${new Date(nowMs).toISOString()})`,
    };
  }
  return undefined;
}

const known = (v: number | null | undefined): v is number => v !== undefined && v !== null;

/** Coordinates, speed and course a position can have. */
export function positionProblem(p: PositionToCheck): Checked | undefined {
  if (!Number.isFinite(p.latitude) || Math.abs(p.latitude) > 90)
    return { field: 'latitude', message: 'must be a number from -90 to 90' };
  if (!Number.isFinite(p.longitude) || Math.abs(p.longitude) > 180)
    return { field: 'longitude', message: 'must be a number from -180 to 180' };
  if (known(p.speed) && !(Number.isFinite(p.speed) && p.speed >= 0))
    return { field: 'speed', message: 'must be a number of at least 0 (km/h)' };
  if (known(p.course) && !(Number.isFinite(p.course) && p.course >= 0 && p.course <= 360))
    return { field: 'course', message: 'must be a number from 0 to 360 (degrees)' };
  return undefined;
}
