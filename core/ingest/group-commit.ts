/**
 * The only writer of locations (ingest.service.ts `commit`): every submission that arrives while a
 * write is running joins the next transaction; a batch is written at the end of the event loop's
 * turn, or at once when it is full. Submissions are written in the order they arrive: of two with
 * the same device and fix time, the later is stored. On PostgreSQL two transactions run at a time,
 * of different devices (a device's rows wait while a transaction with its rows runs), so that the
 * next batch is gathered and sent while the database writes one; SQLite has one writer. A batch
 * the database refuses for what a row carries is retried in halves until the refused submission
 * stands alone.
 */
import { describeStorageError, isStorageUnavailable, isTransientConflict } from '../db/storage-errors.js';
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus, StoredLocation } from '../events/event-bus.js';
import type { DeviceRecord } from '../model/device.js';
import type { Location } from '../model/location.js';
import type { IngestCounts } from '../metrics/counts.js';
import * as locations from '../locations/locations.repository.js';
import { addDistances } from '../locations/distance.ledger.js';
import { markChanged } from '../locations/fix-marks.repository.js';
import { storedJson } from '../model/location.js';
import type { Knex } from 'knex';

/** how long a refused write of locations is reported by writesFailing() when none follows */
export const WRITES_FAILING_MS = 60_000;

/**
 * how many times a batch the database rolled back for a conflict with another transaction (a
 * deadlock, a serialization failure: PostgreSQL, between instances) is written again before its
 * submissions fail
 */
export const CONFLICT_ATTEMPTS = 5;

/**
 * Called inside the batch's transaction once its locations are written (the forwards' journal,
 * core/forward/): what it writes commits, or fails, with them.
 */
export type AfterWrite = (
  trx: Knex.Transaction,
  written: readonly { deviceId: string; location: Location; json?: string }[],
  accountOf: (deviceId: string) => string,
) => Promise<void>;

export interface GroupCommitDeps {
  db: Db;
  clock: Clock;
  events: EventBus;
  logger: Logger;
  maxBatchRows: number;
  writers: number;
  afterWrite?: AfterWrite;
  counts?: IngestCounts;
  fileLost?: () => Error | undefined;
}

interface Pending {
  device: DeviceRecord;
  protocol: string;
  rows: locations.LocationRow[];
  resolve: (written: locations.LocationRow[]) => void;
  reject: (e: unknown) => void;
}

export class GroupCommit {
  private queue: Pending[] = [];
  /** rows in `queue` */
  private queuedRows = 0;
  private running = 0;
  private scheduled = false;
  /** devices with rows in a transaction still running: their next rows wait for it (one device's rows are written in order) */
  private readonly busy = new Set<string>();
  /** the last write storage refused, until one succeeds */
  private refused: { at: number; message: string } | undefined;

  constructor(private readonly deps: GroupCommitDeps) {}

  /** Resolves with the rows written once they are committed; rejects when the write failed. */
  add(device: DeviceRecord, protocol: string, rows: locations.LocationRow[]): Promise<locations.LocationRow[]> {
    if (rows.length === 0) return Promise.resolve([]);
    try {
      // Serialised here, outside the shared transaction: a value JSON cannot hold fails only its sender.
      for (const r of rows) r.json ??= storedJson(r.location);
    } catch (e) {
      this.deps.logger.warn({ err: e, deviceId: device.id }, 'a location cannot be serialised; it is not stored');
      return Promise.reject(e);
    }
    return new Promise<locations.LocationRow[]>((resolve, reject) => {
      this.queue.push({ device, protocol, rows, resolve, reject });
      this.queuedRows += rows.length;
      if (this.running >= this.deps.writers) return;
      // A full batch is written at once: thousands of trackers' frames can be read in one turn of
      // the event loop, and what waits for the end of the turn stays in memory until then.
      if (this.queuedRows >= this.deps.maxBatchRows) this.pump();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  /** Why storage refused the last write, when none succeeded since and it was less than WRITES_FAILING_MS ago. */
  writesFailing(): string | undefined {
    const r = this.refused;
    return r && this.deps.clock.now().getTime() - r.at < WRITES_FAILING_MS ? r.message : undefined;
  }

  /** Starts transactions while fewer than `writers` run (takeBatch says what each writes). */
  private pump(): void {
    while (this.running < this.deps.writers && this.queue.length) {
      const batch = this.takeBatch();
      if (!batch) return;
      const devices = [...new Set(batch.map((p) => p.device.id))];
      for (const id of devices) this.busy.add(id);
      this.running++;
      void this.write(batch).finally(() => {
        this.running--;
        for (const id of devices) this.busy.delete(id);
        this.pump();
      });
    }
  }

  /**
   * In arrival order, what is queued (up to maxBatchRows rows) of devices not in a running
   * transaction; a device's rows after one that waits also wait. With one writer (SQLite) a batch
   * is what is queued, in order. Undefined when every queued device waits.
   */
  private takeBatch(): Pending[] | undefined {
    const queue = this.queue;
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const held = new Set<string>();
    let count = 0;
    let i = 0;
    for (; i < queue.length; i++) {
      const p = queue[i];
      if (batch.length > 0 && count + p.rows.length > this.deps.maxBatchRows) break;
      const id = p.device.id;
      if (this.busy.has(id) || held.has(id)) {
        held.add(id);
        rest.push(p);
        continue;
      }
      batch.push(p);
      count += p.rows.length;
    }
    for (; i < queue.length; i++) rest.push(queue[i]);
    if (batch.length === 0) return undefined;
    this.queue = rest;
    this.queuedRows -= count;
    return batch;
  }

  /**
   * One transaction for the batch; when the database refuses a row, each half on its own; when it
   * rolled the batch back for a conflict with another transaction, the batch again (it wrote nothing).
   */
  private async write(batch: Pending[]): Promise<void> {
    const { db, afterWrite, fileLost } = this.deps;
    let written: locations.LocationRow[];
    const accountOf = new Map(batch.map((p) => [p.device.id, p.device.accountId]));
    const transaction = () =>
      db.transaction(async (trx) => {
        const all = batch.flatMap((p) => p.rows);
        const late = await addDistances(trx, all);
        const rows = await locations.insertMany(trx, all);
        // the reports' cached days these fall in are computed again (core/reports/)
        await markChanged(trx, late);
        // the rows as they are: the hook maps only those it keeps (none while no account forwards)
        await afterWrite?.(trx, rows, (deviceId) => accountOf.get(deviceId)!);
        return rows;
      });
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          written = await transaction();
          break;
        } catch (e) {
          if (attempt >= CONFLICT_ATTEMPTS || !isTransientConflict(e)) throw e;
          this.deps.logger.warn(
            { err: e, attempt },
            'a batch of locations lost a conflict with another transaction; it is written again',
          );
        }
      }
      const lost = fileLost?.();
      if (lost) throw lost;
    } catch (e) {
      if (batch.length > 1 && locations.isRefusedRow(e)) {
        const half = Math.ceil(batch.length / 2);
        await this.write(batch.slice(0, half));
        await this.write(batch.slice(half));
        return;
      }
      this.failed(batch, e);
      return;
    }
    this.refused = undefined;
    this.settle(batch, written, accountOf);
  }

  private failed(batch: Pending[], e: unknown): void {
    if (isStorageUnavailable(e))
      this.refused = { at: this.deps.clock.now().getTime(), message: describeStorageError(e) };
    const devices = [...new Set(batch.map((p) => p.device.id))];
    this.deps.logger.error(
      { err: e, rows: batch.reduce((n, p) => n + p.rows.length, 0), devices: devices.slice(0, 20) },
      'storing a batch of locations failed; nothing of it is acknowledged',
    );
    for (const p of batch) p.reject(e);
  }

  /** Each submission gets the rows of it that were written; then they are announced. */
  private settle(batch: Pending[], written: locations.LocationRow[], accountOf: Map<string, string>): void {
    const { counts, events } = this.deps;
    const rows = batch.reduce((n, p) => n + p.rows.length, 0);
    counts?.committed(rows);
    // Usually every row was written (no identical resends): no need to look each one up.
    const stored = written.length === rows ? undefined : new Set(written);
    for (const p of batch) {
      const mine = stored ? p.rows.filter((r) => stored.has(r)) : p.rows;
      counts?.stored(p.protocol, mine.length);
      p.resolve(mine);
    }
    // the location read only by a listener that wants it: a serialised row is parsed only then
    events.locationsStored(written.map((r) => new StoredRow(accountOf.get(r.deviceId)!, r)));
  }
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
