import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import {
  RULE_ALERT_NAMES,
  type AlertRule,
  type RuleAlertName,
  type RuleParams,
  type RuleSchedule,
} from '../model/alert-rule.js';
import { COMMAND_FORMATS, type CommandFormat } from '../model/command.js';
import { DomainError, notFound } from '../errors.js';
import { commandBytes } from '../commands/commands.service.js';
import { requireRulesAdmin } from './zones.service.js';
import * as rules from './alert-rules.repository.js';
import * as zones from './zones.repository.js';
import * as groups from '../groups/groups.repository.js';
import * as devices from '../devices/devices.repository.js';

type ParamName = keyof RuleParams;
type ParamValue = RuleParams[ParamName];

/** How one param of one alert name is checked: required or not, its default, the check. */
export interface ParamRule {
  required: boolean;
  /** stored when the param is left out (so the engine and a GET see it) */
  default?: ParamValue;
  /** what it is, for the error message and the documentation: "a number above 0 (km/h)" */
  describe: string;
  /** false when the value is not one */
  ok(v: unknown): boolean;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const above0 = (max: number, unit: string): ParamRule => ({
  required: true,
  describe: `a number above 0, at most ${max.toLocaleString('en')} (${unit})`,
  ok: (v) => finite(v) && v > 0 && v <= max,
});
const anyNumber = (unit: string): ParamRule => ({ required: true, describe: `a number (${unit})`, ok: finite });
const zone: ParamRule = {
  required: true,
  describe: "the id of one of the account's zones",
  ok: (v) => typeof v === 'string' && v.length > 0 && v.length <= 64,
};
const attributeOk = (v: unknown): boolean => typeof v === 'string' && /^\S{1,100}$/.test(v);
const attribute: ParamRule = {
  required: true,
  describe: 'an attribute name (1 to 100 characters, no spaces), e.g. "fuel", "temp1", "ignition"',
  ok: attributeOk,
};
const minutes = above0(43_200, 'minutes; at most 30 days');
const movingSpeed: ParamRule = {
  required: false,
  default: 3,
  describe: 'a number above 0, at most 1,000 (km/h: the speed above which the device counts as moving; default 3)',
  ok: (v) => finite(v) && v > 0 && v <= 1000,
};
const sensor = (n: number): Partial<Record<ParamName, ParamRule>> => ({
  attribute: {
    required: false,
    default: `in${n}`,
    describe: `the input's attribute name (default "in${n}")`,
    ok: attributeOk,
  },
});

/**
 * The one table of what each alert name takes (params not listed for it are refused): which params
 * are required, their types and ranges, and the defaults stored when one is left out.
 */
export const RULE_PARAMS: Record<RuleAlertName, Partial<Record<ParamName, ParamRule>>> = {
  SpeedLimit: { speed: above0(1000, 'km/h; alert above it') },
  SpeedLower: { speed: above0(1000, 'km/h; alert below it') },
  ForbiddenArea: { zone },
  AllowedArea: { zone },
  CheckPoint: { zone },
  CheckArea: { zone },
  Offline: { minutes },
  NoMovementTime: { minutes, speed: movingSpeed },
  IdleTime: { minutes, speed: movingSpeed },
  GPSNoSignal: { minutes },
  LowBattery: {
    value: {
      required: false,
      default: 20,
      describe: 'a percentage from 0 to 100 (alert below it; default 20)',
      ok: (v) => finite(v) && v >= 0 && v <= 100,
    },
  },
  BatteryVoltage: {
    value: { required: true, describe: 'a number above 0 (volts; alert below it)', ok: (v) => finite(v) && v > 0 },
  },
  Sensor1On: sensor(1),
  Sensor1Off: sensor(1),
  Sensor2On: sensor(2),
  Sensor2Off: sensor(2),
  Sensor3On: sensor(3),
  Sensor3Off: sensor(3),
  Sensor4On: sensor(4),
  Sensor4Off: sensor(4),
  TemperatureGreaterThan: { value: anyNumber('°C') },
  TemperatureLowerThan: { value: anyNumber('°C') },
  FuelLessThan: {
    value: { required: true, describe: 'a number, 0 or more (the fuel level)', ok: (v) => finite(v) && v >= 0 },
  },
  FuelJumpDown: {
    value: { required: true, describe: 'a number above 0 (a drop between two reports)', ok: (v) => finite(v) && v > 0 },
  },
  FuelJumpUp: {
    value: { required: true, describe: 'a number above 0 (a rise between two reports)', ok: (v) => finite(v) && v > 0 },
  },
  AttributeEquals: {
    attribute,
    value: {
      required: true,
      describe: 'a string (at most 200 characters), number or boolean',
      ok: (v) => typeof v === 'boolean' || finite(v) || (typeof v === 'string' && v.length <= 200),
    },
  },
  AttributeLessThan: { attribute, value: anyNumber('compared with the attribute') },
  AttributeGreaterThan: { attribute, value: anyNumber('compared with the attribute') },
  Mileage: {
    value: {
      required: true,
      describe: 'a number above 0 (km; alert when the odometer reaches it)',
      ok: (v) => finite(v) && v > 0,
    },
  },
  ExpiredDate: {
    value: {
      required: false,
      default: 0,
      describe: "a whole number of days from 0 to 3,650 (alert that many days before the device's expiry; default 0)",
      ok: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 3650,
    },
  },
};

/** The params each alert name takes, one line each: for the OpenAPI document. */
export function describeRuleParams(): string {
  return RULE_ALERT_NAMES.map((name) => {
    const params = Object.entries(RULE_PARAMS[name]).map(
      ([k, r]) => `\`${k}\`${r!.required ? '' : ' (optional)'}: ${r!.describe}`,
    );
    return `- \`${name}\`: ${params.join('; ') || 'none'}`;
  }).join('\n');
}

export const MAX_MIN_DURATION_SECONDS = 86_400;
/**
 * The most rules an account may have, and the most enabled rules that may watch one device
 * (listed in `devices` or through `group`): every position of a device is evaluated against each
 * rule that watches it, so these bound the work (and the alerts) one batch of positions makes.
 */
export const MAX_RULES_PER_ACCOUNT = 500;
export const MAX_RULES_PER_DEVICE = 50;
export const MAX_COMMAND_DELAY_SECONDS = 86_400;

/** A rule as the API takes it (after the shape check): absent and null alike mean "none" or the default. */
export interface AlertRuleInput {
  name: string;
  alertName: string;
  devices?: string[] | null;
  group?: string | null;
  /** default true */
  enabled?: boolean;
  params?: Record<string, unknown> | null;
  /** default 0 */
  minDurationSeconds?: number | null;
  schedule?: { days: number[]; from?: string; to?: string } | null;
  /** each channel defaults on its own: email true, sms false */
  notify?: { email?: boolean; sms?: boolean } | null;
  command?: { command: string; format?: string; delaySeconds?: number } | null;
}

/**
 * The account's alert rules (docs/contract.md "Alert rules and zones"): admin only, and not for a user
 * restricted to a group. Another account's rule is RULE_NOT_FOUND; every reference (zone, devices,
 * group) must be the account's own, else 400 naming the field.
 */
export interface AlertRulesService {
  list(p: Principal): Promise<AlertRule[]>;
  get(p: Principal, id: string): Promise<AlertRule>;
  create(p: Principal, input: AlertRuleInput): Promise<AlertRule>;
  /** Replaces the rule (fields left out take their defaults). */
  update(p: Principal, id: string, input: AlertRuleInput): Promise<AlertRule>;
  remove(p: Principal, id: string): Promise<void>;
}

export interface AlertRulesDeps {
  db: Db;
  clock: Clock;
  /** after every change of the account's rules (the rule engine's cache) */
  onChanged?: (accountId: string) => void;
}

const invalid = (field: string, message: string): DomainError =>
  new DomainError('VALIDATION_FAILED', `${field}: ${message}.`, { field });

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

type Checked = Omit<AlertRule, 'id' | 'accountId' | 'created'>;

/** Everything that needs no storage: the rule as it will be stored, or a 400 naming the field. */
export function checkRuleInput(input: AlertRuleInput): Checked {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!name || name.length > 200) throw invalid('name', 'must be 1 to 200 characters');
  if (!(RULE_ALERT_NAMES as readonly string[]).includes(input.alertName)) {
    throw invalid('alertName', `must be one of ${RULE_ALERT_NAMES.join(', ')}`);
  }
  const alertName = input.alertName as RuleAlertName;
  const params = checkParams(alertName, input.params ?? {});

  const devices = input.devices == null ? null : [...new Set(input.devices)];
  if (devices) {
    const bad = devices.findIndex((d) => typeof d !== 'string' || d.length === 0 || d.length > 64);
    if (bad >= 0) throw invalid(`devices[${input.devices!.indexOf(devices[bad])}]`, 'must be a device id');
  }
  const group = input.group ?? null;
  if (!devices?.length && !group) throw invalid('devices', 'a rule needs devices, a group, or both');

  const minDurationSeconds = input.minDurationSeconds ?? 0;
  if (
    !Number.isInteger(minDurationSeconds) ||
    minDurationSeconds < 0 ||
    minDurationSeconds > MAX_MIN_DURATION_SECONDS
  ) {
    throw invalid(
      'minDurationSeconds',
      `must be a whole number of seconds from 0 to ${MAX_MIN_DURATION_SECONDS.toLocaleString('en')}`,
    );
  }

  let schedule: RuleSchedule | null = null;
  if (input.schedule != null) {
    const { days, from = '00:00', to = '00:00' } = input.schedule;
    if (!Array.isArray(days) || days.length === 0)
      throw invalid('schedule.days', 'needs at least one ISO weekday (1 = Monday … 7 = Sunday)');
    const badDay = days.findIndex((d) => !Number.isInteger(d) || d < 1 || d > 7);
    if (badDay >= 0) throw invalid(`schedule.days[${badDay}]`, 'must be an ISO weekday from 1 (Monday) to 7 (Sunday)');
    if (typeof from !== 'string' || !HH_MM.test(from))
      throw invalid('schedule.from', 'must be a time "HH:MM" from 00:00 to 23:59');
    if (typeof to !== 'string' || !HH_MM.test(to))
      throw invalid('schedule.to', 'must be a time "HH:MM" from 00:00 to 23:59');
    schedule = { days: [...new Set(days)].sort((a, b) => a - b), from, to };
  }

  const notify = { email: input.notify?.email ?? true, sms: input.notify?.sms ?? false };
  if (typeof notify.email !== 'boolean') throw invalid('notify.email', 'must be true or false');
  if (typeof notify.sms !== 'boolean') throw invalid('notify.sms', 'must be true or false');

  let command: AlertRule['command'] = null;
  if (input.command != null) {
    const { command: text, format = 'Text', delaySeconds = 0 } = input.command;
    if (typeof text !== 'string' || text.length === 0 || text.length > 4096)
      throw invalid('command.command', 'must be 1 to 4,096 characters');
    if (!(COMMAND_FORMATS as readonly string[]).includes(format))
      throw invalid('command.format', `must be one of ${COMMAND_FORMATS.join(', ')}`);
    if (format !== 'Text') {
      const bytes = commandBytes(format as 'Hex' | 'Base64', text);
      if (typeof bytes === 'string') throw invalid('command.command', bytes);
    }
    if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_COMMAND_DELAY_SECONDS) {
      throw invalid(
        'command.delaySeconds',
        `must be a whole number of seconds from 0 to ${MAX_COMMAND_DELAY_SECONDS.toLocaleString('en')}`,
      );
    }
    command = { command: text, format: format as CommandFormat, delaySeconds };
  }

  return {
    name,
    alertName,
    devices: devices?.length ? devices : null,
    group,
    enabled: input.enabled ?? true,
    params,
    minDurationSeconds,
    schedule,
    notify,
    command,
  };
}

function checkParams(alertName: RuleAlertName, given: Record<string, unknown>): RuleParams {
  if (typeof given !== 'object' || Array.isArray(given)) throw invalid('params', 'must be an object');
  const table = RULE_PARAMS[alertName];
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(given)) {
    if (given[key] === undefined || given[key] === null) continue;
    if (!(key in table)) {
      const takes = Object.keys(table);
      throw invalid(`params.${key}`, `${alertName} takes ${takes.length ? `only ${takes.join(', ')}` : 'no params'}`);
    }
  }
  for (const [key, rule] of Object.entries(table) as [ParamName, ParamRule][]) {
    const v = given[key];
    if (v === undefined || v === null) {
      if (rule.required) throw invalid(`params.${key}`, `${alertName} needs it: ${rule.describe}`);
      if (rule.default !== undefined) out[key] = rule.default;
      continue;
    }
    if (!rule.ok(v)) throw invalid(`params.${key}`, `must be ${rule.describe}`);
    out[key] = v;
  }
  return out as RuleParams;
}

/** A rule as the API shows it: `{id, name, alertName, devices?, group?, enabled, params, minDurationSeconds, schedule?, notify, command?}`. */
export function presentAlertRule(r: AlertRule): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    alertName: r.alertName,
    ...(r.devices && { devices: r.devices }),
    ...(r.group && { group: r.group }),
    enabled: r.enabled,
    params: r.params,
    minDurationSeconds: r.minDurationSeconds,
    ...(r.schedule && { schedule: r.schedule }),
    notify: r.notify,
    ...(r.command && { command: r.command }),
  };
}

/** The references must be the account's own; checked in the transaction that stores the rule. */
async function checkReferences(
  trx: Knex.Transaction,
  p: Principal,
  rule: Checked,
  input: AlertRuleInput,
): Promise<void> {
  if (rule.params.zone !== undefined) {
    const z = await zones.findForUpdate(trx, rule.params.zone);
    if (!z || z.accountId !== p.accountId) throw invalid('params.zone', `zone "${rule.params.zone}" was not found`);
  }
  if (rule.group) {
    const g = await groups.findById(trx, rule.group);
    if (!g || g.accountId !== p.accountId) throw invalid('group', `group "${rule.group}" was not found`);
  }
  if (rule.devices) {
    const found = await devices.idsInAccount(trx, p.accountId, rule.devices);
    const missing = rule.devices.find((d) => !found.has(d));
    if (missing !== undefined)
      throw invalid(`devices[${input.devices!.indexOf(missing)}]`, `device "${missing}" was not found`);
  }
}

/**
 * 409 RULE_LIMIT_REACHED beyond MAX_RULES_PER_ACCOUNT (a new rule) or MAX_RULES_PER_DEVICE
 * (enabled rules watching a device the rule newly watches, directly or through a group).
 */
async function checkLimits(trx: Knex.Transaction, p: Principal, rule: AlertRule, current?: AlertRule): Promise<void> {
  const others = (await rules.listByAccount(trx, p.accountId)).filter((r) => r.id !== rule.id);
  if (!current && others.length >= MAX_RULES_PER_ACCOUNT) {
    throw new DomainError(
      'RULE_LIMIT_REACHED',
      `An account may have at most ${MAX_RULES_PER_ACCOUNT} alert rules; delete one first.`,
      { limit: MAX_RULES_PER_ACCOUNT },
    );
  }
  if (!rule.enabled) return;
  const enabled = others.filter((r) => r.enabled);
  const groupIds = [...new Set([rule, current, ...enabled].map((r) => r?.group).filter((g): g is string => !!g))];
  const members = await groups.devicesOf(trx, groupIds);
  const watched = (r: AlertRule): Set<string> =>
    new Set([...(r.devices ?? []), ...(r.group ? (members.get(r.group) ?? []) : [])]);
  const before = current?.enabled ? watched(current) : new Set<string>();
  const added = [...watched(rule)].filter((d) => !before.has(d));
  if (added.length === 0) return;
  const counts = new Map(added.map((d) => [d, 0]));
  for (const r of enabled) for (const d of watched(r)) if (counts.has(d)) counts.set(d, counts.get(d)! + 1);
  const full = added.find((d) => counts.get(d)! >= MAX_RULES_PER_DEVICE);
  if (full === undefined) return;
  throw new DomainError(
    'RULE_LIMIT_REACHED',
    `Device "${full}" is already watched by ${MAX_RULES_PER_DEVICE} enabled alert rules (directly or through a group), the most one device may have; disable or delete one first.`,
    {
      limit: MAX_RULES_PER_DEVICE,
      device: full,
      field: rule.devices?.includes(full) ? 'devices' : 'group',
    },
  );
}

export function createAlertRulesService(deps: AlertRulesDeps): AlertRulesService {
  const { db, clock } = deps;

  async function own(p: Principal, id: string): Promise<AlertRule> {
    requireRulesAdmin(p, 'alert rules');
    const r = await rules.findById(db, id);
    if (!r || r.accountId !== p.accountId) throw notFound('RULE_NOT_FOUND', `Alert rule "${id}"`);
    return r;
  }

  async function list(p: Principal): Promise<AlertRule[]> {
    requireRulesAdmin(p, 'alert rules');
    return rules.listByAccount(db, p.accountId);
  }

  async function create(p: Principal, input: AlertRuleInput): Promise<AlertRule> {
    requireRulesAdmin(p, 'alert rules');
    const rule: AlertRule = {
      id: randomUUID(),
      accountId: p.accountId,
      ...checkRuleInput(input),
      created: clock.now().getTime(),
    };
    await db.transaction(async (trx) => {
      await checkReferences(trx, p, rule, input);
      await checkLimits(trx, p, rule);
      await rules.insert(trx, rule);
    });
    deps.onChanged?.(p.accountId);
    return rule;
  }

  async function update(p: Principal, id: string, input: AlertRuleInput): Promise<AlertRule> {
    const current = await own(p, id);
    const rule: AlertRule = { ...current, ...checkRuleInput(input) };
    await db.transaction(async (trx) => {
      await checkReferences(trx, p, rule, input);
      await checkLimits(trx, p, rule, current);
      await rules.update(trx, rule);
    });
    deps.onChanged?.(p.accountId);
    return rule;
  }

  async function remove(p: Principal, id: string): Promise<void> {
    await own(p, id);
    await rules.remove(db, id);
    deps.onChanged?.(p.accountId);
  }

  return { list, get: own, create, update, remove };
}
