/** Countries (ISO 3166-1 alpha-2, from i18n-iso-countries) and IANA time zones (from Intl). */
import countries from 'i18n-iso-countries';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
countries.registerLocale(require('i18n-iso-countries/langs/en.json'));

let countryNames: Record<string, string> | undefined;

export function countryList(): Record<string, string> {
  countryNames ??= Object.fromEntries(Object.entries(countries.getNames('en', { select: 'official' })).sort(([a], [b]) => a.localeCompare(b)));
  return countryNames;
}

export const isCountry = (code: string): boolean => countries.isValid(code) && code.length === 2 && code === code.toUpperCase();

const zoneIds = new Set<string>([...Intl.supportedValuesOf('timeZone'), 'UTC']);

export const isTimeZone = (id: string): boolean => zoneIds.has(id);

/** "(UTC+01:00) Europe/Paris" with the offset in force at `at`. */
export function timeZoneList(at: Date): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of [...zoneIds].sort()) {
    const part = new Intl.DateTimeFormat('en-US', { timeZone: id, timeZoneName: 'longOffset' })
      .formatToParts(at)
      .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
    const offset = part === 'GMT' ? '+00:00' : part.slice(3);
    out[id] = `(UTC${offset}) ${id.replaceAll('_', ' ')}`;
  }
  return out;
}
