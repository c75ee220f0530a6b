/** JSON columns are text in both databases. */
export function parseJson<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  if (typeof value !== 'string') return value as T;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

export const toJson = (value: unknown): string => JSON.stringify(value ?? null);

/** SQLite returns 0/1 for booleans, PostgreSQL true/false. */
export const toBool = (value: unknown): boolean => value === true || value === 1 || value === '1';

/** A nullable integer column (PostgreSQL int8 already parsed as number). */
export const toNum = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
