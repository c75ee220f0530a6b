/**
 * `GET /metrics` in the Prometheus text format (exposition format 0.0.4), from the one Registry
 * main.ts makes. The only file that imports prom-client (.dependency-cruiser.cjs): every other
 * part counts its own in the plain objects of counts.ts, which this file reads at each scrape, or
 * hands this file a function to read (MQTT clients, the outbox backlog).
 *
 * Every name starts with `trackgate_` (docs/contract.md "Metrics"); docs/operations.md "Metrics" lists them.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import {
  type Buckets,
  HttpCounts,
  IngestCounts,
  MqttCounts,
  REFUSAL_REASONS,
  TrackerCounts,
  type TrackerSnapshot,
} from './counts.js';

export const PREFIX = 'trackgate_';

/** What is read when Prometheus scrapes, from parts started after the metrics. */
export interface ScrapeSources {
  /** MQTT clients connected now (aedes' count) */
  mqttClients?: () => number;
  /** what became of MQTT publishes so far, by outcome (accepted, rejected, ignored, refused, failed) */
  mqttOutcomes?: () => Readonly<Record<string, number>>;
  /** notifications waiting in the outbox (a cheap indexed count) */
  outboxPending?: () => Promise<number>;
  /** what the gateway processes (and edge gateways) last reported of their listeners, by protocol; `live: false` once one is gone */
  remoteTrackers?: () => Iterable<{ protocol: string; counts: TrackerSnapshot; live: boolean }>;
  /** free bytes on the database's file system now; undefined where unknown (PostgreSQL on another machine) */
  storageFreeBytes?: () => number | undefined;
  /** the database's size now (SQLite: file and -wal; PostgreSQL: pg_database_size) */
  storageDatabaseBytes?: () => Promise<number>;
}

export interface Metrics {
  /** The counts of one tracker protocol's listeners, made once per protocol. */
  tracker(protocol: string): TrackerCounts;
  readonly ingest: IngestCounts;
  readonly mqtt: MqttCounts;
  readonly http: HttpCounts;
  /** Adds what is read at each scrape. */
  readAtScrape(sources: ScrapeSources): void;
  /** The exposition: its Content-Type and text. */
  scrape(): Promise<{ contentType: string; text: string }>;
}

/**
 * A histogram whose observations are kept in Buckets (counts.ts): prom-client formats
 * it, the counting never goes through prom-client.
 */
class BucketsHistogram extends Histogram<string> {
  constructor(
    private readonly metricName: string,
    private readonly helpText: string,
    labelNames: string[],
    private readonly read: () => Iterable<[labels: Record<string, string>, buckets: Buckets]>,
  ) {
    super({ name: metricName, help: helpText, labelNames, registers: [] });
  }

  private values(): { labels: Record<string, string | number>; value: number; metricName: string }[] {
    const out: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const [labels, b] of this.read()) {
      let cumulative = 0;
      b.bounds.forEach((le, i) => {
        cumulative += b.counts[i];
        out.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.metricName}_bucket` });
      });
      out.push({ labels: { ...labels, le: '+Inf' }, value: b.count, metricName: `${this.metricName}_bucket` });
      out.push({ labels, value: b.sum, metricName: `${this.metricName}_sum` });
      out.push({ labels, value: b.count, metricName: `${this.metricName}_count` });
    }
    return out;
  }

  override async get(): ReturnType<Histogram<string>['get']> {
    return {
      name: this.metricName,
      help: this.helpText,
      type: 'histogram',
      aggregator: 'sum',
      values: this.values(),
    } as unknown as Awaited<ReturnType<Histogram<string>['get']>>;
  }

  /** what Registry.metrics() asks a histogram for (prom-client lib/registry.js) */
  async getForPromString(): ReturnType<Histogram<string>['get']> {
    return this.get();
  }
}

/**
 * The process's own metrics (CPU, memory, event loop lag, GC, handles), with the `trackgate_`
 * prefix: made once per process (they watch the process, and each set starts an event-loop monitor
 * and a GC observer that are never stopped), then registered in every registry (tests start many).
 */
let processMetrics: Metric[] | undefined;
function processMetricsOnce(): Metric[] {
  if (!processMetrics) {
    const r = new Registry();
    collectDefaultMetrics({ register: r, prefix: PREFIX });
    processMetrics = r.getMetricsAsArray() as unknown as Metric[];
  }
  return processMetrics;
}

type Labels = Record<string, string>;

/** What the metrics are read from at a scrape. */
interface Counted {
  /** this process's listeners and what the gateway processes reported, summed by protocol */
  trackers(): Map<string, TrackerCounts>;
  ingest: IngestCounts;
  mqtt: MqttCounts;
  http: HttpCounts;
  sources: ScrapeSources;
}

type Definition = { name: string; help: string; labels?: string[] } & (
  | {
      type: 'gauge' | 'counter';
      read: (c: Counted) => Iterable<[Labels, number]> | Promise<Iterable<[Labels, number]>>;
    }
  | { type: 'histogram'; read: (c: Counted) => Iterable<[Labels, Buckets]> }
);

const byProtocol = <T>(c: Counted, value: (t: TrackerCounts) => T): [Labels, T][] =>
  [...c.trackers()].map(([protocol, t]) => [{ protocol }, value(t)]);

/** Every metric (besides the process's own), in the order of the exposition; each name gets PREFIX. */
const DEFINITIONS: Definition[] = [
  {
    type: 'gauge',
    name: 'tracker_connections',
    help: 'Open tracker TCP connections, by protocol.',
    labels: ['protocol'],
    read: (c) => byProtocol(c, (t) => t.connections),
  },
  {
    type: 'counter',
    name: 'tracker_frames_total',
    help: 'Tracker frames (TCP, UDP datagrams, OsmAnd requests) by protocol and outcome: decoded, malformed (cannot be decoded), unknown (decoded; no live device has its identity, nothing stored).',
    labels: ['protocol', 'outcome'],
    read: (c) =>
      [...c.trackers()].flatMap(([protocol, t]): [Labels, number][] => [
        [{ protocol, outcome: 'decoded' }, t.decoded],
        [{ protocol, outcome: 'malformed' }, t.malformed],
        [{ protocol, outcome: 'unknown' }, t.unknown],
      ]),
  },
  {
    type: 'counter',
    name: 'tracker_identify_timeouts_total',
    help: 'Tracker connections closed for naming no known device within TRACKGATE_IDENTIFY_TIMEOUT seconds of opening (TCP; OsmAnd: no request of a known device), by protocol.',
    labels: ['protocol'],
    read: (c) => byProtocol(c, (t) => t.identifyTimeouts),
  },
  {
    type: 'counter',
    name: 'tracker_connections_refused_total',
    help: "New tracker connections closed at once, by protocol and reason: descriptor_limit (the process's tracker connections reached its open-file limit less the reserve), core_unreachable (a gateway process or edge gateway without its core).",
    labels: ['protocol', 'reason'],
    read: (c) =>
      [...c.trackers()].flatMap(([protocol, t]) =>
        REFUSAL_REASONS.map((reason): [Labels, number] => [{ protocol, reason }, t.refused.values.get(reason) ?? 0]),
      ),
  },
  {
    type: 'histogram',
    name: 'tracker_ack_seconds',
    help: "Seconds from a tracker frame's arrival to its acknowledgement written (after the write is durable), by protocol.",
    labels: ['protocol'],
    read: (c) => byProtocol(c, (t) => t.ackSeconds),
  },
  {
    type: 'counter',
    name: 'positions_stored_total',
    help: 'Positions written to storage, by protocol (a tracker protocol, mqtt, owntracks, rest); an identical resend is not written again.',
    labels: ['protocol'],
    read: (c) => [...c.ingest.positions.values].map(([protocol, n]) => [{ protocol }, n]),
  },
  {
    type: 'histogram',
    name: 'ingest_batch_rows',
    help: 'Location rows per group-commit transaction of the ingest.',
    read: (c) => [[{}, c.ingest.batchRows]],
  },
  {
    type: 'gauge',
    name: 'mqtt_clients',
    help: 'MQTT clients connected (devices and API users).',
    read: (c) => [[{}, c.sources.mqttClients?.() ?? 0]],
  },
  {
    type: 'counter',
    name: 'mqtt_publishes_total',
    help: "PUBLISH packets on a device's topics, by topic kind: locations, alerts, commandResults, owntracks, owntracks-other.",
    labels: ['topic'],
    read: (c) => [...c.mqtt.publishes.values].map(([topic, n]) => [{ topic }, n]),
  },
  {
    type: 'counter',
    name: 'mqtt_publish_outcomes_total',
    help: 'What became of MQTT publishes: accepted (stored, acknowledged), rejected (malformed, acknowledged, not stored), ignored (nothing to store), refused (connection closed), failed (storage failed, not acknowledged).',
    labels: ['outcome'],
    read: (c) => Object.entries(c.sources.mqttOutcomes?.() ?? {}).map(([outcome, n]) => [{ outcome }, n]),
  },
  {
    type: 'counter',
    name: 'http_requests_total',
    help: 'REST requests by route pattern, method and status.',
    labels: ['route', 'method', 'status'],
    read: (c) =>
      [...c.http.routes].flatMap(([route, methods]) =>
        [...methods].flatMap(([method, m]) =>
          [...m.statuses].map(([status, n]): [Labels, number] => [{ route, method, status: String(status) }, n]),
        ),
      ),
  },
  {
    type: 'histogram',
    name: 'http_request_duration_seconds',
    help: "Seconds from a REST request's arrival to its answer, by route pattern and method.",
    labels: ['route', 'method'],
    read: (c) =>
      [...c.http.routes].flatMap(([route, methods]) =>
        [...methods].map(([method, m]): [Labels, Buckets] => [{ route, method }, m.seconds]),
      ),
  },
  {
    type: 'gauge',
    name: 'outbox_pending',
    help: 'Notifications (e-mail, SMS) waiting in the outbox to be sent or retried; NaN when storage does not answer.',
    read: async (c) => [[{}, c.sources.outboxPending ? await c.sources.outboxPending().catch(() => NaN) : 0]],
  },
  {
    type: 'gauge',
    name: 'storage_free_bytes',
    help: "Free bytes (for an unprivileged process) on the file system where the database lives: SQLite's directory, PostgreSQL's data directory when the server runs on this machine and its role may read where that is; no sample otherwise.",
    read: (c) => {
      let free: number | undefined;
      try {
        free = c.sources.storageFreeBytes?.();
      } catch {
        free = NaN;
      }
      return free === undefined ? [] : [[{}, free]];
    },
  },
  {
    type: 'gauge',
    name: 'storage_database_bytes',
    help: "The database's size in bytes: SQLite its file and its -wal file, PostgreSQL pg_database_size; NaN when storage does not answer.",
    read: async (c) =>
      c.sources.storageDatabaseBytes ? [[{}, await c.sources.storageDatabaseBytes().catch(() => NaN)]] : [],
  },
];

/** One definition in the registry: a labelled metric is read afresh at each scrape (reset first). */
function register(registry: Registry, d: Definition, counted: Counted): void {
  const name = `${PREFIX}${d.name}`;
  const labelNames = d.labels ?? [];
  if (d.type === 'histogram') {
    registry.registerMetric(new BucketsHistogram(name, d.help, labelNames, () => d.read(counted)));
    return;
  }
  const read = d.read;
  async function collect(this: Gauge | Counter): Promise<void> {
    const samples = [...(await read(counted))];
    if (labelNames.length) this.reset();
    // a gauge without labels has a sample of 0 from the start: none when there is nothing to say
    else if (!samples.length) (this as unknown as { hashMap: object }).hashMap = {};
    for (const [labels, value] of samples) {
      if (this instanceof Gauge) labelNames.length ? this.set(labels, value) : this.set(value);
      else this.inc(labels, value);
    }
  }
  const options = { name, help: d.help, labelNames, registers: [registry], collect };
  if (d.type === 'gauge') new Gauge(options);
  else new Counter(options);
}

/** This process's listeners and what the gateway processes reported, summed by protocol (at a scrape). */
function allTrackers(trackers: Map<string, TrackerCounts>, sources: ScrapeSources): Map<string, TrackerCounts> {
  const remote = sources.remoteTrackers?.();
  if (!remote) return trackers;
  const sum = new Map<string, TrackerCounts>();
  const of = (protocol: string) => {
    let c = sum.get(protocol);
    if (!c) sum.set(protocol, (c = new TrackerCounts()));
    return c;
  };
  for (const [protocol, c] of trackers) of(protocol).add(c);
  for (const r of remote) of(r.protocol).add(r.counts, r.live);
  return sum;
}

export function createMetrics(registry: Registry): Metrics {
  const trackers = new Map<string, TrackerCounts>();
  const sources: ScrapeSources = {};
  const counted: Counted = {
    trackers: () => allTrackers(trackers, sources),
    ingest: new IngestCounts(),
    mqtt: new MqttCounts(),
    http: new HttpCounts(),
    sources,
  };

  for (const m of processMetricsOnce()) registry.registerMetric(m);
  for (const d of DEFINITIONS) register(registry, d, counted);

  return {
    tracker(protocol) {
      let c = trackers.get(protocol);
      if (!c) trackers.set(protocol, (c = new TrackerCounts()));
      return c;
    },
    ingest: counted.ingest,
    mqtt: counted.mqtt,
    http: counted.http,
    readAtScrape(more) {
      Object.assign(sources, more);
    },
    async scrape() {
      return { contentType: registry.contentType, text: await registry.metrics() };
    },
  };
}
