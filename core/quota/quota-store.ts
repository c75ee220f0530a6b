/**
 * Daily per-device send counters (docs/contract.md §2 "daily limit"). The caller puts the day in the
 * key (`sent:email:<deviceId>:2026-03-01`) and passes the end of that day as the expiry, so a new
 * day is a new key and nothing has to run at midnight. Two implementations share one contract:
 * in-process (embedded default) and Redis (several gateway processes).
 */
export interface Reservation {
  ok: boolean;
  /** the counter after this call: incremented when ok, unchanged otherwise */
  count: number;
}

export interface QuotaStore {
  /**
   * Atomically takes one place if the counter is below `limit` (passed each time: limits change
   * mid-day). A counter the store does not hold (the day's first message, or a store that lost
   * its data, e.g. a Redis restarted empty) first starts from `initial()` when given: what the
   * caller's own records say was already sent or reserved today.
   * When it throws, no place was taken, even if the store carries the command out later.
   */
  reserve(key: string, limit: number, expiresAt: Date, initial?: () => Promise<number>): Promise<Reservation>;
  /** Gives one place back (a message that finally failed); never below 0. */
  release(key: string): Promise<void>;
  /** Current counts, 0 for a missing or expired key. */
  get(keys: string[]): Promise<number[]>;
}
