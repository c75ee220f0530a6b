/**
 * The one writer of alerts: every alert, whatever raised it (a tracker's alarm, MQTT, REST), is
 * recorded here by the ingest (core/ingest/ingest.service.ts), notified within the daily limits
 * and announced on the event bus.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Alert, AlertInput } from '../model/alert.js';
import type { DeviceRecord } from '../model/device.js';
import type { EventBus } from '../events/event-bus.js';
import * as alerts from './alerts.repository.js';
import { lastPosition } from '../locations/locations.repository.js';

/** What deciding an alert's notifications needs to know of it (it has no id yet). */
export type PlannedAlert = Pick<Alert, 'alertName' | 'text' | 'latitude' | 'longitude'> & {
  dateTime: number;
  /** only these channels (an alert rule's `notify`); absent: every channel the device has */
  channels?: { email: boolean; sms: boolean };
  /** the name of the alert rule that raised it, for the messages */
  ruleName?: string;
};

export interface NotificationPlan extends Pick<Alert, 'notifications' | 'suppressed'> {
  /** inside the alert's transaction: records what is to be sent */
  write(trx: Knex.Transaction, alertId: number): Promise<void>;
  /** gives reserved places back: the transaction failed, or the alert was a repeat */
  undo(): Promise<void>;
}

/**
 * Decides which channels will notify and why others will not (daily limits reserved), just before
 * the alert's transaction: the counter store may be Redis, and a network call inside a database
 * transaction would hold a connection (on SQLite the only writer) for as long as Redis hangs. The
 * notification module provides it (durable outbox). Without it an alert is only stored.
 */
export interface AlertNotifier {
  plan(device: DeviceRecord, alert: PlannedAlert): Promise<NotificationPlan>;
  /** after commit: deliver what was planned */
  kick(): void;
}

export interface AlertRecorderDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
  notifier?: AlertNotifier;
  /** Called inside the alert's transaction once it is inserted (the forwards' journal, core/forward/). */
  afterInsert?: (trx: Knex.Transaction, item: { accountId: string; deviceId: string; alert: Alert }) => Promise<void>;
}

export interface RecordOptions {
  dedupe?: boolean;
  channels?: { email: boolean; sms: boolean };
  /** the alert rule that raises it: only its own alert at that time is a repeat */
  rule?: string;
  /** that rule's name: the e-mail and SMS say which rule fired */
  ruleName?: string;
}

/** Records the alerts the ingest raises (see the file's comment). */
export interface AlertRecorder {
  /**
   * Stores the alert, plans and starts its notifications (on `channels` only, when given: an alert
   * rule's), announces it; with `dedupe`, answers the one already stored (same device, time, name
   * and `rule`: the alert rule that raises it, if one does) instead.
   */
  record(device: DeviceRecord, input: AlertInput, options?: RecordOptions): Promise<Alert>;
}

export function createAlertRecorder(deps: AlertRecorderDeps): AlertRecorder {
  const { db, clock, events } = deps;

  async function record(device: DeviceRecord, input: AlertInput, options: RecordOptions = {}): Promise<Alert> {
    const now = clock.now();
    const dateTime = input.dateTime ? new Date(input.dateTime).getTime() : now.getTime();
    // Raised without a position (an SOS button, a frame without a fix): where the device last was,
    // read before the notification is planned so that the message names it too.
    const at = input.latitude == null && input.longitude == null ? await lastPosition(db, device.id) : undefined;
    const row = {
      deviceId: device.id,
      dateTime,
      alertName: input.alertName,
      latitude: at?.latitude ?? input.latitude ?? null,
      longitude: at?.longitude ?? input.longitude ?? null,
      text: input.text ?? null,
      alerts: input.alerts ?? [input.alertName],
      createdAt: now.getTime(),
      ruleId: options.rule ?? null,
    };
    // A tracker that resends an unacknowledged alarm frame must not raise the alert twice; checked
    // here before anything is reserved, and again in the transaction.
    if (options.dedupe) {
      const same = await alerts.findSame(db, device.id, dateTime, input.alertName, row.ruleId, row.text);
      if (same) return same;
    }
    const planned: PlannedAlert = {
      ...row,
      ...(options.channels && { channels: options.channels }),
      ...(options.ruleName !== undefined && { ruleName: options.ruleName }),
    };
    const plan = deps.notifier ? await deps.notifier.plan(device, planned) : undefined;
    let duplicate = false;
    const alert = await db
      .transaction(async (trx) => {
        const same = options.dedupe
          ? await alerts.findSame(trx, device.id, dateTime, input.alertName, row.ruleId, row.text)
          : undefined;
        if (same) {
          duplicate = true;
          return same;
        }
        const stored = await alerts.insert(trx, {
          ...row,
          notifications: plan?.notifications ?? [],
          suppressed: plan?.suppressed ?? {},
        });
        await plan?.write(trx, stored.id);
        await deps.afterInsert?.(trx, { accountId: device.accountId, deviceId: device.id, alert: stored });
        return stored;
      })
      .catch(async (e: unknown) => {
        // The transaction failed after places in the daily count were reserved: give them back.
        await plan?.undo();
        throw e;
      });
    if (duplicate) {
      await plan?.undo();
      return alert;
    }
    if (plan) deps.notifier?.kick();
    events.alertStored({ accountId: device.accountId, deviceId: device.id, alert });
    return alert;
  }

  return { record };
}
