/**
 * The one retry backoff: the wait doubles from `minMs` with each failed attempt, up to `maxMs`,
 * and a ±20% jitter spreads out the many that retry at once (every delivery after an outage).
 */
export interface Backoff {
  minMs: number;
  maxMs: number;
}

/**
 * The wait after `failures` failed attempts in a row (1 or more): minMs, 2·minMs, 4·minMs, … up to
 * maxMs. The doubling stops after 20 (a million times minMs), whatever maxMs says.
 */
export function backoffMs(b: Backoff, failures: number): number {
  return Math.min(b.maxMs, b.minMs * 2 ** Math.min(Math.max(failures, 1) - 1, 20));
}

/** `ms` give or take 20%, so that retries begun together do not stay together. */
export function jittered(ms: number, random: () => number = Math.random): number {
  return ms * (0.8 + random() * 0.4);
}
