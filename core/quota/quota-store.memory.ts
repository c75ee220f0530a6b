/** In-process daily counters (embedded default). One event loop makes each call atomic. */
import { systemClock, type Clock } from '../clock.js';
import type { QuotaStore } from './quota-store.js';

export interface MemoryQuotaStore extends QuotaStore {
  /** Drops expired counters; returns how many. Runs by itself every `sweepMs`. */
  sweep(): number;
  /** Stops the sweep timer. */
  close(): void;
}

interface Counter {
  count: number;
  expiresAtMs: number;
}

export function createMemoryQuotaStore(options: { clock?: Clock; sweepMs?: number } = {}): MemoryQuotaStore {
  const clock = options.clock ?? systemClock;
  const counters = new Map<string, Counter>();
  /** initial() calls in flight: concurrent reserves of a missing counter share one */
  const starting = new Map<string, Promise<number>>();

  // Expiry is checked on every read, so the sweep only bounds memory: yesterday's keys are never read again.
  const live = (key: string): Counter | undefined => {
    const c = counters.get(key);
    if (c && c.expiresAtMs <= clock.now().getTime()) {
      counters.delete(key);
      return undefined;
    }
    return c;
  };

  const sweep = (): number => {
    const now = clock.now().getTime();
    let removed = 0;
    for (const [key, c] of counters) {
      if (c.expiresAtMs <= now) {
        counters.delete(key);
        removed++;
      }
    }
    return removed;
  };
  const timer = setInterval(sweep, options.sweepMs ?? 10 * 60_000);
  timer.unref();

  return {
    async reserve(key, limit, expiresAt, initial) {
      let c = live(key);
      if (!c && initial) {
        let started = starting.get(key);
        if (!started) {
          started = initial().finally(() => starting.delete(key));
          starting.set(key, started);
        }
        const start = await started;
        // The first reserve back from the wait starts the counter; the others find it. One started
        // at 0 is kept too, so initial() runs once per key even at a limit of 0.
        c = live(key);
        if (!c) counters.set(key, (c = { count: start, expiresAtMs: expiresAt.getTime() }));
      }
      const count = c?.count ?? 0;
      if (count >= limit) return { ok: false, count };
      counters.set(key, { count: count + 1, expiresAtMs: expiresAt.getTime() });
      return { ok: true, count: count + 1 };
    },
    async release(key) {
      const c = live(key);
      if (c && c.count > 0) c.count--;
    },
    async get(keys) {
      return keys.map((k) => live(k)?.count ?? 0);
    },
    sweep,
    close: () => clearInterval(timer),
  };
}
