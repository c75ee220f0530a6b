/**
 * Delivers every enabled forward (docs/forwards.md): one loop per forward (forward.loop.ts), so a
 * target that hangs holds back only its own forward, each under a lease so that one instance at a
 * time delivers it. A loop moves its cursor in the database only after the target took the batch:
 * at least once, in stream order, nothing held in memory beyond the batch in hand. A forward whose
 * stored settings the API would refuse is not delivered; it holds its lease and records why.
 * Here: the supervisor that starts and stops the loops, and the timers; retention is forward.retention.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import type { Forward } from '../model/forward.js';
import type { Forwarder } from './forwarder.js';
import type { ForwardTargets } from './forward.targets.js';
import * as repo from './forwards.repository.js';
import { ForwardLoop, type LoopContext, type LoopTiming } from './forward.loop.js';
import { sweepStreams } from './forward.retention.js';

export { forwardMessage } from './forward.loop.js';

/** How long a lease lasts without renewal: after an instance dies, another takes its forwards over within this. */
export const FORWARD_LEASE_MS = 10_000;
/** Events a loop reads, and messages it sends, at a time (default of `batchSize`). */
export const FORWARD_BATCH_SIZE = 2000;
/** How long a webhook waits after the first message of a batch was stored for more to fill it (default of `webhookDelayMs`). */
export const FORWARD_WEBHOOK_DELAY_MS = 200;

export interface ForwardRunnerSettings {
  /** undelivered events older than this are dropped (counted, logged) */
  retentionMs: number;
  /** undelivered events beyond the newest this many of an account are dropped (counted, logged) */
  maxPendingPerAccount: number;
  leaseMs?: number;
  /** how often the loops look for forwards to take, and an idle loop for new events (it is also woken when something is stored here) */
  pollMs?: number;
  /** events read, and messages sent, at a time */
  batchSize?: number;
  webhookDelayMs?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
  sweepMs?: number;
}

export interface ForwardRunnerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  events: EventBus;
  /** the adapter of a forward's target */
  open: (f: Forward) => Forwarder;
  /** where forwards may connect: a forward stored with an address now refused is not delivered */
  targets: ForwardTargets;
  settings: ForwardRunnerSettings;
  /** this instance's name in leases; default a random one */
  holder?: string;
}

export interface ForwardRunner {
  /** Drops what retention says to drop, now (it also runs every sweepMs). */
  sweep(): Promise<void>;
  /** Stops every loop, gives the leases back and closes the adapters. */
  stop(): Promise<void>;
}

/** the settings with their defaults */
function timingOf(s: ForwardRunnerSettings): LoopTiming {
  return {
    leaseMs: s.leaseMs ?? FORWARD_LEASE_MS,
    pollMs: s.pollMs ?? 1000,
    batchSize: s.batchSize ?? FORWARD_BATCH_SIZE,
    webhookDelayMs: s.webhookDelayMs ?? FORWARD_WEBHOOK_DELAY_MS,
    retryMinMs: s.retryMinMs ?? 500,
    retryMaxMs: s.retryMaxMs ?? 60_000,
  };
}

export function startForwardRunner(deps: ForwardRunnerDeps): ForwardRunner {
  const { db, clock, logger, events, settings } = deps;
  const ctx: LoopContext = {
    db,
    logger,
    holder: deps.holder ?? randomUUID(),
    now: () => clock.now().getTime(),
    open: deps.open,
    targets: deps.targets,
    timing: timingOf(settings),
  };
  const supervisor = new Supervisor(ctx);
  const sweep = () => sweepStreams(db, logger, settings, ctx.now());

  const offChanged = events.onForwardsChanged(() => void supervisor.supervise());
  // something stored here: the account's loops look at once instead of at their next poll
  const offLocations = events.onLocations((items) => {
    if (supervisor.idle()) return;
    supervisor.wake(new Set(items.map((i) => i.accountId)));
  });
  const offAlert = events.onAlert((item) => supervisor.wake(new Set([item.accountId])));
  const superviseTimer = setInterval(() => void supervisor.supervise(), ctx.timing.pollMs);
  superviseTimer.unref();
  let sweeping = false;
  const sweepTimer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweep()
      .catch((e: Error) => logger.warn({ err: e.message }, 'forward retention not applied; tried again later'))
      .finally(() => {
        sweeping = false;
      });
  }, settings.sweepMs ?? 60_000);
  sweepTimer.unref();
  void supervisor.supervise();

  return {
    sweep,
    async stop() {
      clearInterval(superviseTimer);
      clearInterval(sweepTimer);
      offChanged();
      offLocations();
      offAlert();
      await supervisor.stop();
    },
  };
}

/** The loops of this instance: one per forward whose lease it holds. */
class Supervisor {
  private readonly loops = new Map<string, ForwardLoop>();
  private stopped = false;
  private supervising: Promise<void> | undefined;
  private again = false;

  constructor(private readonly ctx: LoopContext) {}

  idle(): boolean {
    return this.loops.size === 0;
  }

  /** Wakes the loops of these accounts. */
  wake(accounts: ReadonlySet<string>): void {
    for (const loop of this.loops.values()) if (accounts.has(loop.f.accountId)) loop.wake();
  }

  /** Takes the forwards whose lease is free, stops the loops of forwards changed, disabled or deleted; a call while it runs makes it run once more. */
  supervise(): Promise<void> {
    if (this.supervising) {
      this.again = true;
      return this.supervising;
    }
    this.supervising = (async () => {
      do {
        this.again = false;
        try {
          await this.round();
        } catch (e) {
          this.ctx.logger.warn({ err: (e as Error).message }, 'forwards not looked at; tried again shortly');
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.supervising = undefined;
    });
    return this.supervising;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.supervising;
    await Promise.all([...this.loops.values()].map((l) => l.stop()));
    this.loops.clear();
  }

  private async round(): Promise<void> {
    const seen = new Set<string>();
    for (const f of await repo.listEnabled(this.ctx.db)) {
      if (this.stopped) return;
      seen.add(f.id);
      await this.look(f);
    }
    for (const [id, loop] of this.loops) {
      if (seen.has(id)) continue;
      this.loops.delete(id);
      await loop.stop();
    }
    for (const [id, loop] of this.loops) {
      // a loop that lost its lease ends by itself
      if (loop.halted) this.loops.delete(id);
    }
  }

  /** An enabled forward: its loop stopped when it changed or another holds it; one started when its lease is free. */
  private async look(f: Forward & { leaseHolder: string | null; leaseUntil: number }): Promise<void> {
    const { db, holder, now, timing } = this.ctx;
    const loop = this.loops.get(f.id);
    if (loop && (loop.f.modified !== f.modified || (f.leaseHolder !== holder && f.leaseUntil >= now()))) {
      this.loops.delete(f.id);
      await loop.stop();
    }
    if (this.loops.has(f.id)) return;
    if (f.leaseHolder && f.leaseHolder !== holder && f.leaseUntil >= now()) return;
    const t = now();
    if (!(await repo.takeLease(db, f.id, holder, t, t + timing.leaseMs))) return;
    // where it stands now that it is ours (the previous holder may have moved it)
    const current = await repo.findById(db, f.id);
    if (!current?.enabled) return;
    this.loops.set(f.id, new ForwardLoop(this.ctx, current));
  }
}
