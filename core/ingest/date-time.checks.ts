/** ISO 8601 date-times as clients and gateway processes send them (input.schemas.ts builds its schema of them). */

/**
 * ISO 8601 date-time with a zone: date, `T`, hours and minutes, optional seconds and fraction,
 * then `Z` or an offset. Written without flags (both cases spelled out), so that the same source
 * is a valid ECMA-262 `pattern` in the OpenAPI document.
 */
export const ISO_DATE_TIME_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):?(\d{2}))$/;

/**
 * True when every part names a real instant: month 1–12, a day the month has, hour 0–23, minute
 * and second 0–59, offset up to 23:59. `new Date()` would roll 2026-02-30 over to 2 March.
 */
export function isRealDateTime(s: string): boolean {
  const m = ISO_DATE_TIME_PATTERN.exec(s);
  if (!m) return false;
  // every message's fix time comes through here: no array or Date more than needed
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (
    Number(m[4]) > 23 ||
    Number(m[5]) > 59 ||
    Number(m[6] ?? 0) > 59 ||
    Number(m[7] ?? 0) > 23 ||
    Number(m[8] ?? 0) > 59
  )
    return false;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  return !Number.isNaN(Date.parse(s));
}

/** Days of the month (1–12) in the proleptic Gregorian calendar, as Date counts them. */
function daysIn(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}
