/**
 * Alert notifications: which channels an alert uses is decided just before the alert's own
 * transaction (daily limit reserved: the counter store may be Redis, and no network call waits
 * inside a database transaction), and the transaction writes one outbox row per recipient; a
 * worker then delivers the outbox with retries and backoff, on any instance, across restarts. A
 * delivered message is marked sent and never sent again; a message that finally fails gives its
 * place in the day's count back. When the counter store is unreachable, messages wait in the
 * outbox uncounted and are counted (or suppressed) before they are sent: nothing is ever sent
 * uncounted. No send holds the worker for longer than its timeout, and stop() ends in bounded time.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { NotificationChannel, SuppressionReason } from '../model/alert.js';
import { isExpired, type DeviceRecord } from '../model/device.js';
import type { QuotaStore } from '../quota/quota-store.js';
import type { Notifier } from './notifier.js';
import type { AlertNotifier, NotificationPlan, PlannedAlert } from '../alerts/alerts.service.js';
import type { SentCounters } from '../devices/devices.service.js';
import * as outbox from './outbox.repository.js';
import * as alerts from '../alerts/alerts.repository.js';
import * as accounts from '../accounts/accounts.repository.js';
import * as devices from '../devices/devices.repository.js';
import { dayIn, quotaKey } from './daily-quota.js';
import { formatAlertEmail, formatAlertSms } from './message.format.js';
import { backoffMs, jittered } from '../backoff.js';

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
  /** the notifiers' own timeout for one send; the worker gives up on a send a second after it */
  sendTimeoutMs?: number;
  /** how long stop() lets sends in flight finish before it closes the notifiers under them */
  stopGraceMs?: number;
}

const CHANNELS: NotificationChannel[] = ['Email', 'SMS'];
const MAX_BACKOFF_MS = 10 * 60_000;
/** a day in a time zone lasts at most 25 hours (DST); a counter's rows are no older than this before its end */
const LONGEST_DAY_MS = 26 * 3600_000;

/** Rejects with `message` once `ms` have passed; the promise given may still settle later. */
function within<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export interface NotificationsService {
  /** What the alert service asks before each alert's transaction (plan) and after it (kick). */
  notifier: AlertNotifier;
  /** Today's sent counters for device records, from the counter store (or the outbox if it is down). */
  counters: SentCounters;
  /** Wakes the outbox worker now instead of at its next poll. */
  kick(): void;
  /** Waits until the outbox has nothing due (tests). */
  drain(): Promise<void>;
  /** Forgets an account's cached time zone (it changed). */
  forgetZone(accountId: string): void;
  /**
   * Stops the worker: sends in flight get `stopGraceMs` to finish, then the notifiers are closed
   * under them (their messages stay pending, due at once); returns within about twice that.
   */
  stop(): Promise<void>;
}

/** What the service's parts share: its dependencies, settings, cached time zones and the worker's state. */
interface Notifications {
  deps: NotificationsDeps;
  maxAttempts: number;
  backoffMs: number;
  sendDeadlineMs: number;
  leaseMs: number;
  zones: Map<string, { at: number; zone: string }>;
  /** the outbox worker's run, while it runs */
  running: Promise<void> | undefined;
  /** a kick came while it ran: it runs once more */
  again: boolean;
  stopped: boolean;
  /** wakes a pump that waits on its sends in flight: a message made meanwhile must not wait for them */
  wake: (() => void) | undefined;
}

export function createNotificationsService(deps: NotificationsDeps): NotificationsService {
  const sendDeadlineMs = (deps.sendTimeoutMs ?? 30_000) + 1000;
  const n: Notifications = {
    deps,
    maxAttempts: deps.maxAttempts ?? 8,
    backoffMs: deps.backoffMs ?? 5000,
    sendDeadlineMs,
    // A lease outlasts any send, so no other instance takes a message while this one still tries it.
    leaseMs: Math.max(60_000, 2 * sendDeadlineMs),
    zones: new Map(),
    running: undefined,
    again: false,
    stopped: false,
    wake: undefined,
  };
  const stopGraceMs = deps.stopGraceMs ?? 2000;
  const kick = () => kickWorker(n);
  const timer = setInterval(kick, deps.pollMs ?? 1000);
  timer.unref();

  return {
    notifier: { plan: (device, alert) => plan(n, device, alert), kick },
    counters: { sentToday: (list) => sentToday(n, list) },
    kick,
    async drain(): Promise<void> {
      kick();
      while (n.running) await n.running;
    },
    forgetZone: (accountId: string) => {
      n.zones.delete(accountId);
    },
    async stop(): Promise<void> {
      n.stopped = true;
      clearInterval(timer);
      if (n.running) await Promise.race([n.running, pause(stopGraceMs)]);
      await Promise.all(Object.values(deps.channels).map((c) => c?.close().catch(() => {})));
      if (n.running) await Promise.race([n.running, pause(stopGraceMs)]);
      if (n.running)
        deps.logger.warn(
          {},
          'notification worker still busy at shutdown; its messages are sent again once their lease runs out',
        );
    },
  };
}

async function timeZoneOf(n: Notifications, q: Knex | Knex.Transaction, accountId: string): Promise<string> {
  const now = n.deps.clock.now().getTime();
  const hit = n.zones.get(accountId);
  if (hit && now - hit.at < 60_000) return hit.zone;
  const zone = (await accounts.findById(q, accountId))?.timeZone ?? 'UTC';
  n.zones.set(accountId, { at: now, zone });
  return zone;
}

const recipientsOf = (d: DeviceRecord, c: NotificationChannel) => (c === 'Email' ? d.alertEmails : d.alertPhones);
const limitOf = (d: DeviceRecord, c: NotificationChannel) => (c === 'Email' ? d.dailyEmailLimit : d.dailySmsLimit);
/** What the outbox says a counter holds: where a counter the store lost (or never had) starts. */
const holding = (n: Notifications, key: string, deviceId: string, dayEnd: number) => () =>
  outbox.countHolding(n.deps.db, key, deviceId, dayEnd - LONGEST_DAY_MS);

/** An alert's plan as it is made, channel by channel. */
interface PlanDraft {
  notifications: NotificationChannel[];
  suppressed: Partial<Record<NotificationChannel, SuppressionReason>>;
  reserved: string[];
  rows: Omit<outbox.NewOutboxRow, 'alertId'>[];
  /** once the store fails, the alert's other messages wait uncounted too: one timeout per alert, not one per recipient */
  storeDown: boolean;
}

/** Runs before the alert's transaction; `write` runs inside it, `undo` if it fails. */
async function plan(n: Notifications, device: DeviceRecord, alert: PlannedAlert): Promise<NotificationPlan> {
  const now = n.deps.clock.now();
  if (isExpired(device, now.getTime())) {
    return {
      notifications: [],
      suppressed: { Email: 'deviceExpired', SMS: 'deviceExpired' },
      write: async () => {},
      undo: async () => {},
    };
  }
  const timeZone = await timeZoneOf(n, n.deps.db, device.accountId);
  const day = dayIn(now, timeZone);
  const notice = {
    deviceName: device.name,
    deviceId: device.id,
    alertName: alert.alertName,
    ruleName: alert.ruleName,
    text: alert.text,
    dateTime: new Date(alert.dateTime),
    latitude: alert.latitude,
    longitude: alert.longitude,
    timeZone,
  };
  const messages = { email: formatAlertEmail(notice), sms: formatAlertSms(notice) };
  const draft: PlanDraft = { notifications: [], suppressed: {}, reserved: [], rows: [], storeDown: false };
  for (const channel of CHANNELS) await planChannel(n, draft, { device, alert, channel, day, now, messages });
  const { quota } = n.deps;
  return {
    notifications: draft.notifications,
    suppressed: draft.suppressed,
    write: (trx, alertId) =>
      outbox.insertMany(
        trx,
        draft.rows.map((r) => ({ ...r, alertId })),
      ),
    undo: async () => {
      for (const key of draft.reserved) await quota.release(key).catch(() => {});
    },
  };
}

/** One channel of an alert's plan: suppressed, or a counted (or, the store down, deferred) row per recipient. */
async function planChannel(
  n: Notifications,
  draft: PlanDraft,
  c: {
    device: DeviceRecord;
    alert: PlannedAlert;
    channel: NotificationChannel;
    day: ReturnType<typeof dayIn>;
    now: Date;
    messages: { email: ReturnType<typeof formatAlertEmail>; sms: string };
  },
): Promise<void> {
  const { device, alert, channel, day, now, messages } = c;
  const recipients = [...new Set(recipientsOf(device, channel))];
  const skipped: SuppressionReason | undefined =
    alert.channels && !alert.channels[channel === 'Email' ? 'email' : 'sms']
      ? 'notRequested'
      : !n.deps.channels[channel]
        ? 'notConfigured'
        : recipients.length === 0
          ? 'noRecipients'
          : undefined;
  if (skipped) {
    draft.suppressed[channel] = skipped;
    return;
  }
  const key = quotaKey(channel, device.id, day.date);
  const limit = limitOf(device, channel);
  let counted = 0;
  let deferred = 0;
  for (const to of recipients) {
    let ok: boolean | undefined;
    if (!draft.storeDown) {
      try {
        ok = (await n.deps.quota.reserve(key, limit, day.end, holding(n, key, device.id, day.end.getTime()))).ok;
      } catch (e) {
        draft.storeDown = true;
        n.deps.logger.warn(
          { err: (e as Error).message, device: device.id },
          'daily counter store unreachable: the message waits in the outbox, uncounted',
        );
      }
    }
    if (ok === false) continue;
    if (ok) {
      draft.reserved.push(key);
      counted++;
    } else deferred++;
    const email = channel === 'Email' ? messages.email : undefined;
    draft.rows.push({
      deviceId: device.id,
      channel,
      recipient: to,
      alertName: alert.alertName,
      subject: email ? email.subject : null,
      body: email ? email.text : messages.sms,
      html: email ? email.html : null,
      quotaKey: ok ? key : null,
      quotaLimit: limit,
      quotaExpiresAt: day.end.getTime(),
      nextAttemptAt: now.getTime(),
      createdAt: now.getTime(),
    });
  }
  if (counted > 0) draft.notifications.push(channel);
  else if (deferred === 0) draft.suppressed[channel] = 'dailyLimitReached';
}

/** After a deferred message was counted or suppressed, the alert says so. */
async function refreshAlert(n: Notifications, alertId: number): Promise<void> {
  const { db } = n.deps;
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
  await alerts.setNotifications(
    db,
    alertId,
    CHANNELS.filter((c) => notifications.has(c)),
    suppressed,
  );
}

/**
 * A message that waited uncounted (the store was down) is counted now: its counter key, or null
 * when it is not to be sent now (suppressed at the limit, or the store still down: retried).
 */
async function countDeferred(n: Notifications, row: outbox.OutboxRow, now: number): Promise<string | null> {
  const { db, quota } = n.deps;
  const timeZone = await timeZoneOf(n, db, (await devices.findById(db, row.deviceId))?.accountId ?? '');
  const key = quotaKey(row.channel, row.deviceId, dayIn(new Date(row.createdAt), timeZone).date);
  const expiresAt = row.quotaExpiresAt ?? now + 86_400_000;
  let ok: boolean;
  try {
    ok = (await quota.reserve(key, row.quotaLimit ?? 0, new Date(expiresAt), holding(n, key, row.deviceId, expiresAt)))
      .ok;
  } catch (e) {
    await outbox.markRetry(
      db,
      row.id,
      row.attempts,
      now + n.backoffMs,
      `counter store unreachable: ${(e as Error).message}`,
    );
    return null;
  }
  if (!ok) {
    await outbox.markFinal(db, row.id, 'suppressed', row.attempts, 'daily limit reached');
    await refreshAlert(n, row.alertId);
    return null;
  }
  await outbox.setQuota(db, row.id, key, row.quotaLimit ?? 0, expiresAt);
  await refreshAlert(n, row.alertId);
  return key;
}

async function deliver(n: Notifications, row: outbox.OutboxRow): Promise<void> {
  const { db, clock, logger } = n.deps;
  const key = row.quotaKey ?? (await countDeferred(n, row, clock.now().getTime()));
  if (key === null) return;
  const notifier = n.deps.channels[row.channel];
  const where = { device: row.deviceId, alert: row.alertId, channel: row.channel };
  try {
    if (!notifier) throw new Error(`the ${row.channel} channel is no longer configured`);
    const sending = notifier.send({
      channel: row.channel,
      to: row.recipient,
      subject: row.subject ?? undefined,
      text: row.body,
      html: row.html ?? undefined,
      deviceId: row.deviceId,
      alertName: row.alertName,
    });
    // The notifiers keep their own timeouts; this one holds even if a library does not.
    await within(sending, n.sendDeadlineMs, `no answer within ${n.sendDeadlineMs} ms`);
  } catch (e) {
    await sendFailed(n, row, key, (e as Error).message, where);
    return;
  }
  await outbox.markSent(db, row.id, clock.now().getTime());
  // Who was notified of what, never the message itself: an outbox row has one recipient.
  logger.info(
    { ...where, recipients: 1, attempts: row.attempts + 1 },
    row.channel === 'Email' ? 'alert e-mail delivered' : 'alert SMS delivered',
  );
}

/** A send that failed: retried with backoff, or failed for good after the last attempt (its place in the count freed). */
async function sendFailed(
  n: Notifications,
  row: outbox.OutboxRow,
  key: string,
  reason: string,
  where: Record<string, unknown>,
): Promise<void> {
  const { db, clock, logger, quota } = n.deps;
  if (n.stopped) {
    // Shutting down let go of it: not the receiver's failure, so no attempt is counted, and
    // it is due again at once (for the next start, or another instance).
    await outbox.markRetry(db, row.id, row.attempts, clock.now().getTime(), reason);
    logger.warn(
      { ...where, to: row.recipient, err: reason },
      'notification interrupted by shutdown; sent after the next start',
    );
    return;
  }
  const attempts = row.attempts + 1;
  if (attempts >= n.maxAttempts) {
    await outbox.markFinal(db, row.id, 'failed', attempts, reason);
    await quota.release(key).catch(() => {});
    logger.error(
      { ...where, to: row.recipient, attempts, err: reason },
      'notification failed for good; its place in the daily count is freed',
    );
  } else {
    const delay = jittered(backoffMs({ minMs: n.backoffMs, maxMs: MAX_BACKOFF_MS }, attempts));
    await outbox.markRetry(db, row.id, attempts, clock.now().getTime() + Math.round(delay), reason);
    logger.warn(
      { ...where, to: row.recipient, attempts, retryInMs: Math.round(delay), err: reason },
      'notification failed; will retry',
    );
  }
}

/**
 * Up to `concurrency` sends at a time. A message is leased only when a slot is free to send it
 * at once, so its lease never runs out while it waits behind slow sends; a slow or hanging
 * receiver holds one slot for at most its timeout and never the others.
 */
async function pump(n: Notifications): Promise<void> {
  const { db, clock, logger } = n.deps;
  const width = n.deps.concurrency ?? 8;
  // The sends in flight by message id: a lease that ran out under a send (the clock jumped) must
  // not have its message leased and sent again.
  const active = new Map<number, Promise<void>>();
  try {
    do {
      n.again = false;
      while (!n.stopped) {
        const free = width - active.size;
        if (free > 0) {
          const now = clock.now().getTime();
          for (const row of await outbox.leaseDue(db, now, now + n.leaseMs, free, active.keys())) {
            const sending = deliver(n, row)
              .catch((e) => logger.error({ err: e }, 'outbox delivery step failed'))
              .finally(() => active.delete(row.id));
            active.set(row.id, sending);
          }
        }
        if (active.size === 0) break;
        // a send ends, or a kick (a new message, the poll) while every send in flight hangs:
        // waiting on the sends alone held a new e-mail back for a hanging SMS gateway's timeout
        await Promise.race([...active.values(), new Promise<void>((r) => (n.wake = r))]);
        n.wake = undefined;
      }
    } while (n.again && !n.stopped);
  } finally {
    // Also when leasing failed: the next run starts only once these sends are over.
    await Promise.all(active.values());
  }
}

function kickWorker(n: Notifications): void {
  if (n.stopped) return;
  if (n.running) {
    n.again = true;
    n.wake?.();
    return;
  }
  n.running = pump(n)
    .catch((e) => n.deps.logger.error({ err: e }, 'outbox worker failed'))
    .finally(() => {
      n.running = undefined;
    });
}

/** Today's sent counters on the device record, from the counter store (or the outbox if it is down). */
async function sentToday(
  n: Notifications,
  list: Parameters<SentCounters['sentToday']>[0],
): Promise<Map<string, { email: number; sms: number }>> {
  const now = n.deps.clock.now();
  const wanted: { id: string; key: string; dayEnd: number }[] = [];
  for (const d of list) {
    const day = dayIn(now, await timeZoneOf(n, n.deps.db, d.accountId));
    for (const channel of CHANNELS)
      wanted.push({ id: d.id, key: quotaKey(channel, d.id, day.date), dayEnd: day.end.getTime() });
  }
  // One read for the whole list: a store that hangs costs one timeout, not one per device.
  let counts: number[];
  try {
    counts = await n.deps.quota.get(wanted.map((w) => w.key));
  } catch {
    counts = await Promise.all(wanted.map((w) => holding(n, w.key, w.id, w.dayEnd)()));
  }
  const out = new Map<string, { email: number; sms: number }>();
  for (let i = 0; i < list.length; i++) out.set(list[i].id, { email: counts[2 * i] ?? 0, sms: counts[2 * i + 1] ?? 0 });
  return out;
}
