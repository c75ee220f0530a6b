import type { Knex } from 'knex';
import type { NotificationChannel } from '../model/alert.js';

type Q = Knex | Knex.Transaction;

export type OutboxStatus = 'pending' | 'sent' | 'failed' | 'suppressed';

export interface OutboxRow {
  id: number;
  alertId: number;
  deviceId: string;
  channel: NotificationChannel;
  recipient: string;
  subject: string | null;
  body: string;
  html: string | null;
  alertName: string;
  quotaKey: string | null;
  quotaLimit: number | null;
  quotaExpiresAt: number | null;
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: number;
  createdAt: number;
}

export type NewOutboxRow = Omit<OutboxRow, 'id' | 'status' | 'attempts'>;

const toRow = (r: Record<string, unknown>): OutboxRow => ({
  id: Number(r.id),
  alertId: Number(r.alert_id),
  deviceId: String(r.device_id),
  channel: r.channel as NotificationChannel,
  recipient: String(r.recipient),
  subject: (r.subject as string | null) ?? null,
  body: String(r.body),
  html: (r.html as string | null) ?? null,
  alertName: String(r.alert_name),
  quotaKey: (r.quota_key as string | null) ?? null,
  quotaLimit: r.quota_limit === null || r.quota_limit === undefined ? null : Number(r.quota_limit),
  quotaExpiresAt: r.quota_expires_at === null || r.quota_expires_at === undefined ? null : Number(r.quota_expires_at),
  status: r.status as OutboxStatus,
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  createdAt: Number(r.created_at),
});

export async function insertMany(db: Q, rows: NewOutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db('outbox').insert(
    rows.map((r) => ({
      alert_id: r.alertId,
      device_id: r.deviceId,
      channel: r.channel,
      recipient: r.recipient,
      subject: r.subject,
      body: r.body,
      html: r.html,
      alert_name: r.alertName,
      quota_key: r.quotaKey,
      quota_limit: r.quotaLimit,
      quota_expires_at: r.quotaExpiresAt,
      status: 'pending',
      attempts: 0,
      next_attempt_at: r.nextAttemptAt,
      created_at: r.createdAt,
    })),
  );
}

/**
 * Leases up to `limit` due messages to this worker until `leaseUntil`: a message leased by
 * another instance (or a worker that died) is taken only once its lease has run out. `busy`: the
 * ids this worker is still sending, never taken again even if their lease ran out (a clock jump).
 */
export async function leaseDue(
  db: Q,
  nowMs: number,
  leaseUntil: number,
  limit: number,
  busy: Iterable<number> = [],
): Promise<OutboxRow[]> {
  const skip = [...busy];
  const candidates = await db('outbox')
    .where('status', 'pending')
    .modify((q) => {
      if (skip.length > 0) q.whereNotIn('id', skip);
    })
    .andWhere('next_attempt_at', '<=', nowMs)
    .andWhere((w) => w.whereNull('lease_until').orWhere('lease_until', '<', nowMs))
    .orderBy('id')
    .limit(limit)
    .select('id');
  const leased: OutboxRow[] = [];
  for (const { id } of candidates) {
    const n = await db('outbox')
      .where({ id, status: 'pending' })
      .andWhere((w) => w.whereNull('lease_until').orWhere('lease_until', '<', nowMs))
      .update({ lease_until: leaseUntil });
    if (n === 1) leased.push(toRow(await db('outbox').where({ id }).first()));
  }
  return leased;
}

export async function markSent(db: Q, id: number, atMs: number): Promise<void> {
  await db('outbox').where({ id }).update({ status: 'sent', sent_at: atMs, lease_until: null });
}

export async function markRetry(
  db: Q,
  id: number,
  attempts: number,
  nextAttemptAt: number,
  error: string,
): Promise<void> {
  await db('outbox')
    .where({ id })
    .update({ attempts, next_attempt_at: nextAttemptAt, last_error: error.slice(0, 1000), lease_until: null });
}

export async function markFinal(
  db: Q,
  id: number,
  status: 'failed' | 'suppressed',
  attempts: number,
  error: string,
): Promise<void> {
  await db('outbox')
    .where({ id })
    .update({ status, attempts, last_error: error.slice(0, 1000), lease_until: null });
}

export async function setQuota(db: Q, id: number, key: string, limit: number, expiresAt: number): Promise<void> {
  await db('outbox').where({ id }).update({ quota_key: key, quota_limit: limit, quota_expires_at: expiresAt });
}

/** Messages holding a place in a daily counter that has not expired: to rebuild in-process counters. */
export async function liveQuotaHolders(
  db: Q,
  nowMs: number,
): Promise<{ quotaKey: string; quotaLimit: number; quotaExpiresAt: number }[]> {
  const rows = await db('outbox')
    .whereIn('status', ['pending', 'sent'])
    .whereNotNull('quota_key')
    .andWhere('quota_expires_at', '>', nowMs)
    .select('quota_key', 'quota_limit', 'quota_expires_at');
  return rows.map((r: Record<string, unknown>) => ({
    quotaKey: String(r.quota_key),
    quotaLimit: Number(r.quota_limit),
    quotaExpiresAt: Number(r.quota_expires_at),
  }));
}

/** Messages waiting to be sent or retried: the outbox backlog, counted on the (status, next_attempt_at) index. */
export async function countPending(db: Q): Promise<number> {
  const r = await db('outbox').where('status', 'pending').count({ n: '*' }).first();
  return Number(r?.n ?? 0);
}

export async function forAlert(db: Q, alertId: number): Promise<OutboxRow[]> {
  return (await db('outbox').where({ alert_id: alertId }).orderBy('id')).map(toRow);
}

/**
 * Messages holding a place in the counter `key` of `deviceId` (what the counter store should say):
 * to start a counter the store does not have. `sinceMs`: no earlier than the key's day began, so
 * the (device_id, created_at) index bounds the read.
 */
export async function countHolding(db: Q, key: string, deviceId: string, sinceMs: number): Promise<number> {
  const r = await db('outbox')
    .where({ device_id: deviceId })
    .andWhere('created_at', '>=', sinceMs)
    .andWhere({ quota_key: key })
    .whereIn('status', ['pending', 'sent'])
    .count({ n: '*' })
    .first();
  return Number(r?.n ?? 0);
}
