/**
 * Writes the rule engine's changed states (compare-and-set) and the last fixes evaluated per
 * device. A state another instance wrote first is read again and replaces ours. Runs every
 * FLUSH_MS (the engine's timer) and when FLUSH_ROWS states changed. (An alert is recorded before
 * the state that says it fired is written: a crash in between, at most FLUSH_MS, may raise that
 * episode's alert once more.)
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import * as store from './rule-state.repository.js';
import type { RuleSlot } from './rule-contexts.js';

/** changed states are written together, at least this often … */
export const FLUSH_MS = 200;
/** … or once this many changed */
const FLUSH_ROWS = 500;
/** the last fixes evaluated per device are saved this often */
const FIXES_EVERY_MS = 2000;

type Fix = { lastFix: number; lastReport: number };
type Write = { slot: RuleSlot; row: store.StoredRuleState };

export class StateFlusher {
  private readonly dirty = new Set<RuleSlot>();
  /** per device: the last fix evaluated and when its last position was received, to be saved */
  private readonly fixesToSave = new Map<string, Fix>();
  private flushing: Promise<void> | undefined;
  private again = false;
  private fixesSavedAt = -Infinity;
  /** once stopping: the last fixes are saved at every flush */
  stopped = false;

  constructor(private readonly deps: { db: Db; clock: Clock; logger: Logger }) {}

  markDirty(slot: RuleSlot): void {
    slot.dirty = true;
    this.dirty.add(slot);
    if (this.dirty.size >= FLUSH_ROWS) void this.flush();
  }

  saveFix(deviceId: string, fix: Fix): void {
    this.fixesToSave.set(deviceId, fix);
  }

  /** the flush under way, if one is */
  get running(): Promise<void> | undefined {
    return this.flushing;
  }

  flush(): Promise<void> {
    if (this.flushing) {
      this.again = true;
      return this.flushing;
    }
    if (this.dirty.size === 0 && (this.fixesToSave.size === 0 || (!this.fixesDue() && !this.stopped)))
      return Promise.resolve();
    this.flushing = this.write().finally(() => {
      this.flushing = undefined;
      if (this.again) {
        this.again = false;
        void this.flush();
      }
    });
    return this.flushing;
  }

  // the last fixes are saved every FIXES_EVERY_MS (they matter after a restart, and Offline counts minutes)
  private fixesDue(): boolean {
    return performance.now() - this.fixesSavedAt >= FIXES_EVERY_MS;
  }

  private takeFixes(): Map<string, Fix> {
    if (!this.fixesDue() && !this.stopped) return new Map();
    const fixes = new Map(this.fixesToSave);
    this.fixesToSave.clear();
    this.fixesSavedAt = performance.now();
    return fixes;
  }

  private async write(): Promise<void> {
    const writes: Write[] = [...this.dirty].map((slot) => {
      slot.dirty = false;
      return { slot, row: { ...slot.stored } };
    });
    this.dirty.clear();
    const fixes = this.takeFixes();
    let conflicts: RuleSlot[];
    try {
      conflicts = await this.writeRows(writes, fixes);
    } catch (err) {
      this.deps.logger.warn(
        { err: (err as Error).message, states: writes.length },
        'alert rules: writing their states failed; tried again shortly',
      );
      for (const w of writes) this.markDirty(w.slot);
      for (const [d, f] of fixes) if (!this.fixesToSave.has(d)) this.fixesToSave.set(d, f);
      return;
    }
    for (const w of writes) if (!conflicts.includes(w.slot)) w.slot.stored.version = w.row.version + 1;
    // another instance wrote these first: its state is the one
    for (const slot of conflicts) {
      const fresh = await store.stateOf(this.deps.db, slot.rule.id, slot.stored.deviceId);
      if (fresh) slot.stored = fresh;
      slot.dirty = false;
      this.dirty.delete(slot);
    }
  }

  /**
   * New states in multi-row inserts, changed ones compare-and-set; at most FLUSH_ROWS per
   * transaction, so that on SQLite the ingest's group commit waits for none long. Answers the
   * slots another instance wrote first.
   */
  private async writeRows(writes: Write[], fixes: Map<string, Fix>): Promise<RuleSlot[]> {
    const conflicts: RuleSlot[] = [];
    const t = this.deps.clock.now().getTime();
    for (let i = 0; i < writes.length || (i === 0 && fixes.size); i += FLUSH_ROWS) {
      const part = writes.slice(i, i + FLUSH_ROWS);
      await this.deps.db.transaction(async (trx) => {
        const fresh = part.filter((w) => w.row.version === 0);
        const taken = await store.insertStates(
          trx,
          fresh.map((w) => w.row),
          t,
        );
        for (const w of fresh) if (!taken.has(`${w.row.ruleId}|${w.row.deviceId}`)) conflicts.push(w.slot);
        const changed = part.filter((w) => w.row.version > 0);
        const written = await store.updateStates(
          trx,
          changed.map((w) => w.row),
          t,
        );
        for (const w of changed) if (!written.has(`${w.row.ruleId}|${w.row.deviceId}`)) conflicts.push(w.slot);
        if (i === 0 && fixes.size) await store.saveLastFixes(trx, fixes);
      });
    }
    return conflicts;
  }
}
