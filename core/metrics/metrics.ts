/**
 * `GET /metrics` in the Prometheus text format (exposition format 0.0.4), from the one Registry
 * main.ts makes. The only file that imports prom-client (.dependency-cruiser.cjs): every other
 * part counts its own in the plain objects of counts.ts, which this file reads at each scrape, or
 * hands this file a function to read (MQTT clients, the outbox backlog).
 *
 * Every name starts with `trackgate_` (CONTRACT.md "Metrics"); README "Metrics" lists them.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { Buckets, HttpCounts, IngestCounts, MqttCounts, REFUSAL_REASONS, TrackerCounts, type TrackerSnapshot } from './counts.js';

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
    return { name: this.metricName, help: this.helpText, type: 'histogram', aggregator: 'sum', values: this.values() } as unknown as Awaited<ReturnType<Histogram<string>['get']>>;
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

export function createMetrics(registry: Registry): Metrics {
  const trackers = new Map<string, TrackerCounts>();
  const ingest = new IngestCounts();
  const mqtt = new MqttCounts();
  const http = new HttpCounts();
  const sources: ScrapeSources = {};
  const registers = [registry];

  for (const m of processMetricsOnce()) registry.registerMetric(m);

  /** This process's listeners and what the gateway processes reported, summed by protocol (at a scrape). */
  function allTrackers(): Map<string, TrackerCounts> {
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

  new Gauge({
    name: `${PREFIX}tracker_connections`, help: 'Open tracker TCP connections, by protocol.', labelNames: ['protocol'], registers,
    collect() {
      this.reset();
      for (const [protocol, c] of allTrackers()) this.set({ protocol }, c.connections);
    },
  });
  new Counter({
    name: `${PREFIX}tracker_frames_total`,
    help: 'Tracker frames (TCP, UDP datagrams, OsmAnd requests) by protocol and outcome: decoded, malformed (cannot be decoded), unknown (decoded; no live device has its identity, nothing stored).',
    labelNames: ['protocol', 'outcome'], registers,
    collect() {
      this.reset();
      for (const [protocol, c] of allTrackers()) {
        this.inc({ protocol, outcome: 'decoded' }, c.decoded);
        this.inc({ protocol, outcome: 'malformed' }, c.malformed);
        this.inc({ protocol, outcome: 'unknown' }, c.unknown);
      }
    },
  });
  new Counter({
    name: `${PREFIX}tracker_identify_timeouts_total`, help: 'Tracker connections closed for naming no known device within TRACKGATE_IDENTIFY_TIMEOUT seconds of opening (TCP; OsmAnd: no request of a known device), by protocol.',
    labelNames: ['protocol'], registers,
    collect() {
      this.reset();
      for (const [protocol, c] of allTrackers()) this.inc({ protocol }, c.identifyTimeouts);
    },
  });
  new Counter({
    name: `${PREFIX}tracker_connections_refused_total`,
    help: 'New tracker connections closed at once, by protocol and reason: descriptor_limit (the process\'s tracker connections reached its open-file limit less the reserve), core_unreachable (a gateway process or edge gateway without its core).',
    labelNames: ['protocol', 'reason'], registers,
    collect() {
      this.reset();
      for (const [protocol, c] of allTrackers()) for (const reason of REFUSAL_REASONS) this.inc({ protocol, reason }, c.refused.values.get(reason) ?? 0);
    },
  });
  registry.registerMetric(new BucketsHistogram(
    `${PREFIX}tracker_ack_seconds`, 'Seconds from a tracker frame\'s arrival to its acknowledgement written (after the write is durable), by protocol.', ['protocol'],
    () => [...allTrackers()].map(([protocol, c]) => [{ protocol }, c.ackSeconds]),
  ));
  new Counter({
    name: `${PREFIX}positions_stored_total`, help: 'Positions written to storage, by protocol (a tracker protocol, mqtt, owntracks, rest); an identical resend is not written again.',
    labelNames: ['protocol'], registers,
    collect() {
      this.reset();
      for (const [protocol, n] of ingest.positions.values) this.inc({ protocol }, n);
    },
  });
  registry.registerMetric(new BucketsHistogram(
    `${PREFIX}ingest_batch_rows`, 'Location rows per group-commit transaction of the ingest.', [],
    () => [[{}, ingest.batchRows]],
  ));
  new Gauge({
    name: `${PREFIX}mqtt_clients`, help: 'MQTT clients connected (devices and API users).', registers,
    collect() {
      this.set(sources.mqttClients?.() ?? 0);
    },
  });
  new Counter({
    name: `${PREFIX}mqtt_publishes_total`, help: 'PUBLISH packets on a device\'s topics, by topic kind: locations, alerts, commandResults, owntracks, owntracks-other.',
    labelNames: ['topic'], registers,
    collect() {
      this.reset();
      for (const [topic, n] of mqtt.publishes.values) this.inc({ topic }, n);
    },
  });
  new Counter({
    name: `${PREFIX}mqtt_publish_outcomes_total`,
    help: 'What became of MQTT publishes: accepted (stored, acknowledged), rejected (malformed, acknowledged, not stored), ignored (nothing to store), refused (connection closed), failed (storage failed, not acknowledged).',
    labelNames: ['outcome'], registers,
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(sources.mqttOutcomes?.() ?? {})) this.inc({ outcome }, n);
    },
  });
  new Counter({
    name: `${PREFIX}http_requests_total`, help: 'REST requests by route pattern, method and status.', labelNames: ['route', 'method', 'status'], registers,
    collect() {
      this.reset();
      for (const [route, methods] of http.routes) {
        for (const [method, c] of methods) for (const [status, n] of c.statuses) this.inc({ route, method, status }, n);
      }
    },
  });
  registry.registerMetric(new BucketsHistogram(
    `${PREFIX}http_request_duration_seconds`, 'Seconds from a REST request\'s arrival to its answer, by route pattern and method.', ['route', 'method'],
    () => [...http.routes].flatMap(([route, methods]) => [...methods].map(([method, c]) => [{ route, method }, c.seconds] as [Record<string, string>, Buckets])),
  ));
  new Gauge({
    name: `${PREFIX}outbox_pending`, help: 'Notifications (e-mail, SMS) waiting in the outbox to be sent or retried; NaN when storage does not answer.', registers,
    async collect() {
      if (!sources.outboxPending) return this.set(0);
      this.set(await sources.outboxPending().catch(() => NaN));
    },
  });

  return {
    tracker(protocol) {
      let c = trackers.get(protocol);
      if (!c) trackers.set(protocol, (c = new TrackerCounts()));
      return c;
    },
    ingest,
    mqtt,
    http,
    readAtScrape(more) {
      Object.assign(sources, more);
    },
    async scrape() {
      return { contentType: registry.contentType, text: await registry.metrics() };
    },
  };
}
