import type { Knex } from 'knex';
import type { Alert, NotificationChannel, SuppressionReason } from '../model/alert.js';
import { parseJson, toJson } from '../db/json.js';

type Q = Knex | Knex.Transaction;

export interface AlertRow {
  deviceId: string;
  dateTime: number;
  alertName: string;
  latitude: number | null;
  longitude: number | null;
  text: string | null;
  alerts: string[];
  notifications: NotificationChannel[];
  suppressed: Partial<Record<NotificationChannel, SuppressionReason>>;
  createdAt: number;
  /** the alert rule that raised it (null: a tracker's alarm, or one raised over REST) */
  ruleId?: string | null;
}

const toAlert = (r: Record<string, unknown>): Alert => {
  const data = parseJson<{ latitude: number | null; longitude: number | null; text: string | null; alerts: string[] }>(
    r.data,
    {
      latitude: null,
      longitude: null,
      text: null,
      alerts: [],
    },
  );
  return {
    id: Number(r.id),
    dateTime: new Date(Number(r.date_time)).toISOString(),
    latitude: data.latitude ?? null,
    longitude: data.longitude ?? null,
    text: data.text ?? null,
    alertName: String(r.alert_name),
    alerts: data.alerts ?? [],
    notifications: parseJson<NotificationChannel[]>(r.notifications, []),
    suppressed: parseJson<Alert['suppressed']>(r.suppressed, {}),
  };
};

export async function insert(db: Q, a: AlertRow): Promise<Alert> {
  const [row] = await db('alerts')
    .insert({
      device_id: a.deviceId,
      date_time: a.dateTime,
      alert_name: a.alertName,
      data: toJson({ latitude: a.latitude, longitude: a.longitude, text: a.text, alerts: a.alerts }),
      notifications: toJson(a.notifications),
      suppressed: toJson(a.suppressed),
      created_at: a.createdAt,
      rule_id: a.ruleId ?? null,
    })
    .returning('*');
  return toAlert(row);
}

export async function findById(db: Q, id: number): Promise<Alert | undefined> {
  const r = await db('alerts').where({ id }).first();
  return r ? toAlert(r) : undefined;
}

/**
 * The alert of this device, fix time and name already stored by the same rule (`ruleId`, with its
 * `text`), or by no rule (`ruleId` null). An alert stored before alerts named their rule
 * (migration 011) counts as the rule's when its text is the one the rule writes: the catch-up
 * after an upgrade must not raise again what the older version raised.
 */
export async function findSame(
  db: Q,
  deviceId: string,
  dateTime: number,
  alertName: string,
  ruleId: string | null = null,
  text: string | null = null,
): Promise<Alert | undefined> {
  const q = db('alerts').where({ device_id: deviceId, date_time: dateTime, alert_name: alertName });
  if (ruleId === null) {
    const r = await q.whereNull('rule_id').first();
    return r ? toAlert(r) : undefined;
  }
  const rows = await q.andWhere((w) => w.where('rule_id', ruleId).orWhereNull('rule_id'));
  const own = rows.find((r: { rule_id: unknown }) => r.rule_id === ruleId);
  if (own) return toAlert(own);
  const older = rows.map(toAlert).find((a: Alert) => a.text === text);
  return older;
}

export async function setNotifications(
  db: Q,
  id: number,
  notifications: NotificationChannel[],
  suppressed: Alert['suppressed'],
): Promise<void> {
  await db('alerts')
    .where({ id })
    .update({ notifications: toJson(notifications), suppressed: toJson(suppressed) });
}

export interface AlertRangeQuery {
  deviceId: string;
  fromMs: number;
  toMs: number;
  alertName?: string;
  /** exclusive lower bound (fix time, id) from a cursor */
  after?: { dateTime: number; id: number };
  limit: number;
}

/** Alerts with time in [from, to], oldest first. */
export async function range(db: Q, q: AlertRangeQuery): Promise<{ alerts: Alert[]; more: boolean }> {
  const rows = await db('alerts')
    .where('device_id', q.deviceId)
    .andWhere('date_time', '>=', q.fromMs)
    .andWhere('date_time', '<=', q.toMs)
    .modify((b) => {
      if (q.alertName) b.andWhere('alert_name', q.alertName);
      if (q.after) {
        const a = q.after;
        b.andWhere((w) =>
          w
            .where('date_time', '>', a.dateTime)
            .orWhere((x) => x.where('date_time', a.dateTime).andWhere('id', '>', a.id)),
        );
      }
    })
    .orderBy([
      { column: 'date_time', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(q.limit + 1);
  const more = rows.length > q.limit;
  return { alerts: (more ? rows.slice(0, q.limit) : rows).map(toAlert), more };
}
