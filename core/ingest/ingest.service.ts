/**
 * The one path tracker data takes into the core (TCP, UDP, OsmAnd HTTP and MQTT alike):
 * reports go through INGEST_STEPS, locations are written with group commit (every submission
 * that arrives while a write is running joins the next transaction), alarms become alerts
 * through the same alert path as REST. `submit` resolves only once everything is committed, so
 * a caller acknowledges only what is durable; it rejects when the write failed.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import type { DeviceRecord } from '../model/device.js';
import type { PositionReport } from '../model/report.js';
import type { Location } from '../model/location.js';
import type { AlertsService, AlertInput } from '../alerts/alerts.service.js';
import { normaliseLocation } from '../locations/locations.service.js';
import * as locations from '../locations/locations.repository.js';
import { runSteps } from './ingest.steps.js';

export interface IngestDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
  alerts: AlertsService;
  logger: Logger;
  /** rows per transaction at most */
  maxBatchRows?: number;
}

export interface IngestResult {
  locations: number;
  alerts: number;
  dropped: string[];
}

interface Pending {
  device: DeviceRecord;
  rows: locations.LocationRow[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

export function createIngestService(deps: IngestDeps) {
  const { db, clock, events, logger } = deps;
  const maxBatchRows = deps.maxBatchRows ?? 2000;
  let queue: Pending[] = [];
  let flushing = false;
  let scheduled = false;

  async function flush(): Promise<void> {
    flushing = true;
    try {
      while (queue.length) {
        let count = 0;
        let take = 0;
        while (take < queue.length && (take === 0 || count + queue[take].rows.length <= maxBatchRows)) count += queue[take++].rows.length;
        const batch = queue.slice(0, take);
        queue = queue.slice(take);
        try {
          const inserted = await db.transaction((trx) => locations.insertMany(trx, batch.flatMap((p) => p.rows)));
          for (const p of batch) p.resolve();
          const accountOf = new Map(batch.map((p) => [p.device.id, p.device.accountId]));
          events.locationsStored(inserted.map((r) => ({ accountId: accountOf.get(r.deviceId)!, deviceId: r.deviceId, location: r.location })));
        } catch (e) {
          logger.error({ err: e, rows: count }, 'storing a batch of locations failed; nothing of it is acknowledged');
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      flushing = false;
    }
  }

  function commit(device: DeviceRecord, rows: locations.LocationRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      queue.push({ device, rows, resolve, reject });
      if (!flushing && !scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          void flush();
        });
      }
    });
  }

  async function raise(device: DeviceRecord, alerts: AlertInput[]): Promise<void> {
    for (const a of alerts) await deps.alerts.record(device, a, { dedupe: true });
  }

  /** Tracker reports (decoded frames, OwnTracks): steps, group-committed locations, then alerts. */
  async function submit(device: DeviceRecord, protocol: string, reports: PositionReport[]): Promise<IngestResult> {
    const receivedAt = clock.now();
    const serverTime = receivedAt.toISOString();
    const rows: locations.LocationRow[] = [];
    const alerts: AlertInput[] = [];
    const dropped: string[] = [];
    for (const report of reports) {
      const d = runSteps(report, protocol, receivedAt, serverTime);
      if (d.drop) {
        dropped.push(d.drop);
        continue;
      }
      if (d.location) rows.push({ deviceId: device.id, dateTime: d.fixTime.getTime(), serverTime: receivedAt.getTime(), location: d.location });
      alerts.push(...d.alerts);
    }
    await commit(device, rows);
    await raise(device, alerts);
    return { locations: rows.length, alerts: alerts.length, dropped };
  }

  /** Locations already in the REST shape (MQTT `devices/{id}/locations`), group-committed. */
  async function submitLocations(device: DeviceRecord, protocol: string, inputs: Location[]): Promise<number> {
    const now = clock.now();
    const serverTime = now.toISOString();
    const rows = inputs.map((i) => {
      const n = normaliseLocation(i, serverTime, protocol);
      return { deviceId: device.id, dateTime: n.dateTimeMs, serverTime: now.getTime(), location: n.location };
    });
    await commit(device, rows);
    return rows.length;
  }

  return { submit, submitLocations };
}

export type IngestService = ReturnType<typeof createIngestService>;
