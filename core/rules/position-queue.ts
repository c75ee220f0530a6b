/**
 * The positions waiting for the rule engine, in the order stored (so each device's in its order),
 * and the one worker that evaluates them against their devices' rules.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { StoredLocation } from '../events/event-bus.js';
import type { Location } from '../model/location.js';
import type { RuleInput, RulePosition } from './rule-detectors.js';
import { CONTEXT_CHUNK, ACCOUNT_TTL_MS, type AccountRulesCache, type DeviceContexts } from './rule-contexts.js';
import type { RuleEvaluator } from './rule-evaluator.js';
import type { StateFlusher } from './state-flusher.js';

/** positions waiting for evaluation, beyond which the oldest are dropped (a warning per episode) */
const MAX_QUEUED = 200_000;
/**
 * Evaluation gives the event loop a turn (setImmediate) once it has run this long: on SQLite every
 * query settles synchronously, so a batch of positions raising thousands of alerts would otherwise
 * hold the loop (health, trackers, the API) until the last one is stored.
 */
const YIELD_MS = 5;

/** The position a detector reads, from a stored location (REST shape). */
export function rulePosition(l: Location): RulePosition {
  const a = (l.attributes ?? {}) as Record<string, unknown>;
  return {
    fixTime: Date.parse(l.dateTime),
    latitude: l.latitude,
    longitude: l.longitude,
    speed: l.speed,
    valid: l.valid,
    battery: l.battery,
    fuel: l.fuel,
    temperature: l.temperature,
    mileage: l.milleage,
    ignition: typeof a.ignition === 'boolean' ? a.ignition : l.inputs?.[0],
    attributes: a,
  };
}

/** Gives the event loop a turn when evaluation has run YIELD_MS (real time) since the last; cheap otherwise. */
export class Breather {
  private since = performance.now();

  async breathe(): Promise<void> {
    if (performance.now() - this.since < YIELD_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

export interface QueueParts {
  clock: Clock;
  logger: Logger;
  accounts: AccountRulesCache;
  contexts: DeviceContexts;
  evaluator: RuleEvaluator;
  flusher: StateFlusher;
  breather: Breather;
}

type Job = { deviceId: string; accountId: string; locations: Location[] };

export class PositionQueue {
  private jobs: Job[] = [];
  private head = 0;
  private queued = 0;
  private dropping = 0;
  /** the worker, while it runs */
  working: Promise<void> | undefined;
  stopped = false;

  constructor(private readonly parts: QueueParts) {}

  enqueue(items: StoredLocation[]): void {
    if (this.stopped) return;
    const t = this.parts.clock.now().getTime();
    let last: Job | undefined;
    for (const i of items) {
      // an account known to have no rules: nothing to do, at the cost of a lookup
      const known = this.parts.accounts.peek(i.accountId);
      if (known && known.rules.length === 0 && t - known.at < ACCOUNT_TTL_MS) continue;
      if (this.queued >= MAX_QUEUED) {
        if (this.dropping++ === 0)
          this.parts.logger.warn(
            { queued: this.queued },
            'alert rules: evaluation falls behind; positions are not evaluated until it catches up',
          );
        continue;
      }
      this.queued++;
      // a batch holds each device's rows together: one job per run of a device
      if (last?.deviceId === i.deviceId) last.locations.push(i.location);
      else this.jobs.push((last = { deviceId: i.deviceId, accountId: i.accountId, locations: [i.location] }));
    }
    if (!this.working) this.drain();
  }

  /** Runs the worker (after `first`, the catch-up at start), and again if jobs came as it ended. */
  drain(first: Promise<void> = Promise.resolve()): void {
    this.working = first
      .then(() => this.work())
      .finally(() => {
        this.working = undefined;
        if (this.head < this.jobs.length) this.drain();
      });
  }

  /** Evaluates a device's positions in fix-time order, each only if newer than the last evaluated. */
  async onPositions(deviceId: string, accountId: string, locations: Location[]): Promise<void> {
    const { accounts, contexts, evaluator, breather } = this.parts;
    const account = await accounts.get(accountId);
    if (account.rules.length === 0) return;
    const ctx = await contexts.of(deviceId, accountId, account.rules);
    if (ctx.slots.length === 0) return;
    const positions = locations.map(rulePosition).sort((a, b) => a.fixTime - b.fixTime);
    // received: when the ingest stored them (serverTime), not when they are evaluated
    let received = 0;
    for (const l of locations) received = Math.max(received, l.serverTime ? Date.parse(l.serverTime) : 0);
    const lastReport = received || this.parts.clock.now().getTime();
    for (const p of positions) {
      if (!(p.fixTime > ctx.lastFix)) continue;
      ctx.lastFix = p.fixTime;
      const input: RuleInput = { kind: 'position', position: p };
      for (const slot of ctx.slots) {
        const pending = evaluator.evaluate(slot, deviceId, accountId, input, account.zones);
        if (pending) await pending;
        await breather.breathe();
      }
    }
    this.parts.flusher.saveFix(deviceId, { lastFix: Number.isFinite(ctx.lastFix) ? ctx.lastFix : 0, lastReport });
  }

  private async work(): Promise<void> {
    while (this.head < this.jobs.length) {
      const job = this.jobs[this.head];
      const known = this.parts.accounts.peek(job.accountId);
      if (!this.parts.contexts.has(job.deviceId) && !(known && known.rules.length === 0)) await this.prefetch();
      this.head++;
      try {
        await this.onPositions(job.deviceId, job.accountId, job.locations);
      } catch (err) {
        this.parts.logger.warn(
          { err: (err as Error).message, deviceId: job.deviceId },
          'alert rules: evaluating positions failed',
        );
      }
      this.queued -= job.locations.length;
      await this.parts.breather.breathe();
      if (this.head >= 4096) {
        this.jobs = this.jobs.slice(this.head);
        this.head = 0;
      }
    }
    this.jobs = [];
    this.head = 0;
    if (this.dropping > 0) {
      this.parts.logger.warn({ dropped: this.dropping }, 'alert rules: caught up');
      this.dropping = 0;
    }
  }

  /** Reads at once the contexts of the waiting jobs' devices that have none (per account with rules). */
  private async prefetch(): Promise<void> {
    const byAccount = new Map<string, { deviceId: string; accountId: string }[]>();
    for (let i = this.head; i < this.jobs.length && i < this.head + 4 * CONTEXT_CHUNK; i++) {
      const j = this.jobs[i];
      if (this.parts.contexts.has(j.deviceId)) continue;
      const list = byAccount.get(j.accountId) ?? [];
      list.push({ deviceId: j.deviceId, accountId: j.accountId });
      byAccount.set(j.accountId, list);
    }
    for (const [accountId, devices] of byAccount) {
      const account = await this.parts.accounts.get(accountId);
      if (account.rules.length) await this.parts.contexts.load(devices, account.rules);
    }
  }
}
