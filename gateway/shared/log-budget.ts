/**
 * Keeps one noisy source (a connection sending garbage, a listener flooded with bad requests,
 * every tracker failing during a storage outage) from flooding the log: within each window the
 * first `perWindow` events are logged in full, the rest only counted, and the count is reported
 * in one summary line when the next window starts or the source ends (`flush`).
 */
export interface LogBudgetOptions {
  perWindow: number;
  windowMs: number;
  /** logs the summary: `count` events were not logged one by one */
  onSuppressed(count: number): void;
}

export class LogBudget {
  private windowStart = Number.NEGATIVE_INFINITY;
  private used = 0;
  private suppressed = 0;

  constructor(private readonly o: LogBudgetOptions) {}

  /** true: log this event in full; false: it is counted for the summary. */
  take(nowMs: number): boolean {
    if (nowMs - this.windowStart >= this.o.windowMs) {
      this.flush();
      this.windowStart = nowMs;
      this.used = 0;
    }
    if (this.used < this.o.perWindow) {
      this.used++;
      return true;
    }
    this.suppressed++;
    return false;
  }

  /** Reports the events counted but not logged so far, if any. */
  flush(): void {
    if (this.suppressed === 0) return;
    const count = this.suppressed;
    this.suppressed = 0;
    this.o.onSuppressed(count);
  }
}

/** Per connection: a few lines of each kind per 10 minutes, so a tracker's repeated problem stays visible. */
export const CONNECTION_LOG = { perWindow: 5, windowMs: 10 * 60_000 } as const;
/** Per listener (UDP, OsmAnd HTTP) and gateway-wide: many sources share it. */
export const LISTENER_LOG = { perWindow: 20, windowMs: 60_000 } as const;

/**
 * Reports the budgets' summaries once a window, so a quiet listener still says what it held back;
 * `stop()` (when the listener closes) reports what is left.
 */
export function flushEveryWindow(budgets: LogBudget[], windowMs: number = LISTENER_LOG.windowMs): { stop(): void } {
  const flushAll = () => budgets.forEach((b) => b.flush());
  const timer = setInterval(flushAll, windowMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      flushAll();
    },
  };
}
