import type { Knex } from 'knex';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Principal } from '../model/user.js';
import type { Alert } from '../model/alert.js';
import type { DeviceRecord } from '../model/device.js';
import { assertVisibleDevice, requirePrivilege, visibleDevice } from '../access/access.js';
import type { EventBus } from '../events/event-bus.js';
import { decodeCursor, encodeCursor, rangeBounds, type TimeRange } from '../paging.js';
import * as alerts from './alerts.repository.js';
import { lastPosition } from '../locations/locations.repository.js';

export interface AlertInput {
  dateTime?: string;
  latitude?: number | null;
  longitude?: number | null;
  text?: string | null;
  alertName: string;
  alerts?: string[];
}

/**
 * Decides, in the alert's own transaction, which channels will notify and why others will not;
 * the notification module provides it (durable outbox). Without it an alert is only stored.
 */
export interface AlertNotifier {
  plan(trx: Knex.Transaction, device: DeviceRecord, alert: Alert): Promise<Pick<Alert, 'notifications' | 'suppressed'> & { undo(): Promise<void> }>;
  /** after commit: deliver what was planned */
  kick(): void;
}

export interface AlertsDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
  notifier?: AlertNotifier;
}

export function createAlertsService(deps: AlertsDeps) {
  const { db, clock, events } = deps;

  /** The one path every alert takes, whatever raised it (REST, tracker frame, MQTT). */
  async function record(device: DeviceRecord, input: AlertInput, options: { dedupe?: boolean } = {}): Promise<Alert> {
    const now = clock.now();
    const dateTime = input.dateTime ? new Date(input.dateTime).getTime() : now.getTime();
    let duplicate = false;
    let undo: (() => Promise<void>) | undefined;
    const alert = await db.transaction(async (trx) => {
      // A tracker that resends an unacknowledged alarm frame must not raise the alert twice.
      const same = options.dedupe ? await alerts.findSame(trx, device.id, dateTime, input.alertName) : undefined;
      if (same) {
        duplicate = true;
        return same;
      }
      // Raised without a position (an SOS button, a frame without a fix): where the device last was.
      const at = input.latitude == null && input.longitude == null ? await lastPosition(trx, device.id) : undefined;
      const stored = await alerts.insert(trx, {
        deviceId: device.id,
        dateTime,
        alertName: input.alertName,
        latitude: at?.latitude ?? input.latitude ?? null,
        longitude: at?.longitude ?? input.longitude ?? null,
        text: input.text ?? null,
        alerts: input.alerts ?? [input.alertName],
        notifications: [],
        suppressed: {},
        createdAt: now.getTime(),
      });
      if (!deps.notifier) return stored;
      const planned = await deps.notifier.plan(trx, device, stored);
      undo = planned.undo;
      await alerts.setNotifications(trx, stored.id, planned.notifications, planned.suppressed);
      return { ...stored, notifications: planned.notifications, suppressed: planned.suppressed };
    }).catch(async (e: unknown) => {
      // The transaction failed after places in the daily count were reserved: give them back.
      await undo?.();
      throw e;
    });
    if (duplicate) return alert;
    deps.notifier?.kick();
    events.alertStored({ accountId: device.accountId, deviceId: device.id, alert });
    return alert;
  }

  async function raise(p: Principal, deviceId: string, input: AlertInput): Promise<Alert> {
    const device = await visibleDevice(db, p, deviceId);
    requirePrivilege(p, 'write');
    return record(device, input);
  }

  async function query(p: Principal, deviceId: string, r: TimeRange & { alertName?: string }): Promise<{ alerts: Alert[]; nextCursor: string | null }> {
    await assertVisibleDevice(db, p, deviceId);
    const { fromMs, toMs, limit } = rangeBounds(r);
    const c = r.cursor ? decodeCursor(r.cursor) : undefined;
    const page = await alerts.range(db, { deviceId, fromMs, toMs, alertName: r.alertName, after: c ? { dateTime: c.t, id: c.id ?? 0 } : undefined, limit });
    const lastAlert = page.alerts[page.alerts.length - 1];
    return {
      alerts: page.alerts,
      nextCursor: page.more && lastAlert ? encodeCursor({ t: new Date(lastAlert.dateTime).getTime(), id: lastAlert.id }) : null,
    };
  }

  return { record, raise, query };
}

export type AlertsService = ReturnType<typeof createAlertsService>;
