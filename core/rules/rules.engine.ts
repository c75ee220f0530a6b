/**
 * The alert-rule engine (CONTRACT.md "Alert rules and zones"): every stored location, whatever
 * carried it, is evaluated against the rules of its device, after its commit and off the
 * acknowledgement path; the time passing is evaluated by one instance at a time (a lease).
 *
 * - **Order-safe**: a device's positions are evaluated in fix-time order, and a position older
 *   than (or as old as) the last one evaluated for the device is never evaluated: late data raises
 *   no false enter/exit and no repeat. The last fix evaluated is kept per device (rule_devices),
 *   also across restarts.
 * - **Once per episode**: a rule's state per device (rule-detectors.ts) is stored (rule_states)
 *   and written compare-and-set, so instances share it; the alert is recorded before the state
 *   that says it fired (recorded twice by two instances, it is the same alert: same rule, device,
 *   time and name, deduplicated by the alert recorder); positions a crash left stored but not yet
 *   evaluated are evaluated at the next start (recover()).
 * - **One path**: a rule's alert goes through the alert recorder like any other (stored, notified
 *   within the daily limits on the rule's channels, live, forwarded).
 * - **Cheap**: an account without enabled rules costs one map lookup per batch; a device's rules,
 *   zones and states are read once and kept; only state changes are written.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus, StoredLocation } from '../events/event-bus.js';
import type { AlertRecorder } from '../alerts/alert.recorder.js';
import type { AlertRule, RuleSchedule } from '../model/alert-rule.js';
import type { DeviceRecord } from '../model/device.js';
import type { Location } from '../model/location.js';
import type { Principal } from '../model/user.js';
import type { CommandsService } from '../commands/commands.service.js';
import { DETECTORS, INITIAL_STATE, needsTicks, type RuleInput, type RulePosition, type RuleState, type ZoneTest } from './rule-detectors.js';
import * as store from './rule-state.repository.js';
import { groupsOf } from '../devices/devices.repository.js';
import { fixesAfter } from '../locations/locations.repository.js';
import { MAX_RULES_PER_DEVICE } from './alert-rules.service.js';

/** What the engine reads of the rules (main.ts: the alert-rules and zones repositories). */
export interface RuleSource {
  /** an account's enabled rules, and its zones compiled for testing positions */
  load(accountId: string): Promise<{ rules: AlertRule[]; zones: Map<string, ZoneTest> }>;
  /** the accounts that have enabled rules */
  accounts(): Promise<string[]>;
  /** the devices of a group */
  groupDevices(groupId: string): Promise<string[]>;
}

export interface RulesEngineDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  events: EventBus;
  alerts: AlertRecorder;
  source: RuleSource;
  /** a device's record, for its alerts */
  device(id: string): Promise<DeviceRecord | undefined>;
  /** the account's IANA time zone, for schedules */
  timeZoneOf(accountId: string): Promise<string>;
  /** a rule's command goes through the commands path */
  commands?: CommandsService;
  /** how often the time passing is evaluated (default TICK_MS) */
  tickMs?: number;
}

export const TICK_MS = 5000;
/** how long rules read for an account are trusted without an event saying they changed (other instances without Redis) */
const ACCOUNT_TTL_MS = 10_000;
/** positions waiting for evaluation, beyond which the oldest are dropped (a warning per episode) */
const MAX_QUEUED = 200_000;
const LEASE = 'rules-tick';
/** device contexts read per query */
const CONTEXT_CHUNK = 500;
/** changed states are written together, at least this often … */
const FLUSH_MS = 200;
/** the last fixes evaluated per device are saved this often */
const FIXES_EVERY_MS = 2000;
/** … or once this many changed */
const FLUSH_ROWS = 500;
/** stored positions one query of the catch-up at start reads */
const RECOVER_PAGE = 1000;
/**
 * Evaluation gives the event loop a turn (setImmediate) once it has run this long: on SQLite every
 * query settles synchronously, so a batch of positions raising thousands of alerts would otherwise
 * hold the loop (health, trackers, the API) until the last one is stored.
 */
const YIELD_MS = 5;
/** alert names whose alerts are edges (each one an event), not a condition that lasts */
const EDGES = new Set(['CheckArea', 'FuelJumpDown', 'FuelJumpUp']);

export interface RulesEngine {
  /** evaluations not finished (tests wait for them) */
  idle(): Promise<void>;
  /** evaluates the time passing now, if this instance holds the lease (tests call it) */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

interface RuleSlot {
  rule: AlertRule;
  /** the state as evaluated here; `version` is the stored version it was read or last written at */
  stored: store.StoredRuleState;
  /** changed since it was last written */
  dirty: boolean;
}

interface DeviceContext {
  accountId: string;
  slots: RuleSlot[];
  lastFix: number;
}

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

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };
const formatters = new Map<string, Intl.DateTimeFormat>();

/** Whether `at` falls in the schedule, in the account's time zone: `from` included, `to` not; `to` before `from` spans midnight; `to` = `from` is the whole day. */
export function inSchedule(s: RuleSchedule, at: number, timeZone: string): boolean {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  const day = WEEKDAYS[parts.weekday];
  const minute = Number(parts.hour) * 60 + Number(parts.minute);
  const from = toMinutes(s.from);
  const to = toMinutes(s.to);
  if (from === to) return s.days.includes(day);
  if (from < to) return s.days.includes(day) && minute >= from && minute < to;
  // spans midnight: the evening belongs to its day, the early morning to the day before
  if (minute >= from) return s.days.includes(day);
  return minute < to && s.days.includes(day === 1 ? 7 : day - 1);
}
const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

export function startRulesEngine(deps: RulesEngineDeps): RulesEngine {
  const { db, clock, logger, events } = deps;
  const holder = randomUUID();
  const accounts = new Map<string, { at: number; rules: AlertRule[]; zones: Map<string, ZoneTest>; load?: Promise<void> }>();
  const contexts = new Map<string, DeviceContext>();
  /** per device: the last fix evaluated and when its last position was received, to be saved */
  const fixesToSave = new Map<string, { lastFix: number; lastReport: number }>();
  let queued = 0;
  let dropping = 0;
  let stopped = false;

  const now = () => clock.now().getTime();

  let ranSince = performance.now();
  /** Gives the event loop a turn when evaluation has run YIELD_MS since the last; cheap otherwise. */
  async function breathe(): Promise<void> {
    if (performance.now() - ranSince < YIELD_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    ranSince = performance.now();
  }

  async function accountRules(accountId: string): Promise<{ rules: AlertRule[]; zones: Map<string, ZoneTest> }> {
    const hit = accounts.get(accountId);
    if (hit && now() - hit.at < ACCOUNT_TTL_MS) return hit;
    const loaded = await deps.source.load(accountId);
    const entry = { at: now(), ...loaded };
    accounts.set(accountId, entry);
    // rules changed on an instance that could not tell this one (no Redis): the devices' contexts are read again
    if (hit && JSON.stringify(hit.rules) !== JSON.stringify(loaded.rules)) for (const [id, c] of contexts) if (c.accountId === accountId) contexts.delete(id);
    return entry;
  }

  /** The rules that watch the device, with their states, and the last fix evaluated. */
  async function deviceContext(deviceId: string, accountId: string, rules: AlertRule[]): Promise<DeviceContext> {
    const hit = contexts.get(deviceId);
    if (hit) return hit;
    await loadContexts([{ deviceId, accountId }], rules);
    return contexts.get(deviceId)!;
  }

  /**
   * Reads the contexts of many devices of an account at once (three queries per CONTEXT_CHUNK
   * devices): the first positions after a start, or after the rules changed, would otherwise cost
   * three queries per device, on SQLite in the ingest's way.
   */
  async function loadContexts(devices: { deviceId: string; accountId: string }[], rules: AlertRule[]): Promise<void> {
    for (let i = 0; i < devices.length; i += CONTEXT_CHUNK) {
      const chunk = devices.slice(i, i + CONTEXT_CHUNK).filter((d) => !contexts.has(d.deviceId));
      if (chunk.length === 0) continue;
      const ids = chunk.map((d) => d.deviceId);
      const groups = rules.some((r) => r.group) ? await groupsOf(db, ids) : new Map<string, string[]>();
      const states = new Map<string, Map<string, store.StoredRuleState>>();
      for (const st of await store.statesOfDevices(db, ids)) {
        const m = states.get(st.deviceId) ?? new Map<string, store.StoredRuleState>();
        m.set(st.ruleId, st);
        states.set(st.deviceId, m);
      }
      const fixes = await store.lastFixes(db, ids);
      for (const { deviceId, accountId } of chunk) {
        if (contexts.has(deviceId)) continue;
        const mine = groups.get(deviceId) ?? [];
        // beyond the limit (a group grown after its rules were made) the oldest rules count
        const watching = rules.filter((r) => r.enabled && (r.devices?.includes(deviceId) || (r.group !== null && mine.includes(r.group)))).slice(0, MAX_RULES_PER_DEVICE);
        contexts.set(deviceId, {
          accountId,
          slots: watching.map((rule) => ({ rule, stored: states.get(deviceId)?.get(rule.id) ?? { ruleId: rule.id, deviceId, state: INITIAL_STATE, version: 0, commandDue: null }, dirty: false })),
          lastFix: fixes.get(deviceId) ?? -Infinity,
        });
      }
    }
  }

  /** Raises the alert of a rule through the one alert path; false when it could not be recorded (tried again later). */
  async function raise(rule: AlertRule, deviceId: string, alert: { text: string; at: number }, where?: { latitude: number; longitude: number }): Promise<boolean> {
    try {
      const device = await deps.device(deviceId);
      if (!device) return true;
      await deps.alerts.record(
        device,
        { dateTime: new Date(alert.at).toISOString(), alertName: rule.alertName, text: alert.text, alerts: [rule.alertName], latitude: where?.latitude, longitude: where?.longitude },
        { dedupe: true, rule: rule.id, ruleName: rule.name, channels: rule.notify },
      );
      logger.info({ rule: rule.id, alertName: rule.alertName, deviceId }, 'alert rule fired');
      return true;
    } catch (err) {
      logger.warn({ err: (err as Error).message, rule: rule.id, deviceId }, 'an alert rule\'s alert could not be recorded; evaluated again later');
      return false;
    }
  }

  /**
   * Runs one input through a rule: synchronous while nothing fires (the usual case); the state is
   * kept here and written by the next flush. An alert is recorded at once (before the state that
   * says it fired is written); one outside the schedule is not raised (its episode may still fire
   * within it). Answers a promise only when something had to be awaited.
   */
  function evaluate(slot: RuleSlot, deviceId: string, accountId: string, input: RuleInput, zones: Map<string, ZoneTest>): Promise<void> | undefined {
    const rule = slot.rule;
    const zone = rule.params.zone ? zones.get(rule.params.zone) : undefined;
    const before = slot.stored.state;
    const { state, alert } = DETECTORS[rule.alertName](rule, before, input, { zone });
    if (alert) return fire(slot, deviceId, accountId, input, state, alert, before);
    if (state !== before) {
      slot.stored.state = state;
      markDirty(slot);
    }
    return undefined;
  }

  async function fire(slot: RuleSlot, deviceId: string, accountId: string, input: RuleInput, fired: RuleState, alert: { text: string; at: number }, before: RuleState): Promise<void> {
    const rule = slot.rule;
    let state = fired;
    if (rule.schedule && !inSchedule(rule.schedule, alert.at, await deps.timeZoneOf(accountId))) {
      state = EDGES.has(rule.alertName) ? { ...state, on: false, since: null, fired: false } : { ...state, fired: false };
    } else {
      const where = input.kind === 'position' ? input.position : undefined;
      // not recorded (storage down): the state stays as it was, so the alert fires at the next evaluation
      if (!(await raise(rule, deviceId, alert, where))) return;
      if (rule.command) {
        if (rule.command.delaySeconds === 0) sendCommand(rule, deviceId);
        else slot.stored.commandDue = alert.at + rule.command.delaySeconds * 1000;
      }
    }
    if (slot.stored.state === before) slot.stored.state = state;
    markDirty(slot);
  }

  const dirty = new Set<RuleSlot>();
  function markDirty(slot: RuleSlot): void {
    slot.dirty = true;
    dirty.add(slot);
    if (dirty.size >= FLUSH_ROWS) void flush();
  }

  let flushing: Promise<void> | undefined;
  let again = false;
  let fixesSavedAt = -Infinity;
  /**
   * Writes the changed states (compare-and-set, one transaction) and the last fixes evaluated. A
   * state another instance wrote first is read again and replaces ours. Runs every FLUSH_MS, when
   * FLUSH_ROWS states changed. (An alert is recorded before the state that says it fired is
   * written: a crash in between, at most FLUSH_MS, may raise that episode's alert once more.)
   */
  function flush(): Promise<void> {
    if (flushing) {
      again = true;
      return flushing;
    }
    if (dirty.size === 0 && (fixesToSave.size === 0 || (performance.now() - fixesSavedAt < FIXES_EVERY_MS && !stopped))) return Promise.resolve();
    flushing = (async () => {
      const slots = [...dirty];
      dirty.clear();
      const writes = slots.map((slot) => {
        slot.dirty = false;
        return { slot, row: { ...slot.stored } };
      });
      // the last fixes are saved every FIXES_EVERY_MS (they matter after a restart, and Offline counts minutes)
      const fixesDue = performance.now() - fixesSavedAt >= FIXES_EVERY_MS || stopped;
      const fixes = fixesDue ? new Map(fixesToSave) : new Map<string, { lastFix: number; lastReport: number }>();
      if (fixesDue) {
        fixesToSave.clear();
        fixesSavedAt = performance.now();
      }
      const conflicts: RuleSlot[] = [];
      try {
        const t = now();
        // new states in multi-row inserts, changed ones compare-and-set; at most FLUSH_ROWS per
        // transaction, so that on SQLite the ingest's group commit waits for none long
        for (let i = 0; i < writes.length || (i === 0 && fixes.size); i += FLUSH_ROWS) {
          const part = writes.slice(i, i + FLUSH_ROWS);
          await db.transaction(async (trx) => {
            const fresh = part.filter((w) => w.row.version === 0);
            const taken = await store.insertStates(trx, fresh.map((w) => w.row), t);
            for (const w of fresh) if (!taken.has(`${w.row.ruleId}|${w.row.deviceId}`)) conflicts.push(w.slot);
            const changed = part.filter((w) => w.row.version > 0);
            const written = await store.updateStates(trx, changed.map((w) => w.row), t);
            for (const w of changed) if (!written.has(`${w.row.ruleId}|${w.row.deviceId}`)) conflicts.push(w.slot);
            if (i === 0 && fixes.size) await store.saveLastFixes(trx, fixes);
          });
        }
      } catch (err) {
        logger.warn({ err: (err as Error).message, states: writes.length }, 'alert rules: writing their states failed; tried again shortly');
        for (const w of writes) markDirty(w.slot);
        for (const [d, f] of fixes) if (!fixesToSave.has(d)) fixesToSave.set(d, f);
        return;
      }
      for (const w of writes) if (!conflicts.includes(w.slot)) w.slot.stored.version = w.row.version + 1;
      // another instance wrote these first: its state is the one
      for (const slot of conflicts) {
        const fresh = await store.stateOf(db, slot.rule.id, slot.stored.deviceId);
        if (fresh) slot.stored = fresh;
        slot.dirty = false;
        dirty.delete(slot);
      }
    })().finally(() => {
      flushing = undefined;
      if (again) {
        again = false;
        void flush();
      }
    });
    return flushing;
  }

  function sendCommand(rule: AlertRule, deviceId: string): void {
    if (!deps.commands || !rule.command) return;
    const principal: Principal = { userId: `rule:${rule.id}`, accountId: rule.accountId, userName: `rule ${rule.name}`, privileges: new Set(['admin']), groupId: null };
    deps.commands
      .send(principal, deviceId, { command: rule.command.command, format: rule.command.format })
      .then((r) => logger.info({ rule: rule.id, deviceId, command: r.command.id, status: r.command.status }, 'alert rule command sent'))
      .catch((err: Error) => logger.warn({ rule: rule.id, deviceId, err: err.message }, 'alert rule command could not be sent'));
  }

  /** Reads at once the contexts of the waiting jobs' devices that have none (per account with rules). */
  async function prefetch(): Promise<void> {
    const byAccount = new Map<string, { deviceId: string; accountId: string }[]>();
    for (let i = head; i < jobs.length && i < head + 4 * CONTEXT_CHUNK; i++) {
      const j = jobs[i];
      if (contexts.has(j.deviceId)) continue;
      const list = byAccount.get(j.accountId) ?? [];
      list.push({ deviceId: j.deviceId, accountId: j.accountId });
      byAccount.set(j.accountId, list);
    }
    for (const [accountId, devices] of byAccount) {
      const account = await accountRules(accountId);
      if (account.rules.length) await loadContexts(devices, account.rules);
    }
  }

  async function onPositions(deviceId: string, accountId: string, locations: Location[]): Promise<void> {
    const account = await accountRules(accountId);
    if (account.rules.length === 0) return;
    const ctx = await deviceContext(deviceId, accountId, account.rules);
    if (ctx.slots.length === 0) return;
    const positions = locations.map(rulePosition).sort((a, b) => a.fixTime - b.fixTime);
    // received: when the ingest stored them (serverTime), not when they are evaluated
    let received = 0;
    for (const l of locations) received = Math.max(received, l.serverTime ? Date.parse(l.serverTime) : 0);
    const lastReport = received || now();
    for (const p of positions) {
      if (!(p.fixTime > ctx.lastFix)) continue;
      ctx.lastFix = p.fixTime;
      const input: RuleInput = { kind: 'position', position: p };
      for (const slot of ctx.slots) {
        const pending = evaluate(slot, deviceId, accountId, input, account.zones);
        if (pending) await pending;
        await breathe();
      }
    }
    fixesToSave.set(deviceId, { lastFix: Number.isFinite(ctx.lastFix) ? ctx.lastFix : 0, lastReport });
  }

  /** positions waiting, in the order stored (so each device's in its order), and the one worker draining them */
  let jobs: { deviceId: string; accountId: string; locations: Location[] }[] = [];
  let head = 0;
  let working: Promise<void> | undefined;

  function enqueue(items: StoredLocation[]): void {
    if (stopped) return;
    const t = now();
    let last: { deviceId: string; accountId: string; locations: Location[] } | undefined;
    for (const i of items) {
      // an account known to have no rules: nothing to do, at the cost of a lookup
      const known = accounts.get(i.accountId);
      if (known && known.rules.length === 0 && t - known.at < ACCOUNT_TTL_MS) continue;
      if (queued >= MAX_QUEUED) {
        if (dropping++ === 0) logger.warn({ queued }, 'alert rules: evaluation falls behind; positions are not evaluated until it catches up');
        continue;
      }
      queued++;
      // a batch holds each device's rows together: one job per run of a device
      if (last?.deviceId === i.deviceId) last.locations.push(i.location);
      else jobs.push((last = { deviceId: i.deviceId, accountId: i.accountId, locations: [i.location] }));
    }
    if (!working) drain();
  }

  /** Runs the worker (after `first`, the catch-up at start), and again if jobs came as it ended. */
  function drain(first: Promise<void> = Promise.resolve()): void {
    working = first
      .then(() => work())
      .finally(() => {
        working = undefined;
        if (head < jobs.length) drain();
      });
  }

  async function work(): Promise<void> {
    while (head < jobs.length) {
      const job = jobs[head];
      const known = accounts.get(job.accountId);
      if (!contexts.has(job.deviceId) && !(known && known.rules.length === 0)) await prefetch();
      head++;
      try {
        await onPositions(job.deviceId, job.accountId, job.locations);
      } catch (err) {
        logger.warn({ err: (err as Error).message, deviceId: job.deviceId }, 'alert rules: evaluating positions failed');
      }
      queued -= job.locations.length;
      await breathe();
      if (head >= 4096) {
        jobs = jobs.slice(head);
        head = 0;
      }
    }
    jobs = [];
    head = 0;
    if (dropping > 0) {
      logger.warn({ dropped: dropping }, 'alert rules: caught up');
      dropping = 0;
    }
  }

  /**
   * The catch-up at start: positions waiting in memory for evaluation are gone with a process that
   * died (SIGKILL, power, out of memory) after they were stored, and their alerts with them. So
   * each watched device's stored positions after the last fix evaluated for it (rule_devices, saved
   * every FIXES_EVERY_MS) are evaluated before anything new, in fix order. Only positions received
   * since the device's first rule exists count (a rule never looks at the past). What was evaluated but not yet saved is evaluated again: its
   * alert is found already stored (the same rule, fix time and name) and not raised twice.
   */
  async function recover(): Promise<void> {
    let devices = 0;
    let positions = 0;
    for (const accountId of await deps.source.accounts()) {
      const account = await accountRules(accountId);
      const watched = new Set<string>();
      for (const rule of account.rules) {
        if (!rule.enabled) continue;
        for (const id of rule.devices ?? []) watched.add(id);
        if (rule.group) for (const id of await deps.source.groupDevices(rule.group)) watched.add(id);
      }
      const ids = [...watched];
      await loadContexts(ids.map((deviceId) => ({ deviceId, accountId })), account.rules);
      for (const deviceId of ids) {
        if (stopped) return;
        const ctx = contexts.get(deviceId);
        if (!ctx || ctx.slots.length === 0) continue;
        const since = Math.min(...ctx.slots.map((x) => x.rule.created));
        let after = Number.isFinite(ctx.lastFix) ? ctx.lastFix : Number.MIN_SAFE_INTEGER;
        let found = 0;
        for (;;) {
          const page = await fixesAfter(db, deviceId, after, since, RECOVER_PAGE);
          if (page.length === 0) break;
          found += page.length;
          await onPositions(deviceId, accountId, page.map((p) => p.location));
          after = page[page.length - 1].dateTime;
          if (page.length < RECOVER_PAGE) break;
        }
        if (found) {
          devices++;
          positions += found;
        }
      }
    }
    if (positions) logger.info({ devices, positions }, 'alert rules: positions stored before the last stop but not evaluated then, evaluated now');
  }

  /** The time passing: Offline and ExpiredDate for every watched device, and episodes waiting for their minimum duration. */
  async function tick(): Promise<void> {
    const t = now();
    if (!(await store.takeLease(db, LEASE, holder, t, t + 3 * (deps.tickMs ?? TICK_MS)))) return;
    // what was stored before now is evaluated and saved first
    while (working) await working;
    await flush();
    for (const accountId of await deps.source.accounts()) {
      const account = await accountRules(accountId);
      const pending = new Map((await store.pendingOf(db, account.rules.map((r) => r.id))).map((s) => [`${s.ruleId}|${s.deviceId}`, s]));
      const work: { rule: AlertRule; deviceId: string }[] = [];
      for (const rule of account.rules) {
        if (!rule.enabled) continue;
        if (needsTicks(rule, INITIAL_STATE)) {
          const ids = new Set(rule.devices ?? []);
          if (rule.group) for (const id of await deps.source.groupDevices(rule.group)) ids.add(id);
          for (const deviceId of ids) work.push({ rule, deviceId });
        }
      }
      for (const s of pending.values()) {
        const rule = account.rules.find((r) => r.id === s.ruleId);
        if (rule && !work.some((w) => w.rule === rule && w.deviceId === s.deviceId)) work.push({ rule, deviceId: s.deviceId });
      }
      if (work.length === 0) continue;
      const clocks = await store.deviceClocks(db, [...new Set(work.map((w) => w.deviceId))]);
      for (const { rule, deviceId } of work) {
        const c = clocks.get(deviceId);
        if (!c) continue;
        // after the positions already stored are evaluated
        if (working) await working;
        const cached = contexts.get(deviceId)?.slots.find((x) => x.rule.id === rule.id);
        const slot: RuleSlot = cached ?? { rule, stored: (await store.stateOf(db, rule.id, deviceId)) ?? { ruleId: rule.id, deviceId, state: INITIAL_STATE, version: 0, commandDue: null }, dirty: false };
        await evaluate(slot, deviceId, accountId, { kind: 'tick', tick: { now: t, lastReportAt: c.lastReportAt, expiresAt: c.expiresAt } }, account.zones);
        await breathe();
      }
    }
    await flush();
    for (const s of await store.commandsDue(db, t)) {
      const account = await accountRules((await deps.device(s.deviceId))?.accountId ?? '');
      const rule = account.rules.find((r) => r.id === s.ruleId);
      const cleared = { ...s, commandDue: null };
      if (!(await store.writeState(db, cleared, t))) continue;
      const cached = contexts.get(s.deviceId)?.slots.find((x) => x.rule.id === s.ruleId);
      if (cached) cached.stored = { ...cleared, version: cleared.version + 1 };
      if (rule) sendCommand(rule, s.deviceId);
    }
  }

  let ticking: Promise<void> | undefined;
  const runTick = (): Promise<void> =>
    (ticking ??= tick()
      .catch((err: Error) => logger.warn({ err: err.message }, 'alert rules: evaluating the time passing failed; tried again shortly'))
      .finally(() => {
        ticking = undefined;
      }));
  const timer = setInterval(() => void runTick(), deps.tickMs ?? TICK_MS);
  timer.unref();
  const saver = setInterval(() => void flush(), FLUSH_MS);
  saver.unref();

  const offs = [
    events.onLocations((items, remote) => {
      if (!remote) enqueue(items);
    }),
    events.onRulesChanged((accountId) => {
      accounts.delete(accountId);
      for (const [id, c] of contexts) if (c.accountId === accountId) contexts.delete(id);
    }),
    events.onDeviceChanged((deviceId) => contexts.delete(deviceId)),
  ];
  // the catch-up first; positions stored meanwhile wait for it in `jobs`
  drain(recover().catch((err: Error) => logger.warn({ err: err.message }, 'alert rules: the catch-up of positions not evaluated before the last stop failed')));

  async function idle(): Promise<void> {
    while (working) await working;
    await flush();
    await flushing;
  }

  return {
    idle,
    tick: runTick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearInterval(saver);
      offs.forEach((off) => off());
      await idle();
      await ticking;
      await flush();
      await store.releaseLease(db, LEASE, holder).catch(() => undefined);
    },
  };
}
