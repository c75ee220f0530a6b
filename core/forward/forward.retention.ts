/**
 * The forwards' retention (forward.runner.ts `sweep`): events every enabled forward of the account
 * has delivered are deleted; undelivered events stored more than `retentionMs` ago, or beyond the
 * newest `maxPendingPerAccount` of the account, are dropped: each forward's cursor moves past
 * them, the number it lost is added to its `dropped` count and logged.
 */
import type { Db } from '../db/db.js';
import type { Logger } from '../logger.js';
import * as repo from './forwards.repository.js';

export interface Retention {
  retentionMs: number;
  maxPendingPerAccount: number;
}

/** Applies retention to every account with a stream, at `nowMs`. */
export async function sweepStreams(db: Db, logger: Logger, r: Retention, nowMs: number): Promise<void> {
  for (const a of await repo.streamAccounts(db)) await sweepAccount(db, logger, r, a, nowMs);
}

async function sweepAccount(
  db: Db,
  logger: Logger,
  r: Retention,
  a: { accountId: string; last: number },
  nowMs: number,
): Promise<void> {
  const forwards = await repo.cursorsOf(db, a.accountId);
  if (forwards.length === 0) {
    await repo.deleteEvents(db, a.accountId, a.last);
    return;
  }
  const oldest = Math.min(...forwards.map((f) => f.cursor));
  const byAge = await repo.lastStoredBefore(db, a.accountId, oldest, nowMs - r.retentionMs);
  const byCount =
    a.last - oldest > r.maxPendingPerAccount ? await repo.beyondNewest(db, a.accountId, r.maxPendingPerAccount) : 0;
  const boundary = Math.max(byAge, byCount);
  let keepFrom = Infinity;
  for (const f of forwards) {
    if (boundary > f.cursor) {
      const lost = await repo.dropUpTo(db, { ...f, accountId: a.accountId }, boundary);
      if (lost > 0) {
        logger.warn(
          {
            forwardId: f.id,
            forward: f.name,
            accountId: a.accountId,
            dropped: lost,
            reason:
              byAge >= byCount
                ? `stored more than ${Math.round(r.retentionMs / 3600_000)} h ago`
                : `more than ${r.maxPendingPerAccount} waiting`,
          },
          'forward messages dropped by retention: the target did not take them in time',
        );
      }
    }
    keepFrom = Math.min(keepFrom, Math.max(f.cursor, boundary));
  }
  if (keepFrom > 0 && keepFrom !== Infinity) await repo.deleteEvents(db, a.accountId, keepFrom);
}
