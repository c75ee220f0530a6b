/**
 * Alert notifications: which channels an alert uses is decided in the alert's own transaction
 * (daily limit reserved, one outbox row per recipient); a worker then delivers the outbox with
 * retries and backoff, on any instance, across restarts. A delivered message is marked sent and
 * never sent again; a message that finally fails gives its place in the day's count back. When
 * the counter store is unreachable, messages wait in the outbox uncounted and are counted (or
 * suppressed) before they are sent: nothing is ever sent uncounted.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { Alert, NotificationChannel, SuppressionReason } from '../model/alert.js';
import { isExpired, type DeviceRecord } from '../model/device.js';
import type { QuotaStore } from '../quota/quota-store.js';
import type { Notifier } from './notifier.js';
import type { AlertNotifier } from '../alerts/alerts.service.js';
import type { SentCounters } from '../devices/devices.service.js';
import * as outbox from './outbox.repository.js';
import * as alerts from '../alerts/alerts.repository.js';
import * as accounts from '../accounts/accounts.repository.js';
import * as devices from '../devices/devices.repository.js';
import { dayIn, quotaKey } from './daily-quota.js';
import { formatAlertEmail, formatAlertSms } from './message.format.js';

export interface NotificationsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  quota: QuotaStore;
  /** the configured channels; a missing one is `notConfigured` */
  channels: Partial<Record<NotificationChannel, Notifier>>;
  maxAttempts?: number;
  backoffMs?: number;
  pollMs?: number;
  concurrency?: number;
}

const CHANNELS: NotificationChannel[] = ['Email', 'SMS'];
const LEASE_MS = 60_000;
const MAX_BACKOFF_MS = 10 * 60_000;

export function createNotificationsService(deps: NotificationsDeps) {
  const { db, clock, logger, quota, channels } = deps;
  const maxAttempts = deps.maxAttempts ?? 8;
  const backoffMs = deps.backoffMs ?? 5000;
  const zones = new Map<string, { at: number; zone: string }>();

  async function timeZoneOf(q: Knex | Knex.Transaction, accountId: string): Promise<string> {
    const now = clock.now().getTime();
    const hit = zones.get(accountId);
    if (hit && now - hit.at < 60_000) return hit.zone;
    const zone = (await accounts.findById(q, accountId))?.timeZone ?? 'UTC';
    zones.set(accountId, { at: now, zone });
    return zone;
  }

  const recipientsOf = (d: DeviceRecord, c: NotificationChannel) => (c === 'Email' ? d.alertEmails : d.alertPhones);
  const limitOf = (d: DeviceRecord, c: NotificationChannel) => (c === 'Email' ? d.dailyEmailLimit : d.dailySmsLimit);

  /** Runs inside the alert's transaction. `undo` gives reserved places back if that transaction fails. */
  async function plan(trx: Knex.Transaction, device: DeviceRecord, alert: Alert) {
    const now = clock.now();
    const notifications: NotificationChannel[] = [];
    const suppressed: Partial<Record<NotificationChannel, SuppressionReason>> = {};
    const reserved: string[] = [];
    if (isExpired(device, now.getTime())) {
      return { notifications, suppressed: { Email: 'deviceExpired', SMS: 'deviceExpired' } as Alert['suppressed'], undo: async () => {} };
    }
    const timeZone = await timeZoneOf(trx, device.accountId);
    const day = dayIn(now, timeZone);
    const notice = { deviceName: device.name, deviceId: device.id, alertName: alert.alertName, text: alert.text, dateTime: new Date(alert.dateTime), latitude: alert.latitude, longitude: alert.longitude, timeZone };
    const email = formatAlertEmail(notice);
    const sms = formatAlertSms(notice);
    const rows: outbox.NewOutboxRow[] = [];
    for (const channel of CHANNELS) {
      const recipients = [...new Set(recipientsOf(device, channel))];
      if (!channels[channel]) {
        suppressed[channel] = 'notConfigured';
        continue;
      }
      if (recipients.length === 0) {
        suppressed[channel] = 'noRecipients';
        continue;
      }
      const key = quotaKey(channel, device.id, day.date);
      const limit = limitOf(device, channel);
      let counted = 0;
      let deferred = 0;
      for (const to of recipients) {
        let ok: boolean | undefined;
        try {
          ok = (await quota.reserve(key, limit, day.end)).ok;
        } catch (e) {
          logger.warn({ err: (e as Error).message, device: device.id }, 'daily counter store unreachable: the message waits in the outbox, uncounted');
        }
        if (ok === false) continue;
        if (ok) {
          reserved.push(key);
          counted++;
        } else deferred++;
        rows.push({
          alertId: alert.id, deviceId: device.id, channel, recipient: to, alertName: alert.alertName,
          subject: channel === 'Email' ? email.subject : null, body: channel === 'Email' ? email.text : sms, html: channel === 'Email' ? email.html : null,
          quotaKey: ok ? key : null, quotaLimit: limit, quotaExpiresAt: day.end.getTime(), nextAttemptAt: now.getTime(), createdAt: now.getTime(),
        });
      }
      if (counted > 0) notifications.push(channel);
      else if (deferred === 0) suppressed[channel] = 'dailyLimitReached';
    }
    await outbox.insertMany(trx, rows);
    return {
      notifications,
      suppressed,
      undo: async () => {
        for (const key of reserved) await quota.release(key).catch(() => {});
      },
    };
  }

  /** After a deferred message was counted or suppressed, the alert says so. */
  async function refreshAlert(alertId: number): Promise<void> {
    const alert = await alerts.findById(db, alertId);
    if (!alert) return;
    const rows = await outbox.forAlert(db, alertId);
    const notifications = new Set(alert.notifications);
    const suppressed = { ...alert.suppressed };
    for (const channel of CHANNELS) {
      const mine = rows.filter((r) => r.channel === channel);
      if (mine.length === 0) continue;
      if (mine.some((r) => r.quotaKey !== null && r.status !== 'suppressed')) {
        notifications.add(channel);
        delete suppressed[channel];
      } else if (mine.every((r) => r.status === 'suppressed')) suppressed[channel] = 'dailyLimitReached';
    }
    await alerts.setNotifications(db, alertId, CHANNELS.filter((c) => notifications.has(c)), suppressed);
  }

  async function deliver(row: outbox.OutboxRow): Promise<void> {
    const now = clock.now().getTime();
    let key = row.quotaKey;
    if (key === null) {
      const timeZone = await timeZoneOf(db, (await devices.findById(db, row.deviceId))?.accountId ?? '');
      key = quotaKey(row.channel, row.deviceId, dayIn(new Date(row.createdAt), timeZone).date);
      let ok: boolean;
      try {
        ok = (await quota.reserve(key, row.quotaLimit ?? 0, new Date(row.quotaExpiresAt ?? now + 86_400_000))).ok;
      } catch (e) {
        await outbox.markRetry(db, row.id, row.attempts, now + backoffMs, `counter store unreachable: ${(e as Error).message}`);
        return;
      }
      if (!ok) {
        await outbox.markFinal(db, row.id, 'suppressed', row.attempts, 'daily limit reached');
        await refreshAlert(row.alertId);
        return;
      }
      await outbox.setQuota(db, row.id, key, row.quotaLimit ?? 0, row.quotaExpiresAt ?? now + 86_400_000);
      await refreshAlert(row.alertId);
    }
    const notifier = channels[row.channel];
    try {
      if (!notifier) throw new Error(`the ${row.channel} channel is no longer configured`);
      await notifier.send({ channel: row.channel, to: row.recipient, subject: row.subject ?? undefined, text: row.body, html: row.html ?? undefined, deviceId: row.deviceId, alertName: row.alertName });
      await outbox.markSent(db, row.id, clock.now().getTime());
    } catch (e) {
      const attempts = row.attempts + 1;
      const reason = (e as Error).message;
      if (attempts >= maxAttempts) {
        await outbox.markFinal(db, row.id, 'failed', attempts, reason);
        await quota.release(key).catch(() => {});
        logger.error({ channel: row.channel, to: row.recipient, device: row.deviceId, attempts, err: reason }, 'notification failed for good; its place in the daily count is freed');
      } else {
        const delay = Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** (attempts - 1)) * (0.8 + Math.random() * 0.4);
        await outbox.markRetry(db, row.id, attempts, clock.now().getTime() + Math.round(delay), reason);
        logger.warn({ channel: row.channel, to: row.recipient, device: row.deviceId, attempts, err: reason }, 'notification failed; will retry');
      }
    }
  }

  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  async function pump(): Promise<void> {
    do {
      again = false;
      for (;;) {
        const now = clock.now().getTime();
        const due = await outbox.leaseDue(db, now, now + LEASE_MS, 50);
        if (due.length === 0 || stopped) break;
        const width = deps.concurrency ?? 8;
        for (let i = 0; i < due.length; i += width) {
          await Promise.all(due.slice(i, i + width).map((r) => deliver(r).catch((e) => logger.error({ err: e }, 'outbox delivery step failed'))));
        }
      }
    } while (again && !stopped);
  }

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pump()
      .catch((e) => logger.error({ err: e }, 'outbox worker failed'))
      .finally(() => {
        running = undefined;
      });
  }

  const timer = setInterval(kick, deps.pollMs ?? 1000);
  timer.unref();

  /** Today's sent counters on the device record, from the counter store (or the outbox if it is down). */
  const counters: SentCounters = {
    async sentToday(list) {
      const out = new Map<string, { email: number; sms: number }>();
      const now = clock.now();
      for (const d of list) {
        const day = dayIn(now, await timeZoneOf(db, d.accountId));
        const keys = [quotaKey('Email', d.id, day.date), quotaKey('SMS', d.id, day.date)];
        let counts: number[];
        try {
          counts = await quota.get(keys);
        } catch {
          counts = await Promise.all(keys.map((k) => outbox.countHolding(db, k)));
        }
        out.set(d.id, { email: counts[0] ?? 0, sms: counts[1] ?? 0 });
      }
      return out;
    },
  };

  const notifier: AlertNotifier = { plan, kick };

  return {
    notifier,
    counters,
    kick,
    /** waits until the outbox has nothing due (tests) */
    async drain(): Promise<void> {
      kick();
      while (running) await running;
    },
    forgetZone: (accountId: string) => zones.delete(accountId),
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      if (running) await running;
      await Promise.all(Object.values(channels).map((c) => c?.close().catch(() => {})));
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
