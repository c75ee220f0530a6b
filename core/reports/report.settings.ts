/**
 * How trips and stops are told apart (docs/rest.md "Trips, stops and summary"), one set per
 * account (accounts.report_settings, JSON; null: these defaults).
 */
import { DomainError } from '../errors.js';
import { STOPPED_KMH } from '../locations/distance.js';

export interface ReportSettings {
  /** a fix at this speed or faster is moving (km/h); the distance rules' stopped speed by default */
  movingSpeedKmh: number;
  /** a halt (or a gap without fixes) at least this long ends a trip: a stop; shorter halts (traffic lights) are part of the trip (s) */
  minStopSeconds: number;
  /** a trip shorter than this is no trip (a parked tracker's jitter) (km) */
  minTripKm: number;
  /** a trip shorter than this is no trip (s) */
  minTripSeconds: number;
  /** where a fix reports ignition, ignition off is stopped whatever the speed */
  useIgnition: boolean;
}

export const DEFAULT_REPORT_SETTINGS: Readonly<ReportSettings> = Object.freeze({
  movingSpeedKmh: STOPPED_KMH,
  minStopSeconds: 300,
  minTripKm: 0.2,
  minTripSeconds: 60,
  useIgnition: true,
});

/** each number's allowed range */
export const SETTING_BOUNDS: Record<Exclude<keyof ReportSettings, 'useIgnition'>, [number, number]> = {
  movingSpeedKmh: [0.5, 100],
  minStopSeconds: [30, 86_400],
  minTripKm: [0, 100],
  minTripSeconds: [0, 86_400],
};

/** The stored text as settings: what it lacks (or a text that is not ours) takes the default. */
export function readSettings(text: string | null | undefined): ReportSettings {
  if (!text) return { ...DEFAULT_REPORT_SETTINGS };
  try {
    return { ...DEFAULT_REPORT_SETTINGS, ...(JSON.parse(text) as Partial<ReportSettings>) };
  } catch {
    return { ...DEFAULT_REPORT_SETTINGS };
  }
}

/** The settings after a change, checked (400 VALIDATION_FAILED naming the field). */
export function changedSettings(current: ReportSettings, change: Partial<ReportSettings>): ReportSettings {
  const next = { ...current, ...change };
  for (const [name, [min, max]] of Object.entries(SETTING_BOUNDS)) {
    const v = next[name as keyof typeof SETTING_BOUNDS];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
      throw new DomainError('VALIDATION_FAILED', `${name} must be a number from ${min} to ${max}.`, { field: name });
  }
  if (typeof next.useIgnition !== 'boolean')
    throw new DomainError('VALIDATION_FAILED', 'useIgnition must be true or false.', { field: 'useIgnition' });
  return next;
}

/** What a cached day was computed with: a day computed with other settings or in another zone is computed again. */
export const settingsKey = (s: ReportSettings, timeZone: string): string =>
  JSON.stringify([timeZone, s.movingSpeedKmh, s.minStopSeconds, s.minTripKm, s.minTripSeconds, s.useIgnition]);
