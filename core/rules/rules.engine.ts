/**
 * The alert-rule engine (docs/contract.md "Alert rules and zones"; docs/rules.md): every stored
 * location is evaluated against its device's rules after its commit, off the acknowledgement path;
 * the time passing is evaluated by one instance at a time (a lease).
 * Positions are evaluated in fix-time order, and one not newer than the last evaluated is skipped,
 * so late data raises no false alert. States are stored and written compare-and-set, so instances
 * share them; the alert is recorded before the state that says it fired, so a crash may repeat an
 * alert (deduplicated by the recorder) but never lose it. An account without rules costs a lookup.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import type { AlertRecorder } from '../alerts/alert.recorder.js';
import type { AlertRule } from '../model/alert-rule.js';
import type { DeviceRecord } from '../model/device.js';
import type { CommandsService } from '../commands/commands.service.js';
import { INITIAL_STATE, needsTicks } from './rule-detectors.js';
import * as store from './rule-state.repository.js';
import { fixesAfter } from '../locations/locations.repository.js';
import { AccountRulesCache, DeviceContexts, newSlot, type AccountRules, type RuleSource } from './rule-contexts.js';
import { FLUSH_MS, StateFlusher } from './state-flusher.js';
import { RuleEvaluator } from './rule-evaluator.js';
import { Breather, PositionQueue } from './position-queue.js';

export { rulePosition } from './position-queue.js';
export { inSchedule } from './rule-evaluator.js';
export type { RuleSource } from './rule-contexts.js';

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
const LEASE = 'rules-tick';
/** stored positions one query of the catch-up at start reads */
const RECOVER_PAGE = 1000;

export interface RulesEngine {
  /** evaluations not finished (tests wait for them) */
  idle(): Promise<void>;
  /** evaluates the time passing now, if this instance holds the lease (tests call it) */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/** The engine's parts, as startRulesEngine wires them. */
interface Engine {
  deps: RulesEngineDeps;
  /** this instance, for the lease of the time passing */
  holder: string;
  accounts: AccountRulesCache;
  contexts: DeviceContexts;
  flusher: StateFlusher;
  evaluator: RuleEvaluator;
  queue: PositionQueue;
  breather: Breather;
}

/** The devices an account's enabled rules watch (listed, or through their group). */
async function watchedDevices(
  e: Engine,
  rules: AlertRule[],
  which: (rule: AlertRule) => boolean,
): Promise<{ rule: AlertRule; deviceId: string }[]> {
  const out: { rule: AlertRule; deviceId: string }[] = [];
  for (const rule of rules) {
    if (!rule.enabled || !which(rule)) continue;
    const ids = new Set(rule.devices ?? []);
    if (rule.group) for (const id of await e.deps.source.groupDevices(rule.group)) ids.add(id);
    for (const deviceId of ids) out.push({ rule, deviceId });
  }
  return out;
}

/**
 * The catch-up at start: positions waiting in memory for evaluation are gone with a process that
 * died (SIGKILL, power, out of memory) after they were stored, and their alerts with them. So
 * each watched device's stored positions after the last fix evaluated for it (rule_devices, saved
 * every FIXES_EVERY_MS) are evaluated before anything new, in fix order. Only positions received
 * since the device's first rule exists count (a rule never looks at the past). What was evaluated but not yet saved is evaluated again: its
 * alert is found already stored (the same rule, fix time and name) and not raised twice.
 */
async function recover(e: Engine): Promise<void> {
  let devices = 0;
  let positions = 0;
  for (const accountId of await e.deps.source.accounts()) {
    const account = await e.accounts.get(accountId);
    const ids = [...new Set((await watchedDevices(e, account.rules, () => true)).map((w) => w.deviceId))];
    await e.contexts.load(
      ids.map((deviceId) => ({ deviceId, accountId })),
      account.rules,
    );
    for (const deviceId of ids) {
      if (e.queue.stopped) return;
      const found = await recoverDevice(e, deviceId, accountId);
      if (found) {
        devices++;
        positions += found;
      }
    }
  }
  if (positions)
    e.deps.logger.info(
      { devices, positions },
      'alert rules: positions stored before the last stop but not evaluated then, evaluated now',
    );
}

/** One device's part of the catch-up: how many stored positions it evaluated. */
async function recoverDevice(e: Engine, deviceId: string, accountId: string): Promise<number> {
  const ctx = e.contexts.get(deviceId);
  if (!ctx || ctx.slots.length === 0) return 0;
  const since = Math.min(...ctx.slots.map((x) => x.rule.created));
  let after = Number.isFinite(ctx.lastFix) ? ctx.lastFix : Number.MIN_SAFE_INTEGER;
  let found = 0;
  for (;;) {
    const page = await fixesAfter(e.deps.db, deviceId, after, since, RECOVER_PAGE);
    if (page.length === 0) break;
    found += page.length;
    await e.queue.onPositions(
      deviceId,
      accountId,
      page.map((p) => p.location),
    );
    after = page[page.length - 1].dateTime;
    if (page.length < RECOVER_PAGE) break;
  }
  return found;
}

/** The time passing: Offline and ExpiredDate for every watched device, and episodes waiting for their minimum duration. */
async function tick(e: Engine): Promise<void> {
  const { db, clock } = e.deps;
  const t = clock.now().getTime();
  if (!(await store.takeLease(db, LEASE, e.holder, t, t + 3 * (e.deps.tickMs ?? TICK_MS)))) return;
  // what was stored before now is evaluated and saved first
  while (e.queue.working) await e.queue.working;
  await e.flusher.flush();
  for (const accountId of await e.deps.source.accounts()) await tickAccount(e, accountId, t);
  await e.flusher.flush();
  await sendDueCommands(e, t);
}

/** The rules of an account that tick, on their devices, and the episodes waiting for their minimum duration. */
async function tickWork(e: Engine, account: AccountRules): Promise<{ rule: AlertRule; deviceId: string }[]> {
  const pending = new Map(
    (
      await store.pendingOf(
        e.deps.db,
        account.rules.map((r) => r.id),
      )
    ).map((s) => [`${s.ruleId}|${s.deviceId}`, s]),
  );
  const work = await watchedDevices(e, account.rules, (rule) => needsTicks(rule, INITIAL_STATE));
  for (const s of pending.values()) {
    const rule = account.rules.find((r) => r.id === s.ruleId);
    if (rule && !work.some((w) => w.rule === rule && w.deviceId === s.deviceId))
      work.push({ rule, deviceId: s.deviceId });
  }
  return work;
}

async function tickAccount(e: Engine, accountId: string, t: number): Promise<void> {
  const { db } = e.deps;
  const account = await e.accounts.get(accountId);
  const work = await tickWork(e, account);
  if (work.length === 0) return;
  const clocks = await store.deviceClocks(db, [...new Set(work.map((w) => w.deviceId))]);
  for (const { rule, deviceId } of work) {
    const c = clocks.get(deviceId);
    if (!c) continue;
    // after the positions already stored are evaluated
    if (e.queue.working) await e.queue.working;
    const slot =
      e.contexts.slot(deviceId, rule.id) ?? newSlot(rule, deviceId, await store.stateOf(db, rule.id, deviceId));
    await e.evaluator.evaluate(
      slot,
      deviceId,
      accountId,
      { kind: 'tick', tick: { now: t, lastReportAt: c.lastReportAt, expiresAt: c.expiresAt } },
      account.zones,
    );
    await e.breather.breathe();
  }
}

/** The commands of rules that fired `delaySeconds` ago: each cleared (compare-and-set) before it is sent, so sent once. */
async function sendDueCommands(e: Engine, t: number): Promise<void> {
  const { db } = e.deps;
  for (const s of await store.commandsDue(db, t)) {
    const account = await e.accounts.get((await e.deps.device(s.deviceId))?.accountId ?? '');
    const rule = account.rules.find((r) => r.id === s.ruleId);
    const cleared = { ...s, commandDue: null };
    if (!(await store.writeState(db, cleared, t))) continue;
    const cached = e.contexts.slot(s.deviceId, s.ruleId);
    if (cached) cached.stored = { ...cleared, version: cleared.version + 1 };
    if (rule) e.evaluator.sendCommand(rule, s.deviceId);
  }
}

function wire(deps: RulesEngineDeps): Engine {
  const { db, clock, logger } = deps;
  const contexts = new DeviceContexts(db);
  const accounts = new AccountRulesCache(deps.source, clock, contexts);
  const flusher = new StateFlusher({ db, clock, logger });
  const evaluator = new RuleEvaluator(deps, flusher);
  const breather = new Breather();
  const queue = new PositionQueue({ clock, logger, accounts, contexts, evaluator, flusher, breather });
  return { deps, holder: randomUUID(), accounts, contexts, flusher, evaluator, queue, breather };
}

export function startRulesEngine(deps: RulesEngineDeps): RulesEngine {
  const e = wire(deps);
  const { events, logger, db } = deps;
  const { accounts, contexts, flusher, queue } = e;

  let ticking: Promise<void> | undefined;
  const runTick = (): Promise<void> =>
    (ticking ??= tick(e)
      .catch((err: Error) =>
        logger.warn({ err: err.message }, 'alert rules: evaluating the time passing failed; tried again shortly'),
      )
      .finally(() => {
        ticking = undefined;
      }));
  const timer = setInterval(() => void runTick(), deps.tickMs ?? TICK_MS);
  timer.unref();
  const saver = setInterval(() => void flusher.flush(), FLUSH_MS);
  saver.unref();

  const offs = [
    events.onLocations((items, remote) => {
      if (!remote) queue.enqueue(items);
    }),
    events.onRulesChanged((accountId) => accounts.forget(accountId)),
    events.onDeviceChanged((deviceId) => contexts.forget(deviceId)),
  ];
  // the catch-up first; positions stored meanwhile wait for it in the queue
  queue.drain(
    recover(e).catch((err: Error) =>
      logger.warn(
        { err: err.message },
        'alert rules: the catch-up of positions not evaluated before the last stop failed',
      ),
    ),
  );

  async function idle(): Promise<void> {
    while (queue.working) await queue.working;
    await flusher.flush();
    await flusher.running;
  }

  return {
    idle,
    tick: runTick,
    async stop() {
      queue.stopped = true;
      flusher.stopped = true;
      clearInterval(timer);
      clearInterval(saver);
      offs.forEach((off) => off());
      await idle();
      await ticking;
      await flusher.flush();
      await store.releaseLease(db, LEASE, e.holder).catch(() => undefined);
    },
  };
}
