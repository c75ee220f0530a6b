const DAY_MS = 86_400_000;

/**
 * The UTC instant with the given time of day that lies nearest to `now` (within ±12 h), for
 * reports that carry a time but no date.
 */
export function nearestTimeOfDay(now: Date, hours: number, minutes: number, seconds: number, millis = 0): Date {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  let t = day + ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis;
  if (t - now.getTime() > DAY_MS / 2) t -= DAY_MS;
  else if (now.getTime() - t > DAY_MS / 2) t += DAY_MS;
  return new Date(t);
}
