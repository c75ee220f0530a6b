/**
 * Bounds on what publishing clients can make the gateway do. aedes reads a client's next socket
 * chunk only after every packet of the previous one was handled, so delaying a publish's
 * authorisation throttles that client alone: a flood from one client waits, the others go on.
 */
import type { Clock } from '../../core/clock.js';

export interface RateOptions {
  /** sustained publishes per second per client */
  perSecond: number;
  /** publishes a client may send at once before it is throttled */
  burst: number;
  /** a client this many seconds of throttling behind is disconnected instead */
  maxDelaySeconds: number;
}

export const DEFAULT_RATE: RateOptions = { perSecond: 100, burst: 500, maxDelaySeconds: 10 };

/**
 * A token bucket that may go into debt: `take()` answers how long to wait before the publish may
 * proceed (0: at once), or -1 when the debt is beyond `maxDelaySeconds` (disconnect).
 */
export class PublishBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly o: RateOptions,
    private readonly clock: Clock,
  ) {
    this.tokens = o.burst;
    this.at = clock.now().getTime();
  }

  take(): number {
    const now = this.clock.now().getTime();
    this.tokens = Math.min(this.o.burst, this.tokens + ((now - this.at) / 1000) * this.o.perSecond);
    this.at = now;
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    const waitMs = (-this.tokens / this.o.perSecond) * 1000;
    if (waitMs > this.o.maxDelaySeconds * 1000) {
      this.tokens += 1;
      return -1;
    }
    return Math.ceil(waitMs);
  }
}

/** A counting semaphore: at most `limit` holders; the others wait in arrival order. */
export class Semaphore {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  acquire(): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held--;
  }

  get pending(): number {
    return this.held + this.waiting.length;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
