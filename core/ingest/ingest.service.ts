/**
 * The one path into the core for everything a device or a client reports, in two steps:
 * `prepare` (ingest.steps.ts: checked rows and their alerts, pure, no storage) and `commit` (the
 * group commit, group-commit.ts: write, journal the forwards' events, announce). `submit` does
 * both in this process. A gateway process prepares itself; the core holds what the link brings to
 * prepared.checks.ts (the link is not trusted to have run the steps) and then commits it.
 * Both resolve once all is committed and reject if the write failed: callers acknowledge only what is durable.
 */
import type { Db } from '../db/db.js';
import { dbKind } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import type { DeviceRecord } from '../model/device.js';
import type { Report } from '../model/report.js';
import type { Location } from '../model/location.js';
import type { Alert, AlertInput } from '../model/alert.js';
import type { AlertRecorder } from '../alerts/alert.recorder.js';
import type { IngestCounts } from '../metrics/counts.js';
import type { LocationRow } from '../locations/locations.repository.js';
import { prepareReports, warnDropped, type Prepared } from './ingest.steps.js';
import { GroupCommit, type AfterWrite } from './group-commit.js';

export { WRITES_FAILING_MS } from './group-commit.js';

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
  afterWrite?: AfterWrite;
  /** positions stored and rows per transaction, for GET /metrics; absent: metrics are off */
  counts?: IngestCounts;
  /**
   * Asked after each commit: an error when what it wrote is lost (SQLite: the database file was
   * deleted meanwhile, core/db/storage.watch.ts); the batch then fails as storage refusing it did.
   */
  fileLost?: () => Error | undefined;
}

export interface CommitOptions {
  /**
   * Default true: a tracker or an MQTT client resends what was not acknowledged, so an alert
   * already stored (same device, time and name) is not raised again. REST answers every request,
   * so it raises every one.
   */
  dedupeAlerts?: boolean;
}

export interface SubmitOptions extends CommitOptions {
  /**
   * A client's message (a REST request, an MQTT message in the REST shape) is one unit: when a
   * position in it fails the checks, nothing of it is stored and `refused` names the first. A
   * tracker's reports each stand alone: a position that fails is dropped and logged.
   */
  allOrNothing?: boolean;
}

/**
 * What `commit` takes: rows that passed the checks (prepareReports here or in a gateway process,
 * then prepared.checks.ts for what the link brings) and the alerts they raise.
 */
export interface Checked {
  rows: LocationRow[];
  alerts: readonly AlertInput[];
}

export interface Committed {
  /** the rows written, in the order given (an identical resend is not written again); a serialised row is not parsed */
  rows: LocationRow[];
  /** the alerts raised (for a resend, the one already stored) */
  alerts: Alert[];
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

/** The one way into the core for reports (see the file's comment). */
export interface IngestService {
  /** Reports of a device already resolved: prepared here, then committed; resolves once all is committed, rejects when the write failed. */
  submit(
    device: DeviceRecord,
    protocol: string,
    reports: readonly Report[],
    options?: SubmitOptions,
  ): Promise<IngestResult>;
  /**
   * Checked rows (each row's JSON made already, or made here) and the alerts they raise: written
   * in the group commit; resolves once committed and the alerts recorded.
   */
  commit(device: DeviceRecord, protocol: string, checked: Checked, options?: CommitOptions): Promise<Committed>;
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

export function createIngestService(deps: IngestDeps): IngestService {
  const { db, clock, logger } = deps;
  const writer = new GroupCommit({
    ...deps,
    maxBatchRows: deps.maxBatchRows ?? DEFAULT_MAX_BATCH_ROWS,
    writers: deps.writers ?? (dbKind(db) === 'postgres' ? 2 : 1),
  });
  const unsettled = new Unsettled();

  async function raise(device: DeviceRecord, alerts: readonly AlertInput[], dedupe: boolean): Promise<Alert[]> {
    const raised: Alert[] = [];
    for (const a of alerts) raised.push(await deps.alerts.record(device, a, { dedupe }));
    return raised;
  }

  function commit(
    device: DeviceRecord,
    protocol: string,
    checked: Checked,
    options: CommitOptions = {},
  ): Promise<Committed> {
    const { alerts } = checked;
    const dedupe = options.dedupeAlerts ?? true;
    unsettled.add();
    return writer
      .add(device, protocol, checked.rows)
      .then(async (rows) => ({ rows, alerts: alerts.length ? await raise(device, alerts, dedupe) : [] }))
      .finally(unsettled.settled);
  }

  /** The reports through the steps: rows to write and alerts to raise, or (allOrNothing) the refusal. */
  function prepare(
    device: DeviceRecord,
    protocol: string,
    reports: readonly Report[],
    options: SubmitOptions,
  ): Prepared | IngestResult {
    const p = prepareReports(device.id, protocol, reports, clock.now(), options.allOrNothing);
    if ('refused' in p) return { locations: [], alerts: [], dropped: [p.why], refused: p.refused };
    warnDropped(logger, device.id, protocol, p.dropped);
    return p;
  }

  /**
   * Not an async function: the reports are turned into rows at once, and what waits for the
   * commit holds the rows, not the reports (an async function keeps its parameters reachable
   * until it returns, and thousands of submissions wait for each group commit).
   */
  function submit(
    device: DeviceRecord,
    protocol: string,
    reports: readonly Report[],
    options: SubmitOptions = {},
  ): Promise<IngestResult> {
    let prepared: Prepared | IngestResult;
    try {
      prepared = prepare(device, protocol, reports, options);
    } catch (e) {
      return Promise.reject(e);
    }
    if (!('rows' in prepared)) return Promise.resolve(prepared);
    const { dropped } = prepared;
    return commit(device, protocol, prepared, options).then((c) => ({
      locations: c.rows.map((r) => r.location),
      alerts: c.alerts,
      dropped,
    }));
  }

  return {
    submit,
    commit,
    writesFailing: () => writer.writesFailing(),
    drain: (timeoutMs) => unsettled.drain(timeoutMs),
  };
}

/** Commits not yet done (with their alerts) or failed, and who waits for there to be none. */
class Unsettled {
  private count = 0;
  private readonly waiting: (() => void)[] = [];

  add(): void {
    this.count++;
  }

  readonly settled = (): void => {
    if (--this.count === 0) this.waiting.splice(0).forEach((fn) => fn());
  };

  drain(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiting.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
