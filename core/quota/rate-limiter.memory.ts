/**
 * In-process request accounting (embedded default): plain counters in a Map, no timers and no
 * promises beyond the interface's. It sits on every authenticated request, so it is kept to a
 * few field updates; the Redis implementation (rate-limiter.redis.ts) shares the contract.
 * Today's per-user counts can be taken out and put back (daily-usage.keeper.ts saves them), so
 * `apiDailyUsage` goes on counting across a restart.
 */
import type { FailedLoginLimiter, LimitSettings, Limiters, RequestLimiter, RequestUsage } from './rate-limiter.js';

/** Requests per user on one UTC day. */
export interface DailyUsage {
  /** UTC day number since the epoch */
  day: number;
  users: Record<string, number>;
}

export interface MemoryLimiters extends Limiters {
  /** today's counts, or undefined when nothing was counted since the last call */
  takeDailyUsage(): DailyUsage | undefined;
  /** adds saved counts of a day (those of another day are ignored once a later day was counted) */
  restoreDailyUsage(saved: DailyUsage): void;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** failed-login keys are chosen by callers (user names, addresses): expired ones are swept past this many */
const SWEEP_ABOVE = 10_000;
/** and the table never holds more than this many: the oldest windows go first (about 20 MB at most) */
const MAX_FAILURE_KEYS = 100_000;

interface UserCounts {
  /** minute number since the epoch (UTC), and requests in it */
  minute: number;
  minuteCount: number;
  /** UTC day number since the epoch, and requests in it */
  day: number;
  dayCount: number;
}

const NO_FAILURE_LIMIT: FailedLoginLimiter = { blockedFor: async () => 0, recordFailure: async () => {} };

/**
 * Failed logins in process: a key's window opens at its first failure and lasts `windowSeconds`;
 * `limit` failures in it block the key until it ends. REST's token requests use one (createMemoryLimiters), MQTT
 * CONNECT two of its own (gateway/mqtt/mqtt.auth.ts).
 */
export function createMemoryFailedLogins(limit: number, windowSeconds: number): FailedLoginLimiter {
  const windowMs = windowSeconds * 1000;
  const failures = new Map<string, { count: number; until: number }>();
  let sweepAbove = SWEEP_ABOVE;

  function current(key: string, nowMs: number): { count: number; until: number } | undefined {
    const f = failures.get(key);
    if (f && f.until <= nowMs) {
      failures.delete(key);
      return undefined;
    }
    return f;
  }

  return {
    async blockedFor(keys) {
      const nowMs = performance.now();
      let wait = 0;
      for (const key of keys) {
        const f = current(key, nowMs);
        if (f && f.count >= limit) wait = Math.max(wait, Math.ceil((f.until - nowMs) / 1000));
      }
      return wait;
    },
    async recordFailure(keys) {
      const nowMs = performance.now();
      if (failures.size > sweepAbove) {
        for (const [k, f] of failures) if (f.until <= nowMs) failures.delete(k);
        // The next sweep waits until the table has doubled: a full table costs no sweep per failure.
        sweepAbove = Math.max(SWEEP_ABOVE, failures.size * 2);
      }
      // Windows are opened in time order, so the Map's first keys are the oldest.
      for (const k of failures.keys()) {
        if (failures.size + keys.length <= MAX_FAILURE_KEYS) break;
        failures.delete(k);
      }
      for (const key of keys) {
        const f = current(key, nowMs);
        if (f) f.count++;
        else failures.set(key, { count: 1, until: nowMs + windowMs });
      }
    },
  };
}

export function createMemoryLimiters(s: LimitSettings): MemoryLimiters {
  const users = new Map<string, UserCounts>();
  let usersDay = 0;
  let counted = false;

  const requests: RequestLimiter = {
    async hit(userId, now): Promise<RequestUsage> {
      const ms = now.getTime();
      const minute = Math.floor(ms / MINUTE_MS);
      const day = Math.floor(ms / DAY_MS);
      if (day !== usersDay) {
        // A new day: yesterday's users are forgotten, so the map holds only today's.
        if (day > usersDay) for (const [id, c] of users) if (c.day < day) users.delete(id);
        usersDay = day;
      }
      let c = users.get(userId);
      if (!c) {
        c = { minute, minuteCount: 0, day, dayCount: 0 };
        users.set(userId, c);
      }
      if (c.minute !== minute) {
        c.minute = minute;
        c.minuteCount = 0;
      }
      if (c.day !== day) {
        c.day = day;
        c.dayCount = 0;
      }
      const allowed = s.perMinute <= 0 || c.minuteCount < s.perMinute;
      c.minuteCount++;
      c.dayCount++;
      counted = true;
      const retryAfterSeconds = allowed ? 0 : 60 - Math.floor((ms % MINUTE_MS) / 1000);
      return { allowed, minute: c.minuteCount, day: c.dayCount, retryAfterSeconds };
    },
  };

  // Failed token requests: off with the request limit (TRACKGATE_RATE_LIMIT=0)
  const failedLogins: FailedLoginLimiter =
    s.perMinute <= 0 ? NO_FAILURE_LIMIT : createMemoryFailedLogins(s.failedTokenLimit, s.failedWindowSeconds ?? 900);

  function takeDailyUsage(): DailyUsage | undefined {
    if (!counted) return undefined;
    counted = false;
    const today: Record<string, number> = {};
    for (const [id, c] of users) if (c.day === usersDay) today[id] = c.dayCount;
    return { day: usersDay, users: today };
  }

  function restoreDailyUsage(saved: DailyUsage): void {
    if (saved.day < usersDay) return;
    usersDay = saved.day;
    for (const [id, n] of Object.entries(saved.users)) {
      if (!Number.isSafeInteger(n) || n <= 0) continue;
      const c = users.get(id);
      if (c && c.day === saved.day) c.dayCount += n;
      else users.set(id, { minute: 0, minuteCount: 0, day: saved.day, dayCount: n });
    }
  }

  return { requests, failedLogins, takeDailyUsage, restoreDailyUsage };
}
