/**
 * A forward reads its stream without waiting for the write connection: on SQLite the one write
 * connection is held by the ingest's group commits (and, here, by a transaction the test keeps
 * open), so the delivery loop reads committed events through the read-only connection and sends
 * them meanwhile; only moving its cursor waits for the writer.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { closeDb, migrate, openDb } from '../../../core/db/db.js';
import { EventBus } from '../../../core/events/event-bus.js';
import * as repo from '../../../core/forward/forwards.repository.js';
import { startForwardRunner } from '../../../core/forward/forward.runner.js';
import { openForwarder } from '../../../core/forward/open-forwarder.js';
import { createForwardTargets } from '../../../core/forward/forward.targets.js';
import { systemClock } from '../../../core/clock.js';
import { backends, createStorage } from '../../helpers/backends.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { startWebhookReceiver, ALLOW_RECEIVERS } from '../../helpers/forward-receivers.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';

for (const backend of await backends()) {
  test(`forward.reads (${backend}): committed events are sent while another transaction holds the writer`, async (t) => {
    const storage = await createStorage(backend);
    t.teardown(() => storage.cleanup());
    const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
    await migrate(db);
    const hook = await startWebhookReceiver();
    t.teardown(() => hook.close());
    const accountId = 'acc-reads';
    await db('accounts').insert({ id: accountId, name: 'A', licenses: 1, time_zone: 'UTC', created_at: 1 });
    const now = Date.now();
    await repo.insert(
      db,
      {
        id: randomUUID(),
        accountId,
        name: 'hook',
        type: 'webhook',
        url: hook.url,
        events: ['locations'],
        groupId: null,
        enabled: true,
        topic: null,
        exchange: null,
        secret: null,
        created: now,
        modified: now,
      },
      0,
    );
    const events = new EventBus();
    // the receiver is on loopback, which forwards reach only when allowed
    const targets = createForwardTargets({ allow: ALLOW_RECEIVERS, timeoutMs: 5000 });
    // the loop looks only when woken (a long poll), so the test decides when it reads
    const runner = startForwardRunner({
      db,
      clock: systemClock,
      logger: capturingLogger(),
      events,
      targets,
      open: (f) => openForwarder(f, { timeoutMs: 5000, userAgent: 'test', targets }),
      settings: { retentionMs: 86_400_000, maxPendingPerAccount: 1_000_000, pollMs: 60_000, webhookDelayMs: 0 },
    });
    let release = () => {};
    let holding: Promise<unknown> = Promise.resolve();
    t.teardown(async () => {
      release();
      await holding;
      await runner.stop();
      await closeDb(db);
    });
    // the loop has started (its lease taken) and found nothing
    await until(
      'the loop has its lease',
      async () => (await db('forwards').first('lease_holder'))?.lease_holder != null,
    );
    await new Promise((r) => setTimeout(r, 200));

    await db.transaction((trx) =>
      repo.insertEvents(
        trx,
        [1, 2, 3].map((i) => ({
          accountId,
          deviceId: 'dev-1',
          kind: 'location' as const,
          body: `{"n":${i}}`,
          createdAt: now,
        })),
      ),
    );
    // another transaction takes the writer (on SQLite the only connection) and keeps it
    let held = () => {};
    const taken = new Promise<void>((r) => (held = r));
    holding = db.transaction(async (trx) => {
      await trx.raw('select 1');
      held();
      await new Promise<void>((r) => (release = r));
    });
    await taken;
    events.locationsStored([{ accountId, deviceId: 'dev-1', location: {} as never }]);

    await until('the events are sent', () => hook.messages.length >= 3, PATIENCE_MS).catch(() => {});
    t.deepEqual(
      hook.messages.map((m) => (m as unknown as { location: { n: number } }).location.n),
      [1, 2, 3],
      'sent while the writer is held',
    );
    release();
    await holding;
    await until(
      'the cursor moves once the writer is free',
      async () => Number((await db('forwards').first('last_event_id')).last_event_id) >= 3,
    );
    t.pass();
  });
}
