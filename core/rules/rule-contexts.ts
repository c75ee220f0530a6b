/**
 * What the rule engine keeps in memory of the rules: each account's enabled rules and zones (read
 * again after ACCOUNT_TTL_MS, or at once when an event says they changed), and each device's
 * rules with their states and the last fix evaluated for it.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { AlertRule } from '../model/alert-rule.js';
import { INITIAL_STATE, type ZoneTest } from './rule-detectors.js';
import * as store from './rule-state.repository.js';
import { groupsOf } from '../devices/devices.repository.js';
import { MAX_RULES_PER_DEVICE } from './alert-rules.service.js';

/** how long rules read for an account are trusted without an event saying they changed (other instances without Redis) */
export const ACCOUNT_TTL_MS = 10_000;
/** device contexts read per query */
export const CONTEXT_CHUNK = 500;

/** What the engine reads of the rules (main.ts: the alert-rules and zones repositories). */
export interface RuleSource {
  /** an account's enabled rules, and its zones compiled for testing positions */
  load(accountId: string): Promise<{ rules: AlertRule[]; zones: Map<string, ZoneTest> }>;
  /** the accounts that have enabled rules */
  accounts(): Promise<string[]>;
  /** the devices of a group */
  groupDevices(groupId: string): Promise<string[]>;
}

export interface RuleSlot {
  rule: AlertRule;
  /** the state as evaluated here; `version` is the stored version it was read or last written at */
  stored: store.StoredRuleState;
  /** changed since it was last written */
  dirty: boolean;
}

export interface DeviceContext {
  accountId: string;
  slots: RuleSlot[];
  lastFix: number;
}

export interface AccountRules {
  rules: AlertRule[];
  zones: Map<string, ZoneTest>;
}

/** A rule's slot on a device: its stored state, or the initial one (not stored yet). */
export function newSlot(rule: AlertRule, deviceId: string, stored?: store.StoredRuleState): RuleSlot {
  return {
    rule,
    stored: stored ?? { ruleId: rule.id, deviceId, state: INITIAL_STATE, version: 0, commandDue: null },
    dirty: false,
  };
}

/** The devices' contexts: the rules that watch each, with their states, and its last fix evaluated. */
export class DeviceContexts {
  private readonly contexts = new Map<string, DeviceContext>();

  constructor(private readonly db: Db) {}

  get(deviceId: string): DeviceContext | undefined {
    return this.contexts.get(deviceId);
  }

  has(deviceId: string): boolean {
    return this.contexts.has(deviceId);
  }

  /** The cached slot of one rule on one device. */
  slot(deviceId: string, ruleId: string): RuleSlot | undefined {
    return this.contexts.get(deviceId)?.slots.find((x) => x.rule.id === ruleId);
  }

  forget(deviceId: string): void {
    this.contexts.delete(deviceId);
  }

  forgetAccount(accountId: string): void {
    for (const [id, c] of this.contexts) if (c.accountId === accountId) this.contexts.delete(id);
  }

  /** The rules that watch the device, with their states, and the last fix evaluated. */
  async of(deviceId: string, accountId: string, rules: AlertRule[]): Promise<DeviceContext> {
    const hit = this.contexts.get(deviceId);
    if (hit) return hit;
    await this.load([{ deviceId, accountId }], rules);
    return this.contexts.get(deviceId)!;
  }

  /**
   * Reads the contexts of many devices of an account at once (three queries per CONTEXT_CHUNK
   * devices): the first positions after a start, or after the rules changed, would otherwise cost
   * three queries per device, on SQLite in the ingest's way.
   */
  async load(devices: { deviceId: string; accountId: string }[], rules: AlertRule[]): Promise<void> {
    for (let i = 0; i < devices.length; i += CONTEXT_CHUNK) {
      const chunk = devices.slice(i, i + CONTEXT_CHUNK).filter((d) => !this.contexts.has(d.deviceId));
      if (chunk.length) await this.loadChunk(chunk, rules);
    }
  }

  private async loadChunk(chunk: { deviceId: string; accountId: string }[], rules: AlertRule[]): Promise<void> {
    const ids = chunk.map((d) => d.deviceId);
    const groups = rules.some((r) => r.group) ? await groupsOf(this.db, ids) : new Map<string, string[]>();
    const states = new Map<string, Map<string, store.StoredRuleState>>();
    for (const st of await store.statesOfDevices(this.db, ids)) {
      const m = states.get(st.deviceId) ?? new Map<string, store.StoredRuleState>();
      m.set(st.ruleId, st);
      states.set(st.deviceId, m);
    }
    const fixes = await store.lastFixes(this.db, ids);
    for (const { deviceId, accountId } of chunk) {
      if (this.contexts.has(deviceId)) continue;
      const mine = groups.get(deviceId) ?? [];
      // beyond the limit (a group grown after its rules were made) the oldest rules count
      const watching = rules
        .filter((r) => r.enabled && (r.devices?.includes(deviceId) || (r.group !== null && mine.includes(r.group))))
        .slice(0, MAX_RULES_PER_DEVICE);
      this.contexts.set(deviceId, {
        accountId,
        slots: watching.map((rule) => newSlot(rule, deviceId, states.get(deviceId)?.get(rule.id))),
        lastFix: fixes.get(deviceId) ?? -Infinity,
      });
    }
  }
}

/** Each account's enabled rules and zones, read once and trusted for ACCOUNT_TTL_MS. */
export class AccountRulesCache {
  private readonly accounts = new Map<string, AccountRules & { at: number }>();

  constructor(
    private readonly source: RuleSource,
    private readonly clock: Clock,
    private readonly contexts: DeviceContexts,
  ) {}

  /** What is cached for the account, however old, and when it was read. */
  peek(accountId: string): (AccountRules & { at: number }) | undefined {
    return this.accounts.get(accountId);
  }

  async get(accountId: string): Promise<AccountRules> {
    const now = this.clock.now().getTime();
    const hit = this.accounts.get(accountId);
    if (hit && now - hit.at < ACCOUNT_TTL_MS) return hit;
    const loaded = await this.source.load(accountId);
    const entry = { at: this.clock.now().getTime(), ...loaded };
    this.accounts.set(accountId, entry);
    // rules changed on an instance that could not tell this one (no Redis): the devices' contexts are read again
    if (hit && JSON.stringify(hit.rules) !== JSON.stringify(loaded.rules)) this.contexts.forgetAccount(accountId);
    return entry;
  }

  /** The account's rules changed: read again, with its devices' contexts. */
  forget(accountId: string): void {
    this.accounts.delete(accountId);
    this.contexts.forgetAccount(accountId);
  }
}
