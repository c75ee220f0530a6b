/** Countries (ISO 3166-1 alpha-2, from i18n-iso-countries) and IANA time zones (from Intl). */
import countries from 'i18n-iso-countries';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
countries.registerLocale(require('i18n-iso-countries/langs/en.json'));

/**
 * Where the library's first English name is the formal long form, the name people use instead
 * (its own second name): "United States", not "United States of America", as the platform shows
 * them. Not its second name everywhere: for others that is an abbreviation ("UK", "UAE") or
 * ambiguous (both Congos are "Congo").
 */
const COMMON_NAME_CODES = ['CN', 'CZ', 'IR', 'MK', 'PS', 'RU', 'TW', 'TZ', 'US'];

let countryNames: Record<string, string> | undefined;

/** ISO 3166-1 alpha-2 → the country's common English name, sorted by code. */
export function countryList(): Record<string, string> {
  if (!countryNames) {
    const all = countries.getNames('en', { select: 'all' });
    countryNames = Object.fromEntries(
      Object.entries(all)
        .map(([code, names]): [string, string] => [code, (COMMON_NAME_CODES.includes(code) && names[1]) || names[0]])
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  }
  return countryNames;
}

export const isCountry = (code: string): boolean =>
  countries.isValid(code) && code.length === 2 && code === code.toUpperCase();

/**
 * A country as clients send it, as its alpha-2 code: alpha-2 in any case, alpha-3 (the platform's
 * own example sends "USA") or an English name ("United States", "Colombia"); undefined when none fits.
 */
export function toAlpha2(value: string): string | undefined {
  const v = value.trim();
  if (v.length === 2) return isCountry(v.toUpperCase()) ? v.toUpperCase() : undefined;
  if (v.length === 3 && /^[A-Za-z]{3}$/.test(v)) {
    const code = countries.alpha3ToAlpha2(v.toUpperCase());
    if (code) return code;
  }
  return countries.getAlpha2Code(v, 'en') ?? undefined;
}

const zoneIds = new Set<string>([...Intl.supportedValuesOf('timeZone'), 'UTC']);

export const isTimeZone = (id: string): boolean => zoneIds.has(id);

/** "(UTC+01:00) Europe/Paris" with the offset in force at `at`. */
export function timeZoneList(at: Date): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of [...zoneIds].sort()) {
    const part =
      new Intl.DateTimeFormat('en-US', { timeZone: id, timeZoneName: 'longOffset' })
        .formatToParts(at)
        .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
    const offset = part === 'GMT' ? '+00:00' : part.slice(3);
    out[id] = `(UTC${offset}) ${id.replaceAll('_', ' ')}`;
  }
  return out;
}
