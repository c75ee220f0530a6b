import type { Knex } from 'knex';
import type { AlertRule, RuleAlertName, RuleParams, RuleSchedule } from '../model/alert-rule.js';
import { parseJson, toBool, toJson } from '../db/json.js';

type Q = Knex | Knex.Transaction;

const toRule = (r: Record<string, unknown>): AlertRule => ({
  id: String(r.id),
  accountId: String(r.account_id),
  name: String(r.name),
  alertName: String(r.alert_name) as RuleAlertName,
  devices: parseJson<string[] | null>(r.devices, null),
  group: (r.group_id as string | null) ?? null,
  enabled: toBool(r.enabled),
  params: parseJson<RuleParams>(r.params, {}),
  minDurationSeconds: Number(r.min_duration_seconds),
  schedule: parseJson<RuleSchedule | null>(r.schedule, null),
  notify: { email: toBool(r.notify_email), sms: toBool(r.notify_sms) },
  command: parseJson<AlertRule['command']>(r.command, null),
  created: Number(r.created),
});

const toRow = (a: AlertRule): Record<string, unknown> => ({
  id: a.id,
  account_id: a.accountId,
  name: a.name,
  alert_name: a.alertName,
  devices: a.devices ? toJson(a.devices) : null,
  group_id: a.group,
  enabled: a.enabled,
  params: toJson(a.params),
  zone_id: a.params.zone ?? null,
  min_duration_seconds: a.minDurationSeconds,
  schedule: a.schedule ? toJson(a.schedule) : null,
  notify_email: a.notify.email,
  notify_sms: a.notify.sms,
  command: a.command ? toJson(a.command) : null,
  created: a.created,
});

const ORDER = [{ column: 'created' }, { column: 'id' }];

export async function insert(db: Q, a: AlertRule): Promise<void> {
  await db('alert_rules').insert(toRow(a));
}

export async function update(db: Q, a: AlertRule): Promise<void> {
  const { id, account_id: _account, created: _created, ...rest } = toRow(a);
  await db('alert_rules').where({ id }).update(rest);
}

export async function findById(db: Q, id: string): Promise<AlertRule | undefined> {
  const r = await db('alert_rules').where({ id }).first();
  return r ? toRule(r) : undefined;
}

/** Every rule of an account, oldest first. */
export async function listByAccount(db: Q, accountId: string): Promise<AlertRule[]> {
  return (await db('alert_rules').where({ account_id: accountId }).orderBy(ORDER)).map(toRule);
}

/** The enabled rules of an account, oldest first: what the rule engine evaluates. */
export async function listEnabledRules(db: Q, accountId: string): Promise<AlertRule[]> {
  return (await db('alert_rules').where({ account_id: accountId, enabled: true }).orderBy(ORDER)).map(toRule);
}

/** The names of the rules that use a zone (at most `limit`), to refuse deleting it. */
export async function namesUsingZone(db: Q, zoneId: string, limit = 5): Promise<string[]> {
  return (await db('alert_rules').where({ zone_id: zoneId }).orderBy(ORDER).limit(limit).select('name')).map(
    (r: { name: string }) => r.name,
  );
}

/**
 * Takes a deleted device out of the `devices` lists of its account's rules (null once empty: a rule
 * left with neither devices nor a group watches nothing until it is given some). Returns how many
 * rules changed.
 */
export async function forgetDevice(db: Q, accountId: string, deviceId: string): Promise<number> {
  let changed = 0;
  for (const rule of await listByAccount(db, accountId)) {
    if (!rule.devices?.includes(deviceId)) continue;
    const devices = rule.devices.filter((d) => d !== deviceId);
    await db('alert_rules')
      .where({ id: rule.id })
      .update({ devices: devices.length ? toJson(devices) : null });
    changed++;
  }
  return changed;
}

export async function remove(db: Q, id: string): Promise<void> {
  await db('alert_rules').where({ id }).delete();
}

/** The accounts that have enabled rules (the rule engine's tick). */
export async function accountsWithEnabledRules(db: Q): Promise<string[]> {
  return (await db('alert_rules').where({ enabled: true }).distinct('account_id')).map((r: { account_id: string }) =>
    String(r.account_id),
  );
}
