/**
 * The one path tracker data takes into the core (TCP, UDP, OsmAnd HTTP and MQTT alike):
 * reports go through INGEST_STEPS, locations are written with group commit (every submission
 * that arrives while a write is running joins the next transaction), alarms become alerts
 * through the same alert path as REST. `submit` resolves only once everything is committed, so
 * a caller acknowledges only what is durable; it rejects when the write failed.
 *
 * One sender's bad data must not cost the others their acknowledgement: each submission is
 * serialised before it joins a batch (a value JSON cannot hold fails only its sender), and a batch
 * the database refuses for what a row carries is retried in halves until the refused submission
 * stands alone.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import type { DeviceRecord } from '../model/device.js';
import type { PositionReport } from '../model/report.js';
import type { LocationInput } from '../model/location.js';
import type { AlertsService, AlertInput } from '../alerts/alerts.service.js';
import { firstLocationProblem, normaliseLocation } from '../locations/locations.service.js';
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
        await write(batch);
      }
    } finally {
      flushing = false;
    }
  }

  /** One transaction for the batch; when the database refuses a row, each half on its own. */
  async function write(batch: Pending[]): Promise<void> {
    let written: locations.LocationRow[];
    try {
      written = await db.transaction((trx) => locations.insertMany(trx, batch.flatMap((p) => p.rows)));
    } catch (e) {
      if (batch.length > 1 && locations.isRefusedRow(e)) {
        const half = Math.ceil(batch.length / 2);
        await write(batch.slice(0, half));
        await write(batch.slice(half));
        return;
      }
      const devices = [...new Set(batch.map((p) => p.device.id))];
      logger.error({ err: e, rows: batch.reduce((n, p) => n + p.rows.length, 0), devices: devices.slice(0, 20) }, 'storing a batch of locations failed; nothing of it is acknowledged');
      for (const p of batch) p.reject(e);
      return;
    }
    for (const p of batch) p.resolve();
    const accountOf = new Map(batch.map((p) => [p.device.id, p.device.accountId]));
    events.locationsStored(written.map((r) => ({ accountId: accountOf.get(r.deviceId)!, deviceId: r.deviceId, location: r.location })));
  }

  function commit(device: DeviceRecord, rows: locations.LocationRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    try {
      // Serialised here, outside the shared transaction: a value JSON cannot hold fails only its sender.
      for (const r of rows) r.json = locations.storedJson(r.location);
    } catch (e) {
      logger.warn({ err: e, deviceId: device.id }, 'a location cannot be serialised; it is not stored');
      return Promise.reject(e);
    }
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
      if (d.refused) dropped.push(d.refused);
      if (d.location) rows.push({ deviceId: device.id, dateTime: d.fixTime.getTime(), serverTime: receivedAt.getTime(), location: d.location });
      alerts.push(...d.alerts);
    }
    if (dropped.length) logger.warn({ deviceId: device.id, protocol, dropped }, 'positions that fail the checks are not stored');
    await commit(device, rows);
    await raise(device, alerts);
    return { locations: rows.length, alerts: alerts.length, dropped };
  }

  /**
   * Locations already in the REST shape (MQTT `devices/{id}/locations`), group-committed. They
   * pass the same checks as REST; when one fails, nothing of the message is stored (resolves 0:
   * the message is acknowledged and refused, as a malformed one is).
   */
  async function submitLocations(device: DeviceRecord, protocol: string, inputs: LocationInput[]): Promise<number> {
    const now = clock.now();
    const problem = firstLocationProblem(inputs, now.getTime(), 'locations');
    if (problem) {
      logger.warn({ deviceId: device.id, protocol, field: problem.field, reason: problem.message }, 'locations refused: they fail the checks');
      return 0;
    }
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
