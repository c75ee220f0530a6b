/** ISO 8601 UTC (`…Z`) of epoch milliseconds, or null. */
export const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();
export const isoRequired = (ms: number): string => new Date(ms).toISOString();

const DAY_MS = 86_400_000;
/** 253402300800000 = 10000-01-01T00:00:00Z: from there on toISOString writes 6-digit years */
const YEAR_10000_MS = 253_402_300_800_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** the last day formatted (`YYYY-MM-DDT`): the times of one batch mostly share it */
let cachedDay = NaN;
let cachedDayText = '';

/** `YYYY-MM-DDT` of a day count since 1970-01-01 (proleptic Gregorian, days >= 0). */
function dayText(days: number): string {
  // civil_from_days, H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return `${String(year).padStart(4, '0')}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T`;
}

/**
 * Exactly `new Date(ms).toISOString()` (and its RangeError for an invalid time), at a fraction of
 * its cost for the years 1970 to 9999: every stored location formats its fix time.
 */
export function isoUtc(ms: number): string {
  if (!(ms >= 0 && ms < YEAR_10000_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  if (days !== cachedDay) {
    cachedDayText = dayText(days);
    cachedDay = days;
  }
  let rest = ms - days * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${cachedDayText}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[rest - seconds * 1000]}Z`;
}
