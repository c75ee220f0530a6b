/**
 * What the busy paths count (a tracker frame, a stored position, an MQTT publish, a REST request):
 * plain numbers in objects made once, read by metrics.ts only when Prometheus scrapes. Counting
 * here allocates nothing and hashes no label set (prom-client's `inc` and `observe` build a label
 * hash on every call, bound children included), so a frame costs a few additions.
 *
 * Durations are measured with performance.now(): a monotonic clock for intervals, not the wall
 * clock the injected Clock stands for (a test clock must not make a latency negative).
 */

/** Seconds from a tracker frame's arrival to its acknowledgement written: group commit takes milliseconds. */
export const ACK_SECONDS_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** Rows per group-commit transaction: 1 on a quiet gateway, up to the ingest's 2,000 under load. */
export const BATCH_ROWS_BUCKETS: readonly number[] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000];
/** Seconds per REST request, as Prometheus client libraries default to. */
export const REQUEST_SECONDS_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Milliseconds on a monotonic clock: a start for `Buckets.observeSince`. */
export const monotonicMs = (): number => performance.now();

/** Observations sorted into fixed buckets (Prometheus `le` upper bounds), with their sum and count. */
export class Buckets {
  /** counts[i]: observations in (bounds[i-1], bounds[i]]; the last: above every bound */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }

  /** Observes the seconds since `startMs` (from monotonicMs). */
  observeSince(startMs: number): void {
    this.observe((performance.now() - startMs) / 1000);
  }
}

/** A count per label value, for a label with few values (a protocol, an MQTT topic kind). */
export class CountsBy {
  readonly values = new Map<string, number>();

  add(label: string, n = 1): void {
    this.values.set(label, (this.values.get(label) ?? 0) + n);
  }
}

/** What a gateway process reports of one protocol's listeners (its totals since it started), to the core that answers GET /metrics. */
export interface TrackerSnapshot {
  decoded: number;
  malformed: number;
  unknown: number;
  connections: number;
  ack: { counts: number[]; sum: number; count: number };
  /** absent from a process of an older version */
  identifyTimeouts?: number;
  refused?: Record<string, number>;
}

/** Why a tracker listener closed a new connection at once (TrackerCounts.refused). */
export const REFUSAL_REASONS = ['descriptor_limit', 'core_unreachable'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** One tracker protocol's listeners (TCP, UDP and HTTP alike). */
export class TrackerCounts {
  /** frames decoded: stored, with nothing to store, or not acknowledged because storage failed */
  decoded = 0;
  /** frames that could not be decoded (framing or content), for the device's model too */
  malformed = 0;
  /** frames decoded whose identity is no live device (unknown, expired, impossible): not stored */
  unknown = 0;
  /** open TCP connections */
  connections = 0;
  /** seconds from a frame's arrival (its bytes read) to its acknowledgement written */
  readonly ackSeconds = new Buckets(ACK_SECONDS_BUCKETS);
  /** connections closed for naming no known device within TRACKGATE_IDENTIFY_TIMEOUT */
  identifyTimeouts = 0;
  /** new connections closed at once, by reason */
  readonly refused = new CountsBy();

  frameDecoded(): void {
    this.decoded++;
  }

  frameMalformed(): void {
    this.malformed++;
  }

  frameOfUnknown(): void {
    this.unknown++;
  }

  connected(): void {
    this.connections++;
  }

  disconnected(): void {
    this.connections--;
  }

  identifyTimedOut(): void {
    this.identifyTimeouts++;
  }

  refusedConnection(reason: RefusalReason): void {
    this.refused.add(reason);
  }

  /** The acknowledgement of a frame that arrived at `arrivedAtMs` (monotonicMs) is written. */
  acknowledged(arrivedAtMs: number): void {
    this.ackSeconds.observeSince(arrivedAtMs);
  }

  snapshot(): TrackerSnapshot {
    return {
      decoded: this.decoded,
      malformed: this.malformed,
      unknown: this.unknown,
      connections: this.connections,
      ack: { counts: [...this.ackSeconds.counts], sum: this.ackSeconds.sum, count: this.ackSeconds.count },
      identifyTimeouts: this.identifyTimeouts,
      refused: Object.fromEntries(this.refused.values),
    };
  }

  /** Adds another process's counts (a sum for one scrape); `connections: false` for a process gone (its counts stay, its connections do not). */
  add(s: TrackerSnapshot | TrackerCounts, connections = true): void {
    const o = s instanceof TrackerCounts ? s.snapshot() : s;
    this.decoded += o.decoded;
    this.malformed += o.malformed;
    this.unknown += o.unknown;
    if (connections) this.connections += o.connections;
    const n = Math.min(this.ackSeconds.counts.length, o.ack.counts.length);
    for (let i = 0; i < n; i++) this.ackSeconds.counts[i] += o.ack.counts[i];
    this.ackSeconds.sum += o.ack.sum;
    this.ackSeconds.count += o.ack.count;
    this.identifyTimeouts += o.identifyTimeouts ?? 0;
    for (const [reason, n] of Object.entries(o.refused ?? {})) this.refused.add(reason, n);
  }
}

/** The ingest: positions stored, and its group commit's transactions. */
export class IngestCounts {
  /** positions written, by protocol (a tracker protocol, `mqtt`, `owntracks`, `rest`) */
  readonly positions = new CountsBy();
  /** rows per committed transaction */
  readonly batchRows = new Buckets(BATCH_ROWS_BUCKETS);

  stored(protocol: string, positions: number): void {
    if (positions > 0) this.positions.add(protocol, positions);
  }

  committed(rows: number): void {
    this.batchRows.observe(rows);
  }
}

/** The MQTT broker: device publishes by topic kind. */
export class MqttCounts {
  /** publishes on a device's topics, by kind: locations, alerts, commandResults, owntracks, owntracks-other */
  readonly publishes = new CountsBy();

  published(topicKind: string): void {
    this.publishes.add(topicKind);
  }
}

/** One REST route and method: answers by status, and their durations. */
export class RouteCounts {
  readonly statuses = new Map<number, number>();
  readonly seconds = new Buckets(REQUEST_SECONDS_BUCKETS);

  answered(status: number, startMs: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    this.seconds.observeSince(startMs);
  }
}

/** the `route` of a REST request no route took (an unknown path, or a method the path does not take) */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * REST requests by route pattern (`/api/devices/:deviceId`, never the raw path: the label's values
 * are bounded by the routes there are) and method; a request no route took is `(unmatched)`.
 */
export class HttpCounts {
  /** route -> method -> counts */
  readonly routes = new Map<string, Map<string, RouteCounts>>();

  route(route: string, method: string): RouteCounts {
    let methods = this.routes.get(route);
    if (!methods) this.routes.set(route, (methods = new Map()));
    let counts = methods.get(method);
    if (!counts) methods.set(method, (counts = new RouteCounts()));
    return counts;
  }
}
