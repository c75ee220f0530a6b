/** ISO 8601 UTC (`…Z`) of epoch milliseconds, or null. */
export const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());
export const isoRequired = (ms: number): string => new Date(ms).toISOString();
