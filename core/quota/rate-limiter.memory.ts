/** In-process request accounting (embedded default), on rate-limiter-flexible's memory backend. */
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { FailedLoginLimiter, RequestLimiter, RequestUsage } from './rate-limiter.js';

export interface LimitSettings {
  /** requests per user per minute; 0: unlimited (still counted) */
  perMinute: number;
  /** failed token requests per key per `failedWindowSeconds`; ignored when perMinute is 0 */
  failedTokenLimit: number;
  failedWindowSeconds?: number;
}

type Factory = (opts: { keyPrefix: string; points: number; duration: number }) => RateLimiterAbstract;

const UNLIMITED = Number.MAX_SAFE_INTEGER;

/** Minute and day windows are aligned to the clock (UTC), so `apiUsage` means "this minute". */
export function minuteKey(userId: string, now: Date): string {
  return `${userId}:${Math.floor(now.getTime() / 60_000)}`;
}

export function dayKey(userId: string, now: Date): string {
  return `${userId}:${now.toISOString().slice(0, 10)}`;
}

async function consume(limiter: RateLimiterAbstract, key: string): Promise<{ res: RateLimiterRes; rejected: boolean }> {
  try {
    return { res: await limiter.consume(key, 1), rejected: false };
  } catch (e) {
    if (e instanceof RateLimiterRes) return { res: e, rejected: true };
    throw e;
  }
}

/** Builds both limiters on any rate-limiter-flexible backend (memory here, Redis in rate-limiter.redis.ts). */
export function createLimitersOn(factory: Factory, s: LimitSettings): { requests: RequestLimiter; failedLogins: FailedLoginLimiter } {
  const perMinute = factory({ keyPrefix: 'rl:min', points: s.perMinute > 0 ? s.perMinute : UNLIMITED, duration: 60 });
  const perDay = factory({ keyPrefix: 'rl:day', points: UNLIMITED, duration: 2 * 86400 });
  const window = s.failedWindowSeconds ?? 900;
  const failed = factory({ keyPrefix: 'rl:fail', points: s.failedTokenLimit, duration: window });
  const failedOff = s.perMinute === 0;

  const requests: RequestLimiter = {
    async hit(userId, now): Promise<RequestUsage> {
      const [m, d] = await Promise.all([consume(perMinute, minuteKey(userId, now)), consume(perDay, dayKey(userId, now))]);
      const secondsLeftInMinute = 60 - Math.floor((now.getTime() % 60_000) / 1000);
      return { allowed: !m.rejected, minute: m.res.consumedPoints, day: d.res.consumedPoints, retryAfterSeconds: m.rejected ? secondsLeftInMinute : 0 };
    },
  };

  const failedLogins: FailedLoginLimiter = {
    async blockedFor(keys) {
      if (failedOff) return 0;
      let wait = 0;
      for (const key of keys) {
        const res = await failed.get(key);
        if (res && res.consumedPoints >= s.failedTokenLimit) wait = Math.max(wait, Math.ceil(res.msBeforeNext / 1000));
      }
      return wait;
    },
    async recordFailure(keys) {
      if (failedOff) return;
      await Promise.all(keys.map((k) => consume(failed, k)));
    },
  };
  return { requests, failedLogins };
}

export function createMemoryLimiters(s: LimitSettings) {
  return createLimitersOn((o) => new RateLimiterMemory(o), s);
}
