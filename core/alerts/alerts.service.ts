/**
 * Alerts over REST: raised through the one ingest path (which records them with
 * alert.recorder.ts), read by range.
 */
import type { Db } from '../db/db.js';
import type { Principal } from '../model/user.js';
import type { Alert, AlertInput } from '../model/alert.js';
import { assertVisibleDevice, requirePrivilege, visibleDevice } from '../access/access.js';
import type { ReportIntake } from '../model/report.js';
import { alertReport } from '../model/input.reports.js';
import { decodeCursor, encodeCursor, rangeBounds, type TimeRange } from '../paging.js';
import * as alerts from './alerts.repository.js';

export type { AlertInput };
export type { AlertNotifier, NotificationPlan, PlannedAlert } from './alert.recorder.js';

export interface AlertsDeps {
  db: Db;
  /** the one ingest path (core/ingest/ IngestService) */
  ingest: ReportIntake;
}

/** A device's alerts over REST. A device out of the caller's sight answers DEVICE_NOT_FOUND. */
export interface AlertsService {
  /** Raises an alert (write privilege) through the one ingest path, every request anew (no dedupe); answers it as stored. */
  raise(p: Principal, deviceId: string, input: AlertInput): Promise<Alert>;
  /** One page of a device's alerts in a time range (optionally of one name), and the cursor of the next page (null after the last). */
  query(
    p: Principal,
    deviceId: string,
    r: TimeRange & { alertName?: string },
  ): Promise<{ alerts: Alert[]; nextCursor: string | null }>;
}

export function createAlertsService(deps: AlertsDeps): AlertsService {
  const { db, ingest } = deps;

  async function raise(p: Principal, deviceId: string, input: AlertInput): Promise<Alert> {
    const device = await visibleDevice(db, p, deviceId);
    requirePrivilege(p, 'write');
    const result = await ingest.submit(device, 'rest', [alertReport(input)], { dedupeAlerts: false });
    return result.alerts[0];
  }

  async function query(
    p: Principal,
    deviceId: string,
    r: TimeRange & { alertName?: string },
  ): Promise<{ alerts: Alert[]; nextCursor: string | null }> {
    await assertVisibleDevice(db, p, deviceId);
    const { fromMs, toMs, limit } = rangeBounds(r);
    const c = r.cursor ? decodeCursor(r.cursor) : undefined;
    const page = await alerts.range(db, {
      deviceId,
      fromMs,
      toMs,
      alertName: r.alertName,
      after: c ? { dateTime: c.t, id: c.id ?? 0 } : undefined,
      limit,
    });
    const lastAlert = page.alerts[page.alerts.length - 1];
    return {
      alerts: page.alerts,
      nextCursor:
        page.more && lastAlert ? encodeCursor({ t: new Date(lastAlert.dateTime).getTime(), id: lastAlert.id }) : null,
    };
  }

  return { raise, query };
}
