/**
 * Delivers every enabled forward: one loop per forward, each on its own (a target that hangs holds
 * back only its forward), under a lease so that one instance at a time delivers it and another
 * takes over within FORWARD_LEASE_MS when one dies.
 *
 * A loop reads its account's stream (forward_events, written with what it carries: see
 * forward.journal.ts) after its cursor, at most `batchSize` events at a time, keeps those of its
 * kinds and group, sends them (forwarder.*.ts) and only then moves its cursor, in the database,
 * past them: at least once, in stream order (so in order per device), nothing held in memory
 * beyond the batch in hand. A failed batch is sent again, whole, after a backoff (retryMinMs
 * doubling up to retryMaxMs); the first failure and the recovery are logged, and the status keeps
 * the last error. A webhook waits up to `webhookDelayMs` after the first message of a batch for
 * more to fill it.
 *
 * A forward whose stored settings the API would refuse (stored before a check existed, or written
 * in the database directly: `mqtt://` with no server, a port 0, which the clients took as
 * localhost or their default port) is checked with the service's own checks before anything is
 * opened, and not delivered: its loop records the problem as the status's last error, logs it once
 * (warn "forward not delivered…") and holds the lease without reading or sending; its messages wait
 * (retention aside) until a change (PUT, PATCH) corrects it and a new loop delivers them. So is a
 * forward to an address TRACKGATE_FORWARD_ALLOW does not (or no longer) name (forward.targets.ts);
 * one to a host name that resolves to such an address fails at each connect, saying why, and its
 * messages wait the same way.
 *
 * Retention (`sweep`, every `sweepMs`): events every enabled forward of the account has delivered
 * are deleted; undelivered events stored more than `retentionMs` ago, or beyond the newest
 * `maxPendingPerAccount` of the account, are dropped: each forward's cursor moves past them, the
 * number it lost is added to its `dropped` count and logged (warn "forward messages dropped by
 * retention").
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import type { Forward, ForwardMessage, ForwardProgress } from '../model/forward.js';
import type { Forwarder } from './forwarder.js';
import type { ForwardTargets } from './forward.targets.js';
import * as repo from './forwards.repository.js';
import { storedForwardProblem } from './forwards.service.js';

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

type Enabled = Forward & ForwardProgress;

/** The message as a forward sends it: `{id, event, deviceId, location | alert}`, the body embedded as stored. */
export function forwardMessage(e: repo.StreamEvent): ForwardMessage {
  return { id: e.id, event: e.kind, deviceId: e.deviceId, json: `{"id":${e.id},"event":"${e.kind}","deviceId":${JSON.stringify(e.deviceId)},"${e.kind}":${e.body}}` };
}

export function startForwardRunner(deps: ForwardRunnerDeps): ForwardRunner {
  const { db, clock, logger, events } = deps;
  const s = deps.settings;
  const holder = deps.holder ?? randomUUID();
  const leaseMs = s.leaseMs ?? FORWARD_LEASE_MS;
  const pollMs = s.pollMs ?? 1000;
  const batchSize = s.batchSize ?? FORWARD_BATCH_SIZE;
  const webhookDelayMs = s.webhookDelayMs ?? FORWARD_WEBHOOK_DELAY_MS;
  const retryMinMs = s.retryMinMs ?? 500;
  const retryMaxMs = s.retryMaxMs ?? 60_000;
  /** the wait before try `n` + 1 of what failed `n` times: from retryMinMs, doubling, at most retryMaxMs */
  const backoffMs = (n: number) => Math.min(retryMaxMs, retryMinMs * 2 ** Math.min(n - 1, 20));
  /** the same within ±20 %, so that forwards failing together do not try again together */
  const jittered = (ms: number) => ms * (0.8 + Math.random() * 0.4);
  const sweepMs = s.sweepMs ?? 60_000;
  const now = () => clock.now().getTime();

  const loops = new Map<string, Loop>();
  let stopped = false;

  class Loop {
    halted = false;
    private wakeUp: (() => void) | undefined;
    /** none while `problem` says why the forward is not delivered */
    private readonly forwarder: Forwarder | undefined;
    private readonly problem: string | null;
    private readonly renew: NodeJS.Timeout;
    readonly done: Promise<void>;
    private readonly log: Logger;

    constructor(readonly f: Enabled) {
      this.log = logger.child({ forwardId: f.id, forward: f.name, accountId: f.accountId, type: f.type });
      let problem = storedForwardProblem(f, deps.targets);
      try {
        this.forwarder = problem === null ? deps.open(f) : undefined;
      } catch (e) {
        // an adapter that cannot be made of these settings: a throw here stopped the supervisor's round, and with it every forward after this one
        problem = `the target could not be set up: ${(e as Error).message}`;
      }
      this.problem = problem;
      // the lease is renewed while the loop lives, also while a target hangs or a backoff runs
      this.renew = setInterval(() => {
        const t = now();
        repo.takeLease(db, f.id, holder, t, t + leaseMs).then(
          (held) => {
            if (!held) this.halt('lease lost');
          },
          (e: Error) => this.log.warn({ err: e.message }, 'forward lease not renewed'),
        );
      }, Math.max(50, Math.floor(leaseMs / 3)));
      this.renew.unref();
      this.done = this.run().catch((e: Error) => this.log.error({ err: e }, 'forward loop failed'));
    }

    wake(): void {
      this.wakeUp?.();
    }

    halt(why?: string): void {
      if (this.halted) return;
      this.halted = true;
      if (why) this.log.info({ why }, 'forward delivered elsewhere now');
      clearInterval(this.renew);
      this.wakeUp?.();
      void this.forwarder?.close();
    }

    private sleep(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        timer.unref?.();
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wakeUp = () => {
          this.wakeUp = undefined;
          done();
        };
      });
    }

    /**
     * Settings the API refuses: nothing is read or sent. The status says why, from when, and what to
     * do, until a change of the forward starts a new loop (supervise), which clears it once
     * corrected (forwards.service.ts update); said once in the log, not at every poll.
     */
    private async refused(problem: string): Promise<void> {
      const since = this.f.failingSince ?? now();
      const error = `not delivered: its settings fail the API's checks (${problem.replace(/\.$/, '')}); correct them with PUT or PATCH: its messages wait meanwhile`;
      this.log.warn({ err: problem }, "forward not delivered: its stored settings fail the API's checks; its messages wait until a PUT or PATCH corrects them");
      for (let tries = 1; !this.halted; tries++) {
        try {
          await repo.recordFailure(db, this.f.id, holder, error, since, now() + leaseMs, this.f.modified);
          break;
        } catch {
          await this.sleepOnly(backoffMs(tries));
        }
      }
      while (!this.halted) await this.sleepOnly(retryMaxMs);
    }

    private async run(): Promise<void> {
      const f = this.f;
      const forwarder = this.forwarder;
      if (!forwarder) return this.refused(this.problem ?? `no adapter for the type "${f.type}"`);
      const kinds = new Set(f.events.map((k) => (k === 'locations' ? 'location' : 'alert')));
      let cursor = f.cursor;
      let failingSince = f.failingSince;
      let attempts = 0;
      let filling = -1;
      while (!this.halted) {
        let batch: repo.StreamEvent[];
        try {
          batch = await repo.readEvents(db, f.accountId, cursor, batchSize);
          // once per batch, so that clocks that differ between instances (or stand still) cannot hold it
          if (batch.length > 0 && batch.length < batchSize && f.type === 'webhook' && filling !== batch[0].id) {
            const wait = Math.min(webhookDelayMs, batch[0].createdAt + webhookDelayMs - now());
            filling = batch[0].id;
            if (wait > 0) {
              await this.sleepOnly(wait);
              continue;
            }
          }
        } catch (e) {
          this.log.warn({ err: (e as Error).message }, 'forward stream not read; tried again shortly');
          await this.sleep(pollMs);
          continue;
        }
        if (batch.length === 0) {
          await this.sleep(pollMs);
          continue;
        }
        const last = batch[batch.length - 1].id;
        let wanted = batch.filter((e) => kinds.has(e.kind));
        let messages: ForwardMessage[] = [];
        try {
          if (f.groupId && wanted.length) {
            const inGroup = await repo.devicesInGroup(db, f.groupId, wanted.map((e) => e.deviceId));
            wanted = wanted.filter((e) => inGroup.has(e.deviceId));
          }
          messages = wanted.map(forwardMessage);
          if (messages.length) await forwarder.send(messages);
        } catch (e) {
          if (this.halted) return;
          attempts++;
          const error = (e as Error).message;
          const t = now();
          if (failingSince === null) {
            failingSince = t;
            this.log.warn({ err: error, pending: batch.length }, 'forward failing: its messages wait in the database and are sent again');
          }
          await repo.recordFailure(db, f.id, holder, error, failingSince, t + leaseMs).catch(() => {});
          await this.sleep(jittered(backoffMs(attempts)));
          continue;
        }
        // Delivered: its progress is saved, and only that is tried again while the database refuses
        // it (a full disk, an outage), with the failing target's backoff. Sending the batch again
        // each time repeated it every second for as long as the disk stayed full. Should this
        // process stop first, the next holder sends the batch once more (at least once).
        for (let tries = 1; ; tries++) {
          try {
            const t = now();
            if (!(await repo.advance(db, f.id, holder, last, messages.length ? t : null, t + leaseMs))) {
              this.halt('lease lost');
              return;
            }
            if (tries > 1) this.log.info({ tries }, 'forward progress saved');
            break;
          } catch (e) {
            if (this.halted) return;
            if (tries === 1) this.log.warn({ err: (e as Error).message }, 'forward progress not saved; saving it again shortly (the batch was delivered and is not sent again meanwhile)');
            await this.sleepOnly(jittered(backoffMs(tries)));
            if (this.halted) return;
          }
        }
        cursor = last;
        if (failingSince !== null && messages.length) {
          this.log.info({ failedForMs: now() - failingSince, attempts }, 'forward recovered');
          failingSince = null;
          attempts = 0;
        }
      }
    }

    /** A pause the stream's wake-ups do not cut short (a webhook batch filling up); stopping does. */
    private sleepOnly(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wakeUp = () => {
          if (this.halted) done();
        };
      });
    }

    async stop(): Promise<void> {
      this.halt();
      await this.done;
      await repo.releaseLease(db, this.f.id, holder).catch(() => {});
    }
  }

  let supervising: Promise<void> | undefined;
  let again = false;
  /** Takes the forwards whose lease is free, stops the loops of forwards changed, disabled or deleted. */
  function supervise(): Promise<void> {
    if (supervising) {
      again = true;
      return supervising;
    }
    supervising = (async () => {
      do {
        again = false;
        try {
          const list = await repo.listEnabled(db);
          const seen = new Set<string>();
          for (const f of list) {
            if (stopped) return;
            seen.add(f.id);
            const loop = loops.get(f.id);
            if (loop && (loop.f.modified !== f.modified || (f.leaseHolder !== holder && f.leaseUntil >= now()))) {
              loops.delete(f.id);
              await loop.stop();
            }
            if (loops.has(f.id)) continue;
            if (f.leaseHolder && f.leaseHolder !== holder && f.leaseUntil >= now()) continue;
            const t = now();
            if (!(await repo.takeLease(db, f.id, holder, t, t + leaseMs))) continue;
            // where it stands now that it is ours (the previous holder may have moved it)
            const current = await repo.findById(db, f.id);
            if (!current || !current.enabled) continue;
            loops.set(f.id, new Loop(current));
          }
          for (const [id, loop] of loops) {
            if (seen.has(id)) continue;
            loops.delete(id);
            await loop.stop();
          }
          for (const [id, loop] of loops) {
            // a loop that lost its lease ends by itself
            if (loop.halted) loops.delete(id);
          }
        } catch (e) {
          logger.warn({ err: (e as Error).message }, 'forwards not looked at; tried again shortly');
        }
      } while (again && !stopped);
    })().finally(() => {
      supervising = undefined;
    });
    return supervising;
  }

  async function sweep(): Promise<void> {
    const t = now();
    for (const a of await repo.streamAccounts(db)) {
      const forwards = await repo.cursorsOf(db, a.accountId);
      if (forwards.length === 0) {
        await repo.deleteEvents(db, a.accountId, a.last);
        continue;
      }
      const oldest = Math.min(...forwards.map((f) => f.cursor));
      const byAge = await repo.lastStoredBefore(db, a.accountId, oldest, t - s.retentionMs);
      const byCount = a.last - oldest > s.maxPendingPerAccount ? await repo.beyondNewest(db, a.accountId, s.maxPendingPerAccount) : 0;
      const boundary = Math.max(byAge, byCount);
      let keepFrom = Infinity;
      for (const f of forwards) {
        if (boundary > f.cursor) {
          const lost = await repo.dropUpTo(db, { ...f, accountId: a.accountId }, boundary);
          if (lost > 0) {
            logger.warn(
              { forwardId: f.id, forward: f.name, accountId: a.accountId, dropped: lost, reason: byAge >= byCount ? `stored more than ${Math.round(s.retentionMs / 3600_000)} h ago` : `more than ${s.maxPendingPerAccount} waiting` },
              'forward messages dropped by retention: the target did not take them in time',
            );
          }
        }
        keepFrom = Math.min(keepFrom, Math.max(f.cursor, boundary));
      }
      if (keepFrom > 0 && keepFrom !== Infinity) await repo.deleteEvents(db, a.accountId, keepFrom);
    }
  }

  const offChanged = events.onForwardsChanged(() => void supervise());
  // something stored here: the account's loops look at once instead of at their next poll
  const offLocations = events.onLocations((items) => {
    if (loops.size === 0) return;
    const accounts = new Set(items.map((i) => i.accountId));
    for (const loop of loops.values()) if (accounts.has(loop.f.accountId)) loop.wake();
  });
  const offAlert = events.onAlert((item) => {
    for (const loop of loops.values()) if (loop.f.accountId === item.accountId) loop.wake();
  });
  const superviseTimer = setInterval(() => void supervise(), pollMs);
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
  }, sweepMs);
  sweepTimer.unref();
  void supervise();

  return {
    sweep,
    async stop() {
      stopped = true;
      clearInterval(superviseTimer);
      clearInterval(sweepTimer);
      offChanged();
      offLocations();
      offAlert();
      await supervising;
      await Promise.all([...loops.values()].map((l) => l.stop()));
      loops.clear();
    },
  };
}
