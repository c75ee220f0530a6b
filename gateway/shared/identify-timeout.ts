/**
 * TRACKGATE_IDENTIFY_TIMEOUT: a tracker connection that has not named a known device this long
 * after it opened (TCP: no frame of a known device; OsmAnd HTTP: no request of one answered 200)
 * is closed, so idle or half-sent connections cannot hold descriptors for the idle timeout. A
 * flood of them must not flood the log: the first of each 10 minutes is logged at warn with the
 * setting to change, the others counted in one line (and each in trackgate_tracker_identify_timeouts_total).
 */
import type { Logger } from '../../core/logger.js';
import { LogBudget } from './log-budget.js';

/** one line in full per window, gateway-wide */
const IDENTIFY_LOG = { perWindow: 1, windowMs: 10 * 60_000 } as const;

export interface IdentifyTimeout {
  readonly ms: number;
  /** a connection is closed for it: logged within the budget */
  closed(nowMs: number, fields: Record<string, unknown>): void;
  readonly budget: LogBudget;
}

export function identifyTimeout(logger: Logger, seconds: number): IdentifyTimeout {
  const budget = new LogBudget({
    ...IDENTIFY_LOG,
    onSuppressed: (count) =>
      logger.warn(
        { count, seconds },
        'more tracker connections closed for not identifying in time, not logged one by one',
      ),
  });
  return {
    ms: seconds * 1000,
    budget,
    closed(nowMs, fields) {
      if (budget.take(nowMs))
        logger.warn(
          { ...fields, seconds },
          'closing a tracker connection that did not identify a known device in time (TRACKGATE_IDENTIFY_TIMEOUT)',
        );
    },
  };
}

/** The close reason a connection's own log line gives. */
export const identifyTimeoutReason = (seconds: number): string => `not identified within ${seconds} s`;
