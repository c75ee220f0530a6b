/** The commands table: the only SQL of core/commands. */
import type { Knex } from 'knex';
import type { CommandFormat, CommandMatchData, CommandRecord, CommandStatus } from '../model/command.js';
import { parseJson, toBool, toNum } from '../db/json.js';
import type { Db } from '../db/db.js';

type Q = Knex | Knex.Transaction;

const toRecord = (r: Record<string, unknown>): CommandRecord => ({
  id: Number(r.id),
  deviceId: String(r.device_id),
  accountId: String(r.account_id),
  command: String(r.command),
  format: r.format as CommandFormat,
  sms: toBool(r.sms),
  status: r.status as CommandStatus,
  createdAt: Number(r.created_at),
  sentAt: toNum(r.sent_at),
  answeredAt: toNum(r.answered_at),
  expiresAt: Number(r.expires_at),
  attempts: Number(r.attempts),
  result: (r.result as string | null) ?? null,
  match: parseJson<CommandMatchData | null>(r.match, null),
});

export type NewCommand = Pick<
  CommandRecord,
  'deviceId' | 'accountId' | 'command' | 'format' | 'sms' | 'createdAt' | 'expiresAt'
>;

export async function insert(db: Q, c: NewCommand): Promise<CommandRecord> {
  const [row] = await db('commands')
    .insert({
      device_id: c.deviceId,
      account_id: c.accountId,
      command: c.command,
      format: c.format,
      sms: c.sms,
      status: 'queued',
      created_at: c.createdAt,
      expires_at: c.expiresAt,
      attempts: 0,
    })
    .returning('id');
  const id = typeof row === 'object' ? Number((row as { id: unknown }).id) : Number(row);
  return (await get(db, id))!;
}

export async function get(db: Q, id: number): Promise<CommandRecord | undefined> {
  const r = await db('commands').where({ id }).first();
  return r ? toRecord(r) : undefined;
}

/** A device's commands, newest first. */
export async function listByDevice(db: Q, deviceId: string, limit: number): Promise<CommandRecord[]> {
  const rows = await db('commands').where({ device_id: deviceId }).orderBy('id', 'desc').limit(limit);
  return rows.map(toRecord);
}

/**
 * Whether the device has a command queued or sent, on the hot-read connection (indexed by device
 * and status): a tracker logging in without any costs no write.
 */
export async function hasOpen(db: Db, deviceId: string): Promise<boolean> {
  return (
    (await db.read.first(
      "select 1 as x from commands where device_id = ? and status in ('queued', 'sent') limit 1",
      deviceId,
    )) !== undefined
  );
}

/** A device's commands in `status`, oldest first. */
export async function inStatus(db: Q, deviceId: string, status: CommandStatus): Promise<CommandRecord[]> {
  const rows = await db('commands').where({ device_id: deviceId, status }).orderBy('id', 'asc');
  return rows.map(toRecord);
}

/** Queued commands of the device (every device when undefined) whose ttl ran out become `expired`: as they now are. */
export async function expireDue(db: Q, nowMs: number, deviceId?: string): Promise<CommandRecord[]> {
  const q = db('commands').where('status', 'queued').andWhere('expires_at', '<=', nowMs);
  if (deviceId !== undefined) q.andWhere('device_id', deviceId);
  const rows: Record<string, unknown>[] = await q.update({ status: 'expired' }).returning('*');
  return rows.map(toRecord);
}

/** Of `deviceIds`, those with a queued command (indexed by device, status). */
export async function devicesWithQueued(db: Q, deviceIds: string[]): Promise<string[]> {
  const found: string[] = [];
  // bounded IN lists: SQLite and PostgreSQL cap bound parameters
  for (let i = 0; i < deviceIds.length; i += 500) {
    const rows = await db('commands')
      .distinct('device_id')
      .whereIn('device_id', deviceIds.slice(i, i + 500))
      .andWhere('status', 'queued');
    found.push(...rows.map((r: Record<string, unknown>) => String(r.device_id)));
  }
  return found;
}

/**
 * Moves a command from one status to another, only if it is still in `from` (a second writer, or
 * a cancel that came first, makes this a no-op): the command as it now is, or undefined when it
 * did not move.
 */
export async function transition(
  db: Q,
  id: number,
  from: CommandStatus,
  to: CommandStatus,
  fields: {
    sentAt?: number;
    answeredAt?: number;
    result?: string | null;
    match?: CommandMatchData | null;
    addAttempt?: boolean;
  } = {},
): Promise<CommandRecord | undefined> {
  const update: Record<string, unknown> = { status: to };
  if (fields.sentAt !== undefined) update.sent_at = fields.sentAt;
  if (fields.answeredAt !== undefined) update.answered_at = fields.answeredAt;
  if (fields.result !== undefined) update.result = fields.result;
  if (fields.match !== undefined) update.match = fields.match === null ? null : JSON.stringify(fields.match);
  if (fields.addAttempt) update.attempts = db.raw('attempts + 1');
  const [row] = (await db('commands').where({ id, status: from }).update(update).returning('*')) as Record<
    string,
    unknown
  >[];
  return row ? toRecord(row) : undefined;
}
