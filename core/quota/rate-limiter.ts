/**
 * Request accounting for the REST API: requests per user per minute (limited) and per UTC day
 * (reported), and failed token requests per user name and per address (limited more strictly).
 * Two implementations share one contract: in-process (embedded default) and Redis.
 */
export interface RequestUsage {
  allowed: boolean;
  /** requests of this user in the current minute, this one included */
  minute: number;
  /** requests of this user today (UTC), this one included */
  day: number;
  /** when not allowed: seconds until the minute ends */
  retryAfterSeconds: number;
}

export interface RequestLimiter {
  hit(userId: string, now: Date): Promise<RequestUsage>;
}

export interface FailedLoginLimiter {
  /** seconds until any of `keys` may try again; 0 when none is blocked */
  blockedFor(keys: string[]): Promise<number>;
  recordFailure(keys: string[]): Promise<void>;
}

/** Both limiters of one implementation, made together from the same settings. */
export interface Limiters {
  requests: RequestLimiter;
  failedLogins: FailedLoginLimiter;
}

export interface LimitSettings {
  /** requests per user per minute; 0: unlimited (still counted) */
  perMinute: number;
  /** failed token requests per key per `failedWindowSeconds`; ignored when perMinute is 0 */
  failedTokenLimit: number;
  failedWindowSeconds?: number;
}
