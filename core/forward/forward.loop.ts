/**
 * One forward's delivery loop (forward.runner.ts starts and stops them): it holds the forward's
 * lease while it lives, reads the account's stream after its cursor, sends what the forward wants
 * and only then moves the cursor; see forward.runner.ts for the whole of it. A forward whose stored
 * settings fail the API's checks is not delivered: its loop says why in the status and waits.
 */
import type { Db } from '../db/db.js';
import type { Logger } from '../logger.js';
import type { Forward, ForwardMessage, ForwardProgress } from '../model/forward.js';
import type { Forwarder } from './forwarder.js';
import type { ForwardTargets } from './forward.targets.js';
import * as repo from './forwards.repository.js';
import { storedForwardProblem } from './forwards.service.js';
import { backoffMs, jittered } from '../backoff.js';

export type Enabled = Forward & ForwardProgress;

/** the runner's settings, defaults applied */
export interface LoopTiming {
  leaseMs: number;
  pollMs: number;
  batchSize: number;
  webhookDelayMs: number;
  retryMinMs: number;
  retryMaxMs: number;
}

/** What every loop of a runner shares. */
export interface LoopContext {
  db: Db;
  logger: Logger;
  /** this instance's name in leases */
  holder: string;
  /** the clock's time, epoch ms */
  now: () => number;
  open: (f: Forward) => Forwarder;
  targets: ForwardTargets;
  timing: LoopTiming;
}

/** The message as a forward sends it: `{id, event, deviceId, location | alert}`, the body embedded as stored. */
export function forwardMessage(e: repo.StreamEvent): ForwardMessage {
  return {
    id: e.id,
    event: e.kind,
    deviceId: e.deviceId,
    json: `{"id":${e.id},"event":"${e.kind}","deviceId":${JSON.stringify(e.deviceId)},"${e.kind}":${e.body}}`,
  };
}

/** the wait before try `n` + 1 of what failed `n` times: from retryMinMs, doubling, at most retryMaxMs */
const retryMs = (t: LoopTiming, n: number) => backoffMs({ minMs: t.retryMinMs, maxMs: t.retryMaxMs }, n);

/** how long a stop waits for the batch being sent (forward.loop.ts stop) */
export const STOP_DRAIN_MS = 5_000;

export class ForwardLoop {
  halted = false;
  private wakeUp: (() => void) | undefined;
  /** none while `problem` says why the forward is not delivered */
  private readonly forwarder: Forwarder | undefined;
  private readonly problem: string | null;
  private readonly renew: NodeJS.Timeout;
  readonly done: Promise<void>;
  private readonly log: Logger;
  private readonly kinds: Set<string>;
  /** the last event delivered (or skipped) */
  private cursor: number;
  private failingSince: number | null;
  private attempts = 0;
  /** a batch is with the target, not yet answered */
  private sending = false;
  /** the first event of the webhook batch waited for already */
  private filling = -1;

  constructor(
    private readonly ctx: LoopContext,
    readonly f: Enabled,
  ) {
    this.log = ctx.logger.child({ forwardId: f.id, forward: f.name, accountId: f.accountId, type: f.type });
    this.kinds = new Set(f.events.map((k) => (k === 'locations' ? 'location' : 'alert')));
    this.cursor = f.cursor;
    this.failingSince = f.failingSince;
    let problem = storedForwardProblem(f, ctx.targets);
    try {
      this.forwarder = problem === null ? ctx.open(f) : undefined;
    } catch (e) {
      // an adapter that cannot be made of these settings: a throw here stopped the supervisor's round, and with it every forward after this one
      problem = `the target could not be set up: ${(e as Error).message}`;
    }
    this.problem = problem;
    // the lease is renewed while the loop lives, also while a target hangs or a backoff runs
    this.renew = setInterval(() => this.renewLease(), Math.max(50, Math.floor(ctx.timing.leaseMs / 3)));
    this.renew.unref();
    this.done = this.run().catch((e: Error) => this.log.error({ err: e }, 'forward loop failed'));
  }

  wake(): void {
    this.wakeUp?.();
  }

  /** Ends the loop at once: its target is closed, what it was sending is cut off (another holder sends it again). */
  halt(why?: string): void {
    this.end(why);
    void this.forwarder?.close();
  }

  /** No new batch is read; no further retry */
  private end(why?: string): void {
    if (this.halted) return;
    this.halted = true;
    if (why) this.log.info({ why }, 'forward delivered elsewhere now');
    clearInterval(this.renew);
    this.wakeUp?.();
  }

  /**
   * Ends the loop, letting the batch being sent finish and its progress be saved for up to
   * `drainMs`: cutting it off when the target had taken it already made the next start send it
   * once more. A target slower than that is cut off (and sent again: at least once).
   */
  async stop(drainMs = STOP_DRAIN_MS): Promise<void> {
    this.end();
    if (this.sending) this.log.info({ drainMs }, 'forward stopping once the batch being sent is answered');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.done, new Promise((resolve) => (timer = setTimeout(resolve, drainMs)))]);
    clearTimeout(timer);
    await this.forwarder?.close();
    await this.done;
    await repo.releaseLease(this.ctx.db, this.f.id, this.ctx.holder).catch(() => {});
  }

  private renewLease(): void {
    const t = this.ctx.now();
    repo.takeLease(this.ctx.db, this.f.id, this.ctx.holder, t, t + this.ctx.timing.leaseMs).then(
      (held) => {
        if (!held) this.halt('lease lost');
      },
      (e: Error) => this.log.warn({ err: e.message }, 'forward lease not renewed'),
    );
  }

  /** A pause the stream's wake-ups cut short, as stopping does. */
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

  /**
   * Settings the API refuses: nothing is read or sent. The status says why, from when, and what to
   * do, until a change of the forward starts a new loop (supervise), which clears it once
   * corrected (forwards.service.ts update); said once in the log, not at every poll.
   */
  private async refused(problem: string): Promise<void> {
    const { db, holder, now, timing } = this.ctx;
    const since = this.f.failingSince ?? now();
    const error = `not delivered: its settings fail the API's checks (${problem.replace(/\.$/, '')}); correct them with PUT or PATCH: its messages wait meanwhile`;
    this.log.warn(
      { err: problem },
      "forward not delivered: its stored settings fail the API's checks; its messages wait until a PUT or PATCH corrects them",
    );
    for (let tries = 1; !this.halted; tries++) {
      try {
        await repo.recordFailure(db, this.f.id, holder, error, since, now() + timing.leaseMs, this.f.modified);
        break;
      } catch {
        await this.sleepOnly(retryMs(timing, tries));
      }
    }
    while (!this.halted) await this.sleepOnly(timing.retryMaxMs);
  }

  /** Batch after batch: read, send, then save the progress; until halted. */
  private async run(): Promise<void> {
    const forwarder = this.forwarder;
    if (!forwarder) return this.refused(this.problem ?? `no adapter for the type "${this.f.type}"`);
    while (!this.halted) {
      const batch = await this.nextBatch();
      if (!batch) continue;
      const messages = await this.deliver(forwarder, batch);
      if (!messages) continue;
      const last = batch[batch.length - 1].id;
      if (!(await this.saveProgress(last, messages.length))) return;
      this.cursor = last;
      if (this.failingSince !== null && messages.length) {
        this.log.info(
          { failedForMs: this.ctx.now() - this.failingSince, attempts: this.attempts },
          'forward recovered',
        );
        this.failingSince = null;
        this.attempts = 0;
      }
    }
  }

  /**
   * The events after the cursor, at most batchSize; undefined once it paused instead (nothing new,
   * the stream not read, or a webhook's batch given time to fill).
   */
  private async nextBatch(): Promise<repo.StreamEvent[] | undefined> {
    const { db, now, timing } = this.ctx;
    let batch: repo.StreamEvent[];
    try {
      batch = await repo.readEvents(db, this.f.accountId, this.cursor, timing.batchSize);
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'forward stream not read; tried again shortly');
      await this.sleep(timing.pollMs);
      return undefined;
    }
    if (batch.length === 0) {
      await this.sleep(timing.pollMs);
      return undefined;
    }
    // once per batch, so that clocks that differ between instances (or stand still) cannot hold it
    if (batch.length < timing.batchSize && this.f.type === 'webhook' && this.filling !== batch[0].id) {
      const wait = Math.min(timing.webhookDelayMs, batch[0].createdAt + timing.webhookDelayMs - now());
      this.filling = batch[0].id;
      if (wait > 0) {
        await this.sleepOnly(wait);
        return undefined;
      }
    }
    return batch;
  }

  /** Sends what the forward wants of the batch: the messages sent, or undefined once it failed (and waited its backoff). */
  private async deliver(forwarder: Forwarder, batch: repo.StreamEvent[]): Promise<ForwardMessage[] | undefined> {
    let wanted = batch.filter((e) => this.kinds.has(e.kind));
    try {
      if (this.f.groupId && wanted.length) {
        const inGroup = await repo.devicesInGroup(
          this.ctx.db,
          this.f.groupId,
          wanted.map((e) => e.deviceId),
        );
        wanted = wanted.filter((e) => inGroup.has(e.deviceId));
      }
      const messages = wanted.map(forwardMessage);
      this.sending = messages.length > 0;
      if (messages.length) await forwarder.send(messages);
      return messages;
    } catch (e) {
      if (!this.halted) await this.failed((e as Error).message, batch.length);
      return undefined;
    } finally {
      this.sending = false;
    }
  }

  /** The first failure is logged; each is recorded in the status, then the backoff runs. */
  private async failed(error: string, pending: number): Promise<void> {
    const { db, holder, now, timing } = this.ctx;
    this.attempts++;
    const t = now();
    if (this.failingSince === null) {
      this.failingSince = t;
      this.log.warn({ err: error, pending }, 'forward failing: its messages wait in the database and are sent again');
    }
    await repo.recordFailure(db, this.f.id, holder, error, this.failingSince, t + timing.leaseMs).catch(() => {});
    await this.sleep(jittered(retryMs(timing, this.attempts)));
  }

  /**
   * Delivered: its progress is saved, and only that is tried again while the database refuses it
   * (a full disk, an outage), with the failing target's backoff. Sending the batch again each time
   * repeated it every second for as long as the disk stayed full. Should this process stop first,
   * the next holder sends the batch once more (at least once). False: the loop is to end (halted,
   * or the lease lost).
   */
  private async saveProgress(last: number, sent: number): Promise<boolean> {
    const { db, holder, now, timing } = this.ctx;
    for (let tries = 1; ; tries++) {
      try {
        const t = now();
        if (!(await repo.advance(db, this.f.id, holder, last, sent ? t : null, t + timing.leaseMs))) {
          this.halt('lease lost');
          return false;
        }
        if (tries > 1) this.log.info({ tries }, 'forward progress saved');
        return true;
      } catch (e) {
        if (this.halted) return false;
        if (tries === 1)
          this.log.warn(
            { err: (e as Error).message },
            'forward progress not saved; saving it again shortly (the batch was delivered and is not sent again meanwhile)',
          );
        await this.sleepOnly(jittered(retryMs(timing, tries)));
        if (this.halted) return false;
      }
    }
  }
}
