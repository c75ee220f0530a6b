/** The rule engine's tables (migration 009): the only SQL of core/rules/rules.engine.ts. */
import type { Knex } from 'knex';
import type { RuleState } from './rule-detectors.js';
import { parseJson } from '../db/json.js';

type Q = Knex | Knex.Transaction;

export interface StoredRuleState {
  ruleId: string;
  deviceId: string;
  state: RuleState;
  version: number;
  commandDue: number | null;
}

const toStored = (r: Record<string, unknown>): StoredRuleState => ({
  ruleId: String(r.rule_id),
  deviceId: String(r.device_id),
  state: parseJson<RuleState>(r.state, { on: false, since: null, fired: false, memory: {} }),
  version: Number(r.version),
  commandDue: r.command_due === null || r.command_due === undefined ? null : Number(r.command_due),
});

/** Every rule's state for these devices (500 per query). */
export async function statesOfDevices(db: Q, deviceIds: string[]): Promise<StoredRuleState[]> {
  const out: StoredRuleState[] = [];
  for (let i = 0; i < deviceIds.length; i += 500)
    out.push(...(await db('rule_states').whereIn('device_id', deviceIds.slice(i, i + 500))).map(toStored));
  return out;
}

export async function stateOf(db: Q, ruleId: string, deviceId: string): Promise<StoredRuleState | undefined> {
  const r = await db('rule_states').where({ rule_id: ruleId, device_id: deviceId }).first();
  return r ? toStored(r) : undefined;
}

/** The states of these rules whose episode waits for its time (for the tick). */
export async function pendingOf(db: Q, ruleIds: string[]): Promise<StoredRuleState[]> {
  if (ruleIds.length === 0) return [];
  return (await db('rule_states').whereIn('rule_id', ruleIds).andWhere('pending', true)).map(toStored);
}

/** States whose rule command is due. */
export async function commandsDue(db: Q, nowMs: number): Promise<StoredRuleState[]> {
  return (await db('rule_states').whereNotNull('command_due').andWhere('command_due', '<=', nowMs).limit(500)).map(
    toStored,
  );
}

/**
 * Writes a state if it is still at `version` (compare-and-set): false when another instance wrote
 * it first (the caller reads it again). Version 0 is a state never written: it is inserted.
 */
export async function writeState(db: Q, s: StoredRuleState, nowMs: number): Promise<boolean> {
  const row = {
    state: JSON.stringify(s.state),
    version: s.version + 1,
    pending: s.state.on && !s.state.fired,
    command_due: s.commandDue,
    updated_at: nowMs,
  };
  if (s.version === 0) {
    // ON CONFLICT DO NOTHING: a conflict must not abort the transaction it runs in (PostgreSQL)
    const inserted = await db('rule_states')
      .insert({ rule_id: s.ruleId, device_id: s.deviceId, ...row })
      .onConflict(['rule_id', 'device_id'])
      .ignore()
      .returning('rule_id');
    return inserted.length === 1;
  }
  return (
    (await db('rule_states').where({ rule_id: s.ruleId, device_id: s.deviceId, version: s.version }).update(row)) === 1
  );
}

/**
 * Inserts states never written before, 200 per statement, skipping any another writer inserted
 * first: the keys (`ruleId|deviceId`) that went in.
 */
export async function insertStates(db: Q, states: StoredRuleState[], nowMs: number): Promise<Set<string>> {
  const taken = new Set<string>();
  for (let i = 0; i < states.length; i += 200) {
    const rows = states.slice(i, i + 200).map((s) => ({
      rule_id: s.ruleId,
      device_id: s.deviceId,
      state: JSON.stringify(s.state),
      version: 1,
      pending: s.state.on && !s.state.fired,
      command_due: s.commandDue,
      updated_at: nowMs,
    }));
    const inserted: { rule_id: string; device_id: string }[] = await db('rule_states')
      .insert(rows)
      .onConflict(['rule_id', 'device_id'])
      .ignore()
      .returning(['rule_id', 'device_id']);
    for (const r of inserted) taken.add(`${r.rule_id}|${r.device_id}`);
  }
  return taken;
}

/**
 * Writes changed states compare-and-set, 200 per statement (one UPDATE … FROM VALUES … RETURNING,
 * on SQLite and PostgreSQL alike): the keys (`ruleId|deviceId`) written; a state another writer
 * changed since (its version moved) is not written.
 */
export async function updateStates(db: Q, states: StoredRuleState[], nowMs: number): Promise<Set<string>> {
  const written = new Set<string>();
  for (let i = 0; i < states.length; i += 200) {
    const part = states.slice(i, i + 200);
    const values = part.map(() => '(?, ?, CAST(? AS INTEGER), ?, CAST(? AS INTEGER), CAST(? AS BIGINT))').join(', ');
    const bindings = part.flatMap((s) => [
      s.ruleId,
      s.deviceId,
      s.version,
      JSON.stringify(s.state),
      s.state.on && !s.state.fired ? 1 : 0,
      s.commandDue,
    ]);
    const sql =
      'UPDATE rule_states SET state = v.state, version = rule_states.version + 1, pending = (v.pending = 1), command_due = v.command_due, updated_at = ? ' +
      `FROM (SELECT column1 AS rule_id, column2 AS device_id, column3 AS version, column4 AS state, column5 AS pending, column6 AS command_due FROM (VALUES ${values}) AS t) AS v ` +
      'WHERE rule_states.rule_id = v.rule_id AND rule_states.device_id = v.device_id AND rule_states.version = v.version ' +
      'RETURNING rule_states.rule_id, rule_states.device_id';
    const result = (await db.raw(sql, [nowMs, ...bindings])) as
      | { rows?: { rule_id: string; device_id: string }[] }
      | { rule_id: string; device_id: string }[];
    const rows = Array.isArray(result) ? result : (result.rows ?? []);
    for (const r of rows) written.add(`${r.rule_id}|${r.device_id}`);
  }
  return written;
}

/** The fix time of the last position evaluated per device. */
export async function lastFixes(db: Q, deviceIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < deviceIds.length; i += 500) {
    for (const r of await db('rule_devices').whereIn('device_id', deviceIds.slice(i, i + 500)))
      out.set(String(r.device_id), Number(r.last_fix));
  }
  return out;
}

/** Saves per device the fix time of the last position evaluated and when its last position was received (each only ever forward), 200 rows per statement. */
export async function saveLastFixes(db: Q, marks: Map<string, { lastFix: number; lastReport: number }>): Promise<void> {
  const rows = [...marks].map(([device_id, m]) => ({ device_id, last_fix: m.lastFix, last_report: m.lastReport }));
  const forward = (c: string) =>
    db.raw(`CASE WHEN rule_devices.${c} < excluded.${c} THEN excluded.${c} ELSE rule_devices.${c} END`);
  for (let i = 0; i < rows.length; i += 200) {
    await db('rule_devices')
      .insert(rows.slice(i, i + 200))
      .onConflict('device_id')
      .merge({ last_fix: forward('last_fix'), last_report: forward('last_report') });
  }
}

/** Takes (or keeps) a named lease until `until`: whether this holder has it. */
export async function takeLease(db: Q, name: string, holder: string, nowMs: number, until: number): Promise<boolean> {
  await db('leases').insert({ name, holder, until: 0 }).onConflict('name').ignore();
  const n = await db('leases')
    .where({ name })
    .andWhere((w) => w.where('holder', holder).orWhere('until', '<', nowMs))
    .update({ holder, until });
  return n === 1;
}

/** Gives a lease back (stopping). */
export async function releaseLease(db: Q, name: string, holder: string): Promise<void> {
  await db('leases').where({ name, holder }).update({ until: 0 });
}
/** When each device last reported (its last connection, or the last position received, whichever is later) and when it expires. */
export async function deviceClocks(
  db: Q,
  deviceIds: string[],
): Promise<Map<string, { lastReportAt: number | null; expiresAt: number | null }>> {
  const out = new Map<string, { lastReportAt: number | null; expiresAt: number | null }>();
  for (let i = 0; i < deviceIds.length; i += 500) {
    const rows = await db('devices')
      .leftJoin('rule_devices', 'rule_devices.device_id', 'devices.id')
      .whereIn('devices.id', deviceIds.slice(i, i + 500))
      .select(
        'devices.id as id',
        'devices.last_connection as last_connection',
        'devices.expires_at as expires_at',
        'rule_devices.last_report as last_report',
      );
    for (const r of rows) {
      const times = [r.last_connection, r.last_report]
        .filter((x: unknown) => x !== null && x !== undefined)
        .map(Number);
      out.set(String(r.id), {
        lastReportAt: times.length ? Math.max(...times) : null,
        expiresAt: r.expires_at === null || r.expires_at === undefined ? null : Number(r.expires_at),
      });
    }
  }
  return out;
}
