/**
 * The forwards' journal: every location and alert an account stores becomes an event of its
 * stream (forward_events), written in the same transaction as the location or alert, so a forward
 * reads exactly what was committed, in the order it was stored. Only accounts with an enabled
 * forward are journaled: the others pay one set lookup. Which accounts those are is read from the
 * database at most every `refreshMs` and again at once when a forward changes (the event bus, and
 * with Redis every instance's): a forward created on another instance without Redis is journaled
 * here within `refreshMs`.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { EventBus } from '../events/event-bus.js';
import type { Alert } from '../model/alert.js';
import type { Location } from '../model/location.js';
import * as repo from './forwards.repository.js';

export interface JournaledLocation {
  deviceId: string;
  location: Location;
  /** the location's JSON text, when already serialised */
  json?: string;
}

export interface ForwardJournal {
  /** Inside the ingest batch's transaction, once its locations are written (new fixes and corrections). */
  locations(
    trx: Knex.Transaction,
    written: readonly JournaledLocation[],
    accountOf: (deviceId: string) => string,
  ): Promise<void>;
  /** Inside the alert's transaction, once it is inserted. */
  alert(trx: Knex.Transaction, item: { accountId: string; deviceId: string; alert: Alert }): Promise<void>;
  /** Stops listening to the event bus. */
  close(): void;
}

export function createForwardJournal(deps: {
  db: Db;
  clock: Clock;
  events: EventBus;
  refreshMs?: number;
}): ForwardJournal {
  const { clock, events } = deps;
  const refreshMs = deps.refreshMs ?? 2000;
  let accounts = new Set<string>();
  let loadedAt = -Infinity;
  // a read that started before a change must not be taken as the answer after it
  let generation = 0;
  const off = events.onForwardsChanged(() => {
    generation++;
    loadedAt = -Infinity;
  });

  /** The accounts with an enabled forward, read through the transaction (SQLite has one connection). */
  async function forwarding(trx: Knex.Transaction): Promise<Set<string>> {
    const now = clock.now().getTime();
    if (now - loadedAt < refreshMs) return accounts;
    const started = generation;
    const read = new Set(await repo.accountsWithEnabled(trx));
    if (generation === started) {
      accounts = read;
      loadedAt = now;
    }
    return read;
  }

  return {
    async locations(trx, written, accountOf) {
      if (written.length === 0) return;
      const wanted = await forwarding(trx);
      if (wanted.size === 0) return;
      const now = clock.now().getTime();
      const rows: repo.NewStreamEvent[] = [];
      for (const w of written) {
        const accountId = accountOf(w.deviceId);
        if (wanted.has(accountId))
          rows.push({
            accountId,
            deviceId: w.deviceId,
            kind: 'location',
            body: w.json ?? JSON.stringify(w.location),
            createdAt: now,
          });
      }
      if (rows.length === 0) return;
      await repo.lockStreams(
        trx,
        rows.map((r) => r.accountId),
      );
      await repo.insertEvents(trx, rows);
    },
    async alert(trx, item) {
      if (!(await forwarding(trx)).has(item.accountId)) return;
      await repo.lockStreams(trx, [item.accountId]);
      await repo.insertEvents(trx, [
        {
          accountId: item.accountId,
          deviceId: item.deviceId,
          kind: 'alert',
          body: JSON.stringify(item.alert),
          createdAt: clock.now().getTime(),
        },
      ]);
    },
    close: off,
  };
}
