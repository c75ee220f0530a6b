/**
 * THE ordered list of alert detectors (docs/contract.md "Alert rules and zones"; CONTRIBUTING.md convention 2: order lives
 * in one list). Each is a pure function (rule, state, input, context) → (state, alert?): no clock,
 * no database, so the engine (rules.engine.ts) can store and share the state.
 * Most rules are a condition that holds; `episode()` gives them one life cycle: it starts, holds
 * for the minimum duration, fires once, and fires again only after it has ended. A few are edges
 * (entering or leaving a CheckArea, a fuel jump): each edge is an alert.
 */
import type { AlertRule, RuleAlertName } from '../model/alert-rule.js';

/** What the detectors read of a stored position. */
export interface RulePosition {
  /** fix time, epoch ms */
  fixTime: number;
  latitude: number;
  longitude: number;
  /** km/h */
  speed?: number;
  valid?: boolean;
  /** battery level, % */
  battery?: number;
  fuel?: number;
  /** °C */
  temperature?: number;
  /** km */
  mileage?: number;
  ignition?: boolean;
  attributes: Readonly<Record<string, unknown>>;
}

/** The time passing, for conditions that hold while nothing arrives. */
export interface RuleTick {
  now: number;
  /** when the device last reported (a frame, a publish, a REST location); null: never */
  lastReportAt: number | null;
  /** the device's expiry, epoch ms; null: none */
  expiresAt: number | null;
}

export type RuleInput = { kind: 'position'; position: RulePosition } | { kind: 'tick'; tick: RuleTick };

/** A rule's state for one device, stored between evaluations (and shared by instances). */
export interface RuleState {
  /** the condition holds */
  on: boolean;
  /** since when (epoch ms) */
  since: number | null;
  /** this episode's alert was raised */
  fired: boolean;
  /** the detector's own memory (the last fuel level, whether the device was inside the zone) */
  memory: Record<string, number | boolean | string | null>;
}

export const INITIAL_STATE: RuleState = Object.freeze({
  on: false,
  since: null,
  fired: false,
  memory: Object.freeze({}),
}) as RuleState;

/** A zone as the detectors test it (compiled once per zone: core/rules/geometry.ts). */
export interface ZoneTest {
  name: string;
  contains(latitude: number, longitude: number): boolean;
}

export interface DetectorContext {
  /** the rule's zone (zone rules) */
  zone?: ZoneTest;
}

/** What an evaluation gives: the new state, and an alert to raise (its text and time). */
export interface DetectorResult {
  state: RuleState;
  alert?: { text: string; at: number };
}

export type Detector = (rule: AlertRule, state: RuleState, input: RuleInput, ctx: DetectorContext) => DetectorResult;

/**
 * The life cycle of a condition: `on` true starts an episode at `at` (unless one runs), and the
 * alert fires once the condition has held for `holdMs` (the rule's minimum duration plus the
 * detector's own, e.g. the minutes stopped); `on` false ends the episode; undefined changes
 * nothing. A tick fires an episode whose time has come, even with no position.
 */
export function episode(
  state: RuleState,
  input: RuleInput,
  on: boolean | undefined,
  at: number,
  holdMs: number,
  text: () => string,
): DetectorResult {
  let s = state;
  if (on === false) return { state: s.on || s.fired ? { ...s, on: false, since: null, fired: false } : s };
  if (on === true && !s.on) s = { ...s, on: true, since: at, fired: false };
  if (!s.on || s.fired) return { state: s };
  const now = input.kind === 'tick' ? input.tick.now : at;
  if (now - (s.since ?? now) < holdMs) return { state: s };
  return { state: { ...s, fired: true }, alert: { text: text(), at: now } };
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const minDurationMs = (rule: AlertRule) => rule.minDurationSeconds * 1000;
const minutesMs = (rule: AlertRule) => (rule.params.minutes ?? 0) * 60_000;
const value = (rule: AlertRule, fallback?: number) => num(rule.params.value) ?? fallback;
const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
const stamp = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
/** `1 minute`, `0.5 minutes`, `10 minutes` */
const minutesText = (n: number) => `${n} minute${n === 1 ? '' : 's'}`;
/** A silence in words: whole minutes, or seconds under one (a rule may count half a minute). */
const silenceText = (ms: number) =>
  ms < 60_000 ? `${Math.floor(ms / 1000)} seconds` : minutesText(Math.floor(ms / 60_000));

/**
 * A condition read from each position (undefined when the position does not say: no speed, no
 * battery reading), fired after the rule's minimum duration. Ticks only let time pass.
 */
/**
 * A condition read from each position (undefined when the position does not say: no speed, no
 * battery reading), fired after the rule's minimum duration; `describe` makes the alert's text,
 * only when it is needed (an alert, or an episode starting). Ticks only let time pass.
 */
function positional(
  read: (p: RulePosition, rule: AlertRule, ctx: DetectorContext) => boolean | undefined,
  describe: (p: RulePosition, rule: AlertRule, ctx: DetectorContext) => string,
): Detector {
  return (rule, state, input, ctx) => {
    // a tick fires with what the position that started the episode said
    if (input.kind === 'tick')
      return episode(state, input, undefined, input.tick.now, minDurationMs(rule), () =>
        String(state.memory.text ?? rule.name),
      );
    const p = input.position;
    const on = read(p, rule, ctx);
    const result = episode(state, input, on, p.fixTime, minDurationMs(rule), () =>
      on === undefined ? String(state.memory.text ?? rule.name) : describe(p, rule, ctx),
    );
    if (on !== undefined && result.state.on && !state.on)
      result.state = { ...result.state, memory: { ...result.state.memory, text: describe(p, rule, ctx) } };
    return result;
  };
}

/** A threshold on a number a position carries: `on` when below (or above) the rule's value. */
function threshold(
  pick: (p: RulePosition, rule: AlertRule) => number | undefined,
  below: boolean,
  describe: (v: number, limit: number) => string,
  fallback?: number,
): Detector {
  return positional(
    (p, rule) => {
      const v = pick(p, rule);
      const limit = value(rule, fallback);
      if (v === undefined || limit === undefined) return undefined;
      return below ? v < limit : v > limit;
    },
    (p, rule) => describe(pick(p, rule)!, value(rule, fallback)!),
  );
}

const speedOver: Detector = positional(
  (p, rule) => (p.speed === undefined || rule.params.speed === undefined ? undefined : p.speed > rule.params.speed),
  (p, rule) => `Speed ${fmt(p.speed!)} km/h over the limit of ${fmt(rule.params.speed!)} km/h`,
);

const speedUnder: Detector = positional(
  (p, rule) =>
    p.speed === undefined || rule.params.speed === undefined || p.valid === false
      ? undefined
      : p.speed < rule.params.speed,
  (p, rule) => `Speed ${fmt(p.speed!)} km/h under the minimum of ${fmt(rule.params.speed!)} km/h`,
);

/** inside (ForbiddenArea) or outside (AllowedArea) the rule's zone */
const zoneCondition = (inside: boolean): Detector =>
  positional(
    (p, _rule, ctx) =>
      !ctx.zone || p.valid === false ? undefined : ctx.zone.contains(p.latitude, p.longitude) === inside,
    (_p, _rule, ctx) =>
      inside ? `Inside the forbidden zone "${ctx.zone!.name}"` : `Outside the allowed zone "${ctx.zone!.name}"`,
  );

/** CheckPoint: reaching the zone, once per visit. */
const checkPoint: Detector = positional(
  (p, _rule, ctx) => (!ctx.zone || p.valid === false ? undefined : ctx.zone.contains(p.latitude, p.longitude)),
  (_p, _rule, ctx) => `Reached the check point "${ctx.zone!.name}"`,
);

/**
 * CheckArea: entering and leaving the zone, each an alert (after the minimum duration inside, or
 * outside). The first position seen inside counts as entering; the first outside, as nothing.
 */
const checkArea: Detector = (rule, state, input, ctx) => {
  const hold = minDurationMs(rule);
  if (input.kind === 'tick') {
    return episode(state, input, undefined, input.tick.now, hold, () => edgeText(state, ctx));
  }
  const p = input.position;
  if (!ctx.zone || p.valid === false) return { state };
  const inside = ctx.zone.contains(p.latitude, p.longitude);
  const was = state.memory.inside;
  if (was === inside || (was === undefined && !inside)) {
    if (was === undefined) return { state: { ...state, memory: { ...state.memory, inside } } };
    return episode(state, input, state.on ? true : undefined, p.fixTime, hold, () => edgeText(state, ctx));
  }
  // an edge: a new episode (entering, or leaving), fired after the minimum duration
  const fresh: RuleState = { on: false, since: null, fired: false, memory: { ...state.memory, inside } };
  return episode(fresh, input, true, p.fixTime, hold, () => edgeText(fresh, ctx));
};
const edgeText = (s: RuleState, ctx: DetectorContext) =>
  `${s.memory.inside ? 'Entered' : 'Left'} the zone "${ctx.zone?.name ?? '?'}"`;

/** Offline: no report for the rule's minutes (checked as time passes; any report ends it). */
const offline: Detector = (rule, state, input) => {
  if (input.kind === 'position') return episode(state, input, false, input.position.fixTime, 0, () => '');
  const { now, lastReportAt } = input.tick;
  if (lastReportAt === null) return { state };
  const silentFor = now - lastReportAt;
  const on = silentFor >= minutesMs(rule);
  // the episode starts when the device went silent: fired once it has been so for minutes + minimum duration
  const s = on && !state.on ? { ...state, on: true, since: lastReportAt + minutesMs(rule), fired: false } : state;
  return episode(
    s,
    input,
    on,
    now,
    minDurationMs(rule),
    () => `No report for ${silenceText(silentFor)} (last at ${stamp(lastReportAt)})`,
  );
};

/** Stopped (speed at most params.speed, default 3 km/h) — and for IdleTime with ignition on — for the rule's minutes. */
const stopped = (idle: boolean): Detector => {
  return (rule, state, input) => {
    const hold = minutesMs(rule) + minDurationMs(rule);
    const minutes = rule.params.minutes ?? 0;
    const text = () =>
      idle ? `Idling (ignition on, not moving) for ${minutesText(minutes)}` : `Not moving for ${minutesText(minutes)}`;
    if (input.kind === 'tick') return episode(state, input, undefined, input.tick.now, hold, text);
    const p = input.position;
    if (p.speed === undefined) return { state };
    const still = p.speed <= (rule.params.speed ?? 3);
    const on = idle ? (p.ignition === undefined ? undefined : still && p.ignition) : still;
    return episode(state, input, on, p.fixTime, hold, text);
  };
};

/** Sensor N on (or off): the input's attribute (`in<N>`, or params.attribute). */
const sensor = (n: number, wantOn: boolean): Detector =>
  positional(
    (p, rule) => {
      const raw = p.attributes[rule.params.attribute ?? `in${n}`];
      if (raw === undefined || raw === null) return undefined;
      return (raw === true || raw === 1 || raw === '1' || raw === 'true') === wantOn;
    },
    (_p, rule) => `Sensor ${n} (${rule.params.attribute ?? `in${n}`}) ${wantOn ? 'on' : 'off'}`,
  );

/** FuelJumpDown / FuelJumpUp: the fuel level changed by at least the rule's value between two reports. */
const fuelJump =
  (down: boolean): Detector =>
  (rule, state, input) => {
    if (input.kind === 'tick') return { state };
    const fuel = input.position.fuel;
    if (fuel === undefined) return { state };
    const before = num(state.memory.fuel);
    const next: RuleState = { ...state, memory: { ...state.memory, fuel } };
    const jump = value(rule);
    if (before === undefined || jump === undefined) return { state: next };
    const change = down ? before - fuel : fuel - before;
    if (change < jump) return { state: { ...next, on: false, since: null, fired: false } };
    return {
      state: { ...next, on: true, since: input.position.fixTime, fired: true },
      alert: {
        text: `Fuel ${down ? 'dropped' : 'rose'} from ${fmt(before)} to ${fmt(fuel)}`,
        at: input.position.fixTime,
      },
    };
  };

/** AttributeEquals / LessThan / GreaterThan on params.attribute. */
const attribute = (op: 'eq' | 'lt' | 'gt'): Detector =>
  positional(
    (p, rule) => {
      const key = rule.params.attribute;
      if (key === undefined) return undefined;
      const v = p.attributes[key];
      const want = rule.params.value;
      if (v === undefined || v === null || want === undefined) return undefined;
      if (op === 'eq') return typeof want === 'number' ? Number(v) === want : String(v) === String(want);
      const x = typeof v === 'number' ? v : Number(v);
      if (!Number.isFinite(x) || typeof want !== 'number') return undefined;
      return op === 'lt' ? x < want : x > want;
    },
    (p, rule) => {
      const key = rule.params.attribute!;
      const word = op === 'eq' ? 'is' : op === 'lt' ? 'below' : 'above';
      return `Attribute ${key} = ${String(p.attributes[key])} (${word} ${String(rule.params.value)})`;
    },
  );

/** GPSNoSignal: positions without a valid fix for the rule's minutes. */
const gpsNoSignal: Detector = (rule, state, input) => {
  const hold = minutesMs(rule) + minDurationMs(rule);
  const text = () => `No valid GPS fix for ${minutesText(rule.params.minutes ?? 0)}`;
  if (input.kind === 'tick') return episode(state, input, undefined, input.tick.now, hold, text);
  const v = input.position.valid;
  return episode(state, input, v === undefined ? undefined : !v, input.position.fixTime, hold, text);
};

/** ExpiredDate: the device's expiry is at most the rule's value in days away (0: expired). */
const expiredDate: Detector = (rule, state, input) => {
  if (input.kind === 'position') return { state };
  const { now, expiresAt } = input.tick;
  const days = value(rule, 0)!;
  const on = expiresAt !== null && expiresAt - now <= days * 86_400_000;
  return episode(state, input, on, now, minDurationMs(rule), () =>
    expiresAt !== null && expiresAt <= now
      ? `The device expired on ${stamp(expiresAt)}`
      : `The device expires on ${stamp(expiresAt ?? now)}`,
  );
};

/** Every detector, by the alert name it raises, in the platform's order. */
export const DETECTORS: Readonly<Record<RuleAlertName, Detector>> = {
  SpeedLimit: speedOver,
  SpeedLower: speedUnder,
  ForbiddenArea: zoneCondition(true),
  AllowedArea: zoneCondition(false),
  CheckPoint: checkPoint,
  CheckArea: checkArea,
  Offline: offline,
  NoMovementTime: stopped(false),
  IdleTime: stopped(true),
  LowBattery: threshold(
    (p) => p.battery,
    true,
    (v, l) => `Battery ${fmt(v)} % below ${fmt(l)} %`,
    20,
  ),
  BatteryVoltage: threshold(
    (p) => num(p.attributes.battery) ?? num(p.attributes.power),
    true,
    (v, l) => `Battery ${fmt(v)} V below ${fmt(l)} V`,
  ),
  Sensor1On: sensor(1, true),
  Sensor1Off: sensor(1, false),
  Sensor2On: sensor(2, true),
  Sensor2Off: sensor(2, false),
  Sensor3On: sensor(3, true),
  Sensor3Off: sensor(3, false),
  Sensor4On: sensor(4, true),
  Sensor4Off: sensor(4, false),
  TemperatureGreaterThan: threshold(
    (p) => p.temperature,
    false,
    (v, l) => `Temperature ${fmt(v)} °C above ${fmt(l)} °C`,
  ),
  TemperatureLowerThan: threshold(
    (p) => p.temperature,
    true,
    (v, l) => `Temperature ${fmt(v)} °C below ${fmt(l)} °C`,
  ),
  FuelLessThan: threshold(
    (p) => p.fuel,
    true,
    (v, l) => `Fuel ${fmt(v)} below ${fmt(l)}`,
  ),
  FuelJumpDown: fuelJump(true),
  FuelJumpUp: fuelJump(false),
  AttributeEquals: attribute('eq'),
  AttributeLessThan: attribute('lt'),
  AttributeGreaterThan: attribute('gt'),
  GPSNoSignal: gpsNoSignal,
  Mileage: threshold(
    (p) => p.mileage,
    false,
    (v, l) => `Mileage ${fmt(v)} km reached ${fmt(l)} km`,
  ),
  ExpiredDate: expiredDate,
};

/** The rules that need ticks: what they watch can happen while nothing arrives (or they wait a duration). */
export function needsTicks(rule: AlertRule, state: RuleState): boolean {
  if (rule.alertName === 'Offline' || rule.alertName === 'ExpiredDate') return true;
  return state.on && !state.fired;
}
