/**
 * Storage failures on the tracker path: nothing is acknowledged and the tracker resends. During an
 * outage every tracker fails at once, so these lines share one gateway-wide log budget.
 */
import { isStorageUnavailable } from '../../core/db/storage-errors.js';
import type { Logger } from '../../core/logger.js';
import { LISTENER_LOG, LogBudget } from './log-budget.js';

export function storageFailureBudget(logger: Logger): LogBudget {
  return new LogBudget({
    ...LISTENER_LOG,
    onSuppressed: (count) =>
      logger.error({ count }, 'more tracker frames not stored (storage failing) not logged one by one'),
  });
}

export function logStorageFailure(
  budget: LogBudget,
  logger: Logger,
  nowMs: number,
  error: unknown,
  fields: Record<string, unknown>,
): void {
  if (!budget.take(nowMs)) return;
  const unavailable = isStorageUnavailable(error);
  logger.error(
    { ...fields, unavailable, err: unavailable ? (error as Error).message : error },
    unavailable
      ? 'storage unavailable: frame not acknowledged, the tracker will resend'
      : 'storing failed: frame not acknowledged, the tracker will resend',
  );
}
