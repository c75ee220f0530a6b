/**
 * The one path into the core for everything a device or a client reports (TCP, UDP, OsmAnd HTTP,
 * MQTT, OwnTracks and REST alike): reports go through INGEST_STEPS, locations are written with
 * group commit (every submission that arrives while a write is running joins the next
 * transaction; a batch is written at the end of the event loop's turn, or at once when it is
 * full), then alerts are recorded. What waits for the commit is the rows, not the reports.
 * `submit` resolves only once everything is committed, so a caller acknowledges only what is
 * durable; it rejects when the write failed. Submissions are written in the order they arrive: of
 * two with the same device and fix time, the later is stored. A gateway process runs the steps
 * itself (ingest.steps.ts prepareReports) and sends rows with their JSON made: `store` writes them
 * in the same group commit, and their locations are parsed only for a listener that reads them.
 * On PostgreSQL two transactions run at a time, of different devices (a device's rows wait while
 * a transaction with its rows runs), so that the next batch is gathered and sent while the
 * database writes one; SQLite has one writer.
 *
 * One sender's bad data must not cost the others their acknowledgement: each submission is
 * serialised before it joins a batch (a value JSON cannot hold fails only its sender), and a batch
 * the database refuses for what a row carries is retried in halves until the refused submission
 * stands alone.
 */
import { describeStorageError, isStorageUnavailable } from '../db/storage-errors.js';
import type { Knex } from 'knex';
import { dbKind, type Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus, StoredLocation } from '../events/event-bus.js';
import type { DeviceRecord } from '../model/device.js';
import type { Report } from '../model/report.js';
import type { Location } from '../model/location.js';
import type { Alert, AlertInput } from '../model/alert.js';
import type { AlertRecorder } from '../alerts/alert.recorder.js';
import type { IngestCounts } from '../metrics/counts.js';
import * as locations from '../locations/locations.repository.js';
import { prepareReports, warnDropped, type Prepared } from './ingest.steps.js';
import { storedJson } from '../model/location.js';

/** rows per group-commit transaction at most, unless IngestDeps.maxBatchRows says otherwise */
export const DEFAULT_MAX_BATCH_ROWS = 2000;

export interface IngestDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
  alerts: AlertRecorder;
  logger: Logger;
  /** rows per transaction at most */
  maxBatchRows?: number;
  /**
   * transactions at a time (default: 1 on SQLite, its one writer; 2 on PostgreSQL, so that one
   * batch is written while the next is gathered and sent)
   */
  writers?: number;
  /**
   * Called inside the batch's transaction once its locations are written (the forwards' journal,
   * core/forward/): what it writes commits, or fails, with them.
   */
  afterWrite?: (trx: Knex.Transaction, written: readonly { deviceId: string; location: Location; json?: string }[], accountOf: (deviceId: string) => string) => Promise<void>;
  /** positions stored and rows per transaction, for GET /metrics; absent: metrics are off */
  counts?: IngestCounts;
  /**
   * Asked after each commit: an error when what it wrote is lost (SQLite: the database file was
   * deleted meanwhile, core/db/storage.watch.ts); the batch then fails as storage refusing it did.
   */
  fileLost?: () => Error | undefined;
}

export interface SubmitOptions {
  /**
   * A client's message (a REST request, an MQTT message in the REST shape) is one unit: when a
   * position in it fails the checks, nothing of it is stored and `refused` names the first. A
   * tracker's reports each stand alone: a position that fails is dropped and logged.
   */
  allOrNothing?: boolean;
  /**
   * Default true: a tracker or an MQTT client resends what was not acknowledged, so an alert
   * already stored (same device, time and name) is not raised again. REST answers every request,
   * so it raises every one.
   */
  dedupeAlerts?: boolean;
}

export interface IngestResult {
  /** the locations written, in the order given: new fixes and corrections (an identical resend is not written again) */
  locations: Location[];
  /** the alerts raised (for a resend, the one already stored) */
  alerts: Alert[];
  /** why positions were not stored */
  dropped: string[];
  /** allOrNothing: the position that failed the checks (its index and field); nothing was stored */
  refused?: { index: number; field: string; message: string };
}

interface Pending {
  device: DeviceRecord;
  protocol: string;
  rows: locations.LocationRow[];
  resolve: (written: locations.LocationRow[]) => void;
  reject: (e: unknown) => void;
}

/** The one way into the core for reports (see the file's comment). */
export interface IngestService {
  /** Reports of a device already resolved: steps, group-committed locations, then alerts; resolves once all is committed, rejects when the write failed. */
  submit(device: DeviceRecord, protocol: string, reports: readonly Report[], options?: SubmitOptions): Promise<IngestResult>;
  /**
   * Rows a gateway process prepared (ingest.steps.ts prepareReports, each row's JSON made there)
   * and the alerts they raise: written as they came, in the same group commit; resolves once
   * committed and the alerts recorded (deduplicated, as for every tracker).
   */
  store(device: DeviceRecord, protocol: string, rows: locations.LocationRow[], alerts: readonly AlertInput[]): Promise<void>;
  /**
   * Why storage refused the last write of locations (a full disk, a read-only file system), when
   * no write succeeded since and it was less than WRITES_FAILING_MS ago; else undefined (GET /api/health).
   */
  writesFailing(): string | undefined;
  /**
   * Resolves once every submission made so far is committed (its alerts recorded) or has failed,
   * or after `timeoutMs`: whether it was all done. A stop waits for it before it closes the
   * database, which would otherwise fail the commits still running (and log them as failed).
   */
  drain(timeoutMs: number): Promise<boolean>;
}

/** how long a refused write of locations is reported by writesFailing() when none follows */
export const WRITES_FAILING_MS = 60_000;

export function createIngestService(deps: IngestDeps): IngestService {
  const { db, clock, events, logger } = deps;
  const maxBatchRows = deps.maxBatchRows ?? DEFAULT_MAX_BATCH_ROWS;
  const writers = deps.writers ?? (dbKind(db) === 'postgres' ? 2 : 1);
  let queue: Pending[] = [];
  /** rows in `queue` */
  let queuedRows = 0;
  let running = 0;
  let scheduled = false;
  /** devices with rows in a transaction still running: their next rows wait for it (one device's rows are written in order) */
  const busy = new Set<string>();
  /** submissions not yet committed (with their alerts) or failed, and who waits for there to be none */
  let unsettled = 0;
  const drained: (() => void)[] = [];
  const settled = () => {
    if (--unsettled === 0) drained.splice(0).forEach((fn) => fn());
  };

  /**
   * Starts transactions while fewer than `writers` run: each takes, in arrival order, what is
   * queued (up to maxBatchRows rows) of devices not in a running transaction; a device's rows after
   * one that waits also wait. With one writer (SQLite) a batch is what is queued, in order.
   */
  function pump(): void {
    while (running < writers && queue.length) {
      const batch: Pending[] = [];
      const rest: Pending[] = [];
      const held = new Set<string>();
      let count = 0;
      let i = 0;
      for (; i < queue.length; i++) {
        const p = queue[i];
        if (batch.length > 0 && count + p.rows.length > maxBatchRows) break;
        const id = p.device.id;
        if (busy.has(id) || held.has(id)) {
          held.add(id);
          rest.push(p);
          continue;
        }
        batch.push(p);
        count += p.rows.length;
      }
      for (; i < queue.length; i++) rest.push(queue[i]);
      if (batch.length === 0) return;
      queue = rest;
      queuedRows -= count;
      const devices = [...new Set(batch.map((p) => p.device.id))];
      for (const id of devices) busy.add(id);
      running++;
      void write(batch).finally(() => {
        running--;
        for (const id of devices) busy.delete(id);
        pump();
      });
    }
  }

  /** the last write storage refused, until one succeeds */
  let refused: { at: number; message: string } | undefined;

  /** One transaction for the batch; when the database refuses a row, each half on its own. */
  async function write(batch: Pending[]): Promise<void> {
    let written: locations.LocationRow[];
    const accountOf = new Map(batch.map((p) => [p.device.id, p.device.accountId]));
    try {
      written = await db.transaction(async (trx) => {
        const rows = await locations.insertMany(trx, batch.flatMap((p) => p.rows));
        // the rows as they are: the hook maps only those it keeps (none while no account forwards)
        await deps.afterWrite?.(trx, rows, (deviceId) => accountOf.get(deviceId)!);
        return rows;
      });
      const lost = deps.fileLost?.();
      if (lost) throw lost;
    } catch (e) {
      if (batch.length > 1 && locations.isRefusedRow(e)) {
        const half = Math.ceil(batch.length / 2);
        await write(batch.slice(0, half));
        await write(batch.slice(half));
        return;
      }
      if (isStorageUnavailable(e)) refused = { at: Date.now(), message: describeStorageError(e) };
      const devices = [...new Set(batch.map((p) => p.device.id))];
      logger.error({ err: e, rows: batch.reduce((n, p) => n + p.rows.length, 0), devices: devices.slice(0, 20) }, 'storing a batch of locations failed; nothing of it is acknowledged');
      for (const p of batch) p.reject(e);
      return;
    }
    refused = undefined;
    const rows = batch.reduce((n, p) => n + p.rows.length, 0);
    deps.counts?.committed(rows);
    // Usually every row was written (no identical resends): no need to look each one up.
    const stored = written.length === rows ? undefined : new Set(written);
    for (const p of batch) {
      const mine = stored ? p.rows.filter((r) => stored.has(r)) : p.rows;
      deps.counts?.stored(p.protocol, mine.length);
      p.resolve(mine);
    }
    // the location read only by a listener that wants it: a serialised row is parsed only then
    events.locationsStored(written.map((r) => new StoredRow(accountOf.get(r.deviceId)!, r)));
  }

  /** Resolves with the rows written once they are committed. */
  function commit(device: DeviceRecord, protocol: string, rows: locations.LocationRow[]): Promise<locations.LocationRow[]> {
    if (rows.length === 0) return Promise.resolve([]);
    try {
      // Serialised here, outside the shared transaction: a value JSON cannot hold fails only its sender.
      for (const r of rows) r.json ??= storedJson(r.location);
    } catch (e) {
      logger.warn({ err: e, deviceId: device.id }, 'a location cannot be serialised; it is not stored');
      return Promise.reject(e);
    }
    return new Promise<locations.LocationRow[]>((resolve, reject) => {
      queue.push({ device, protocol, rows, resolve, reject });
      queuedRows += rows.length;
      if (running >= writers) return;
      // A full batch is written at once: thousands of trackers' frames can be read in one turn of
      // the event loop, and what waits for the end of the turn stays in memory until then.
      if (queuedRows >= maxBatchRows) pump();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          pump();
        });
      }
    });
  }

  async function raise(device: DeviceRecord, alerts: readonly AlertInput[], dedupe: boolean): Promise<Alert[]> {
    const raised: Alert[] = [];
    for (const a of alerts) raised.push(await deps.alerts.record(device, a, { dedupe }));
    return raised;
  }

  /**
   * Not an async function: the reports are turned into rows at once, and what waits for the
   * commit holds the rows, not the reports (an async function keeps its parameters reachable
   * until it returns, and thousands of submissions wait for each group commit).
   */
  function submit(device: DeviceRecord, protocol: string, reports: readonly Report[], options: SubmitOptions = {}): Promise<IngestResult> {
    let prepared: Prepared | IngestResult;
    try {
      prepared = prepare(device, protocol, reports, options);
    } catch (e) {
      return Promise.reject(e);
    }
    return 'rows' in prepared ? finish(device, protocol, prepared, options.dedupeAlerts ?? true) : Promise.resolve(prepared);
  }

  /** The reports through the steps: rows to write and alerts to raise, or (allOrNothing) the refusal. */
  function prepare(device: DeviceRecord, protocol: string, reports: readonly Report[], options: SubmitOptions): Prepared | IngestResult {
    const p = prepareReports(device.id, protocol, reports, clock.now(), options.allOrNothing);
    if ('refused' in p) return { locations: [], alerts: [], dropped: [p.why], refused: p.refused };
    warnDropped(logger, device.id, protocol, p.dropped);
    return p;
  }

  async function finish(device: DeviceRecord, protocol: string, p: Prepared, dedupeAlerts: boolean): Promise<IngestResult> {
    unsettled++;
    try {
      const written = await commit(device, protocol, p.rows);
      return { locations: written.map((r) => r.location), alerts: p.alerts.length ? await raise(device, p.alerts, dedupeAlerts) : [], dropped: p.dropped };
    } finally {
      settled();
    }
  }

  function store(device: DeviceRecord, protocol: string, rows: locations.LocationRow[], alerts: readonly AlertInput[]): Promise<void> {
    unsettled++;
    return commit(device, protocol, rows)
      .then(() => (alerts.length ? raise(device, alerts, true).then(() => undefined) : undefined))
      .finally(settled);
  }

  function writesFailing(): string | undefined {
    return refused && Date.now() - refused.at < WRITES_FAILING_MS ? refused.message : undefined;
  }

  function drain(timeoutMs: number): Promise<boolean> {
    if (unsettled === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      drained.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  return { submit, store, writesFailing, drain };
}

/**
 * A written row as the listeners of stored locations see it: the location is read (a serialised
 * row parsed) only when a listener asks. A class, not an object literal with a getter: a literal
 * makes a closure and its own accessor per row, about 0.9 µs each where this takes 0.07 µs.
 */
class StoredRow implements StoredLocation {
  readonly deviceId: string;
  constructor(
    readonly accountId: string,
    private readonly row: locations.LocationRow,
  ) {
    this.deviceId = row.deviceId;
  }
  get location(): Location {
    return this.row.location;
  }
  /** as the Redis relay sends it to the other instances */
  toJSON(): StoredLocation {
    return { accountId: this.accountId, deviceId: this.deviceId, location: this.location };
  }
}
