/**
 * MQTT ingest (BENCHMARKS.md "mqtt-ingest"): 1,000 devices (BENCH_MQTT_CONNECTIONS) on raw sockets
 * publish QoS 1 locations with at most WINDOW in flight each. Measured: PUBACKs per second (a PUBACK
 * follows the commit); the rows in `locations` must equal them. Baseline: a Mosquitto on a free port
 * relaying the same bytes to one subscriber; it keeps nothing on disk, so the goal is trackgate at
 * >= 50 % of its rate. Rounds alternate, best of each reported: Mosquitto's own rate moves by 2x.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { openDb } from '../core/db/db.js';
import { DEFAULT_RATE } from '../gateway/mqtt/publish.limits.js';
import { startChild, type Child } from './lib/child.js';
import { alternatingRounds, bestRound } from './lib/paired-rounds.js';
import type { MqttClientSpec, MqttConnectResult, MqttStreamResult } from './lib/mqtt-generator.js';
import type { SubscriberCounts } from './lib/mqtt-subscriber.js';
import { adminToken, startServerProcess, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';
import { compareCost, costTable, figure, usPer, type Cost } from './lib/cost.js';
import { rawStorage, rawUsPerRow, storedBlocks, TX_ROWS, type RawStorageResult } from './lib/raw-storage.js';

/**
 * Simulated devices, one connection each. trackgate lets a device publish 100 messages/s after a
 * burst of 500 (gateway/mqtt/publish.limits.ts DEFAULT_RATE): 200 devices would cap it at
 * 20,000/s, below what its broker takes, so the figure would be the limiter's. 1,000 devices put
 * that ceiling at 100,000/s: with 500 (50,000/s) a fast hour's runs used 86–94 % of it while
 * Mosquitto relayed up to 110,000/s, so the goal could have been out of reach by the limit alone
 * (BENCHMARKS.md). (BENCH_MQTT_CONNECTIONS: other counts, for diagnosis.)
 */
const CONNECTIONS = Number(process.env.BENCH_MQTT_CONNECTIONS ?? 1000);
/** QoS 1 messages in flight per connection (BENCH_MQTT_WINDOW: for diagnosis only) */
const WINDOW = Number(process.env.BENCH_MQTT_WINDOW ?? 10);
const WARMUP_MS = QUICK ? 1_000 : 3_000;
const DURATION_MS = QUICK ? 4_000 : 15_000;
/**
 * Pre-encoded messages per connection (unique dateTime each). A trackgate connection can get at
 * most burst + 100/s through (500 + 100 * 18 = 2,300 in warm-up + window), and at 1,000 devices far
 * fewer; Mosquitto's connections cycle through theirs.
 */
const MESSAGES = QUICK ? 800 : 2_300;
const MOSQUITTO = process.env.BENCH_MOSQUITTO ?? '/usr/sbin/mosquitto';
const GOAL = 0.5;
/** the cost goal (issue 45): trackgate's CPU per message at most this many times the broker's per message plus raw storage's per row */
const COST_GOAL = 1.5;
/** Mosquitto and trackgate rounds each, alternating (BENCH_ROUNDS: another count); the best of each is reported */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));

type Round = { variant: 'mosquitto'; run: MosquittoRun } | { variant: 'trackgate'; run: TrackgateRun };

export interface MosquittoRun {
  connect: MqttConnectResult;
  stream: Omit<MqttStreamResult, 'ackedPerConnection'>;
  /** received by the subscriber during the generator's window */
  relayedInWindow: number;
  relayedPerSec: number;
  /** received by the subscriber in all, after waiting for the last ones */
  relayedTotal: number;
  allRelayed: boolean;
  subscriber: SubscriberCounts;
  /** CPU during the window, % of one core */
  cpuPct: { mosquitto: number; subscriber: number; generator: number };
  /** µs of CPU during the window per message PUBACKed in it: Mosquitto's process (the broker), the subscriber */
  cpuUsPerMessage: { mosquitto: number; subscriber: number };
  /**
   * The same Mosquitto with no subscriber, right after: it only acknowledges, as trackgate does (the
   * broker's share of trackgate's work; relaying to a subscriber is work trackgate does not do)
   */
  ackOnly: { perSec: number; cpuUsPerMessage: number };
}

export interface TrackgateRun {
  connect: MqttConnectResult;
  stream: Omit<MqttStreamResult, 'ackedPerConnection'>;
  storedRows: number;
  rowsMatchAcks: boolean;
  /** devices whose stored rows differ from their PUBACKs */
  devicesMismatched: number;
  /**
   * trackgate lets each device publish DEFAULT_RATE.perSecond sustained after a burst: with
   * CONNECTIONS devices that caps the sustained total; the share shows how close the run came
   */
  publishLimit: {
    perDevicePerSec: number;
    burst: number;
    sustainedCeilingPerSec: number;
    windowShareOfCeiling: number;
  };
  cpuPct: { trackgate: number; generator: number };
  /** µs of CPU of trackgate's processes during the window per message PUBACKed in it */
  cpuUsPerMessage: number;
  /** the rows this round stored, inserted raw by better-sqlite3 in the bench's process (bench/lib/raw-storage.ts) */
  rawStorage: RawStorageResult;
}

export interface MqttIngestResult {
  name: 'mqtt-ingest';
  machine: Machine;
  settings: {
    connections: number;
    windowPerConnection: number;
    warmupSeconds: number;
    windowSeconds: number;
    rounds: number;
    messagesPerConnection: number;
    packetBytes: number[];
    mosquitto: string;
  };
  /** the best round of each (Mosquitto: by its relayed rate) */
  mosquitto: MosquittoRun;
  trackgate: TrackgateRun;
  /** every round's rate, in the order run */
  rounds: (
    | { variant: 'mosquitto'; perSec: number; allRelayed: boolean; cpuUsPerMessage: number }
    | {
        variant: 'trackgate';
        perSec: number;
        rowsMatchAcks: boolean;
        cpuUsPerMessage: number;
        rawStorageCpuUsPerRow: number;
      }
  )[];
  /** trackgate PUBACKs/s (stored) / Mosquitto relayed/s */
  ratio: number;
  /** trackgate PUBACKs/s / Mosquitto PUBACKs/s */
  ratioToMosquittoPubacks: number;
  goal: string;
  met: boolean;
  /** trackgate's CPU per message against Mosquitto's per message plus raw storage's per row (bench/lib/cost.ts) */
  cost: Cost;
}

const deviceId = (i: number): string => `bench-mqtt-${String(i).padStart(4, '0')}`;
const password = (i: number): string => `bench-pass-${i}`;

function clients(): MqttClientSpec[] {
  return Array.from({ length: CONNECTIONS }, (_, i) => ({
    deviceId: deviceId(i),
    clientId: `${deviceId(i)}-b`,
    username: deviceId(i),
    password: password(i),
  }));
}

const strip = (s: MqttStreamResult): Omit<MqttStreamResult, 'ackedPerConnection'> => {
  const { ackedPerConnection: _, ...rest } = s;
  return rest;
};

async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    if (port !== 1883) return port;
  }
}

async function waitForPort(port: number, proc: ChildProcess, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`mosquitto exited (${proc.exitCode})`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`mosquitto did not listen on ${port} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let packetBytes: number[] = [];

async function runGenerator(
  gen: Child,
  port: number,
  watch: Record<string, number>,
  cycle: boolean,
): Promise<{ connect: MqttConnectResult; stream: MqttStreamResult }> {
  const connect = await gen.call<MqttConnectResult>('connect', {
    host: '127.0.0.1',
    port,
    clients: clients(),
    batch: 50,
  });
  if (connect.connected !== CONNECTIONS)
    throw new Error(
      `${connect.connected} of ${CONNECTIONS} connected: return codes ${JSON.stringify(connect.returnCodes)}, ${connect.failed} failed (${connect.firstError})`,
    );
  const prepared = await gen.call<{ bytes: number; messages: number; packetBytes: number[] }>('prepare', {
    messagesPerConnection: MESSAGES,
  });
  packetBytes = prepared.packetBytes;
  log(
    `${connect.connected} clients connected in ${connect.seconds.toFixed(1)} s; ${fmt(prepared.messages)} PUBLISH packets (${prepared.packetBytes.join('/')} bytes each) encoded; ${WARMUP_MS / 1000} s warm-up, ${DURATION_MS / 1000} s measured`,
  );
  const stream = await gen.call<MqttStreamResult>('stream', {
    window: WINDOW,
    warmupMs: WARMUP_MS,
    durationMs: DURATION_MS,
    cycle,
    watch,
    drainMs: 30_000,
  });
  await gen.call('close');
  if (stream.errors > 0) throw new Error(`${stream.errors} errors while streaming: ${stream.firstError}`);
  if (stream.unacked > 0) throw new Error(`${stream.unacked} messages never acknowledged`);
  if (stream.exhausted > 0)
    log(`WARNING: ${stream.exhausted} connections ran out of pre-encoded messages before the window closed`);
  return { connect, stream };
}

async function runMosquitto(): Promise<MosquittoRun> {
  const dir = tempDir('mosquitto');
  const port = await freePort();
  const conf = path.join(dir.dir, 'mosquitto.conf');
  // In-memory relay; no queue or in-flight limit that could hold the subscriber back, Nagle off
  // as on trackgate's sockets: all in the baseline's favour.
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence false',
      'max_inflight_messages 1000',
      'max_queued_messages 0',
      'set_tcp_nodelay true',
      'log_dest stderr',
      'log_type error',
      '',
    ].join('\n'),
  );
  const proc = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    await waitForPort(port, proc, 10_000);
    log(`mosquitto ${MOSQUITTO} (pid ${proc.pid}) on 127.0.0.1:${port}`);
    const sub = await startChild('mqtt-subscriber.ts');
    const gen = await startChild('mqtt-generator.ts');
    try {
      await sub.call('start', { host: '127.0.0.1', port, filter: 'devices/#', clientId: 'bench-relay-sub' });
      const { connect, stream } = await runGenerator(gen, port, { mosquitto: proc.pid!, subscriber: sub.pid }, true);
      const waited = await sub.call<SubscriberCounts>('waitFor', { total: stream.acked, maxMs: 60_000 });
      const relayedInWindow = await sub.call<number>('receivedBetween', {
        fromEpochMs: stream.windowStartEpochMs,
        toEpochMs: stream.windowEndEpochMs,
      });
      const relayedPerSec = relayedInWindow / (DURATION_MS / 1000);
      log(
        `mosquitto: ${fmt(stream.windowAckedPerSec)} PUBACKs/s, ${fmt(relayedPerSec)} messages/s relayed to the subscriber; ${fmt(waited.received)} of ${fmt(stream.acked)} relayed in all`,
      );
      await sub.call('stop');
      const ackGen = await startChild('mqtt-generator.ts');
      let ackOnly: MosquittoRun['ackOnly'];
      try {
        const only = (await runGenerator(ackGen, port, { mosquitto: proc.pid! }, true)).stream;
        ackOnly = {
          perSec: only.windowAckedPerSec,
          cpuUsPerMessage: usPer(only.watchedCpuMs.mosquitto, only.windowAcked),
        };
      } finally {
        await ackGen.stop();
      }
      log(
        `mosquitto without a subscriber: ${fmt(ackOnly.perSec)} PUBACKs/s, ${ackOnly.cpuUsPerMessage.toFixed(1)} µs of its CPU per message`,
      );
      return {
        ackOnly,
        connect,
        stream: strip(stream),
        relayedInWindow,
        relayedPerSec,
        relayedTotal: waited.received,
        allRelayed: waited.received === stream.acked,
        subscriber: waited,
        cpuPct: {
          mosquitto: stream.watchedCpuPct.mosquitto,
          subscriber: stream.watchedCpuPct.subscriber,
          generator: stream.generatorCpuPct,
        },
        cpuUsPerMessage: {
          mosquitto: usPer(stream.watchedCpuMs.mosquitto, stream.windowAcked),
          subscriber: usPer(stream.watchedCpuMs.subscriber, stream.windowAcked),
        },
      };
    } finally {
      await sub.call('stop').catch(() => {});
      await gen.stop();
      await sub.stop();
    }
  } finally {
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
    dir.remove();
  }
}

async function createDevices(base: string): Promise<void> {
  const token = await adminToken(base);
  const ids = Array.from({ length: CONNECTIONS }, (_, i) => i);
  for (let i = 0; i < ids.length; i += 20) {
    await Promise.all(
      ids.slice(i, i + 20).map(async (n) => {
        const res = await fetch(`${base}/api/devices`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id: deviceId(n), name: `bench mqtt ${n}`, mqttPassword: password(n) }),
        });
        if (res.status !== 201) throw new Error(`POST /api/devices ${deviceId(n)}: ${res.status} ${await res.text()}`);
      }),
    );
  }
}

async function runTrackgate(): Promise<TrackgateRun> {
  const data = tempDir('mqtt');
  try {
    const server = await startServerProcess(data.dir, { TRACKGATE_MQTT_PORT: '0' });
    let connect: MqttConnectResult;
    let stream: MqttStreamResult;
    try {
      log(
        `trackgate (pid ${server.pid}) MQTT on 127.0.0.1:${server.ports.mqtt}; creating ${CONNECTIONS} devices with an MQTT password through REST`,
      );
      await createDevices(server.base);
      const gen = await startChild('mqtt-generator.ts');
      try {
        ({ connect, stream } = await runGenerator(gen, server.ports.mqtt, { trackgate: server.pid }, false));
      } finally {
        await gen.stop();
      }
    } finally {
      await server.stop();
    }
    const db = openDb({ dataDir: data.dir });
    let storedRows = 0;
    let devicesMismatched = 0;
    try {
      const rows = (await db('locations').groupBy('device_id').select('device_id').count({ n: '*' })) as {
        device_id: string;
        n: number;
      }[];
      const byDevice = new Map(rows.map((r) => [r.device_id, Number(r.n)]));
      for (const r of rows) storedRows += Number(r.n);
      for (const c of stream.ackedPerConnection) if ((byDevice.get(c.deviceId) ?? 0) !== c.acked) devicesMismatched++;
    } finally {
      await db.destroy();
    }
    log(
      `trackgate: ${fmt(stream.windowAckedPerSec)} PUBACKs/s; ${fmt(storedRows)} rows stored, ${fmt(stream.acked)} PUBACKs -> ${storedRows === stream.acked ? 'equal' : 'MISMATCH'}; raw storage: the same rows by better-sqlite3, ${fmt(TX_ROWS)} per transaction`,
    );
    const raw = await rawStorage([], storedBlocks(data.dir), storedRows);
    return {
      connect,
      stream: strip(stream),
      storedRows,
      rowsMatchAcks: storedRows === stream.acked && devicesMismatched === 0,
      devicesMismatched,
      publishLimit: {
        perDevicePerSec: DEFAULT_RATE.perSecond,
        burst: DEFAULT_RATE.burst,
        sustainedCeilingPerSec: CONNECTIONS * DEFAULT_RATE.perSecond,
        windowShareOfCeiling: stream.windowAckedPerSec / (CONNECTIONS * DEFAULT_RATE.perSecond),
      },
      cpuPct: { trackgate: stream.watchedCpuPct.trackgate, generator: stream.generatorCpuPct },
      cpuUsPerMessage: usPer(stream.watchedCpuMs.trackgate, stream.windowAcked),
      rawStorage: raw,
    };
  } finally {
    data.remove();
  }
}

/** `BENCH_MQTT_ONLY=mosquitto|trackgate` runs one side only (diagnosis; no result object). */
export async function run(): Promise<MqttIngestResult> {
  const only = process.env.BENCH_MQTT_ONLY;
  if (only === 'mosquitto' || only === 'trackgate') {
    const one = only === 'mosquitto' ? await runMosquitto() : await runTrackgate();
    console.log(JSON.stringify({ ...one, stream: { ...one.stream, perSecond: one.stream.perSecond.join(' ') } }));
    return one as unknown as MqttIngestResult;
  }
  log(
    `mosquitto and trackgate: ${CONNECTIONS} publishers, QoS 1, ${WINDOW} in flight each (mosquitto: one subscriber on devices/#); ${ROUNDS} alternating round(s) each`,
  );
  const rounds = await alternatingRounds<'mosquitto' | 'trackgate', Round>(
    'mosquitto',
    'trackgate',
    ROUNDS,
    async (v) => {
      log(`${v}: ${CONNECTIONS} publishers`);
      return v === 'mosquitto' ? { variant: v, run: await runMosquitto() } : { variant: v, run: await runTrackgate() };
    },
  );
  const mosquittoRuns = rounds.flatMap((r) => (r.variant === 'mosquitto' ? [r.run] : []));
  const trackgateRuns = rounds.flatMap((r) => (r.variant === 'trackgate' ? [r.run] : []));
  const mosquitto = bestRound(mosquittoRuns, (m) => m.relayedPerSec);
  const trackgate = bestRound(trackgateRuns, (t) => t.stream.windowAckedPerSec);
  const ratio = trackgate.stream.windowAckedPerSec / mosquitto.relayedPerSec;
  // the broker's cost is Mosquitto acknowledging alone (issue 45): relaying is not trackgate's work
  const broker = figure(
    "Mosquitto's process, per message PUBACKed, no subscriber",
    mosquittoRuns.map((m) => m.ackOnly.cpuUsPerMessage),
  );
  const relaying = figure(
    "Mosquitto's process, per message PUBACKed and relayed to a subscriber",
    mosquittoRuns.map((m) => m.cpuUsPerMessage.mosquitto),
  );
  const raw = figure(
    `raw storage: the rows trackgate stored, by better-sqlite3, ${fmt(TX_ROWS)} rows/transaction, per row`,
    trackgateRuns.map((t) => rawUsPerRow(t.rawStorage)),
  );
  const cost = compareCost(
    'MQTT message',
    figure(
      'trackgate, per message PUBACKed (stored)',
      trackgateRuns.map((t) => t.cpuUsPerMessage),
    ),
    {
      label: 'broker per message + raw storage per row',
      us: broker.us + raw.us,
      rounds: broker.rounds.map((b, i) => b + (raw.rounds[i] ?? NaN)),
    },
    {
      goal: { text: `<= ${COST_GOAL} x (broker + raw storage)`, maxRatio: COST_GOAL },
      more: [broker, raw, relaying],
    },
  );
  const result: MqttIngestResult = {
    name: 'mqtt-ingest',
    machine: machine(),
    settings: {
      connections: CONNECTIONS,
      windowPerConnection: WINDOW,
      warmupSeconds: WARMUP_MS / 1000,
      windowSeconds: DURATION_MS / 1000,
      rounds: ROUNDS,
      messagesPerConnection: MESSAGES,
      packetBytes,
      mosquitto: 'persistence false, max_inflight_messages 1000, max_queued_messages 0, set_tcp_nodelay true',
    },
    mosquitto,
    trackgate,
    rounds: rounds.map((r) =>
      r.variant === 'mosquitto'
        ? {
            variant: r.variant,
            perSec: r.run.relayedPerSec,
            allRelayed: r.run.allRelayed,
            cpuUsPerMessage: r.run.cpuUsPerMessage.mosquitto,
          }
        : {
            variant: r.variant,
            perSec: r.run.stream.windowAckedPerSec,
            rowsMatchAcks: r.run.rowsMatchAcks,
            cpuUsPerMessage: r.run.cpuUsPerMessage,
            rawStorageCpuUsPerRow: rawUsPerRow(r.run.rawStorage),
          },
    ),
    ratio,
    ratioToMosquittoPubacks: trackgate.stream.windowAckedPerSec / mosquitto.stream.windowAckedPerSec,
    goal: `>= ${pct(GOAL)} of Mosquitto's relayed rate, every message stored`,
    met: ratio >= GOAL && trackgateRuns.every((t) => t.rowsMatchAcks),
    cost,
  };
  printMqtt(result);
  return result;
}

export function printMqtt(r: MqttIngestResult): void {
  const m = r.mosquitto;
  const t = r.trackgate;
  printTable(
    `MQTT ingest (${r.settings.connections} connections, QoS 1, ${r.settings.windowPerConnection} in flight each; ${r.settings.windowSeconds} s after ${r.settings.warmupSeconds} s warm-up; best of ${r.settings.rounds} alternating round(s) each)`,
    ['measure', 'messages/s', 'ratio', 'goal', 'met', 'broker CPU', 'generator CPU'],
    [
      [
        'trackgate: PUBACKed = stored',
        fmt(t.stream.windowAckedPerSec),
        pct(r.ratio),
        r.goal,
        r.met ? 'yes' : 'NO',
        `${t.cpuPct.trackgate.toFixed(0)} %`,
        `${t.cpuPct.generator.toFixed(0)} %`,
      ],
      [
        'mosquitto: relayed to the subscriber',
        fmt(m.relayedPerSec),
        '100 %',
        '',
        '',
        `${m.cpuPct.mosquitto.toFixed(0)} % (subscriber ${m.cpuPct.subscriber.toFixed(0)} %)`,
        `${m.cpuPct.generator.toFixed(0)} %`,
      ],
      ['mosquitto: PUBACKed', fmt(m.stream.windowAckedPerSec), '', '', '', '', ''],
    ],
  );
  const each = (v: 'mosquitto' | 'trackgate'): string =>
    r.rounds
      .filter((x) => x.variant === v)
      .map(
        (x) =>
          `${fmt(x.perSec)}${'rowsMatchAcks' in x && !x.rowsMatchAcks ? ' (rows MISMATCH)' : 'allRelayed' in x && !x.allRelayed ? ' (not all relayed)' : ''}`,
      )
      .join(' / ');
  console.log(
    `rounds, in the order run: mosquitto ${each('mosquitto')} relayed/s; trackgate ${each('trackgate')} PUBACKs/s`,
  );
  console.log(
    `best trackgate round: ${fmt(t.stream.acked)} PUBACKs, ${fmt(t.storedRows)} rows in locations -> ${t.rowsMatchAcks ? 'equal' : `MISMATCH (${t.devicesMismatched} devices)`}`,
  );
  const l = t.publishLimit;
  console.log(
    `trackgate's per-device publish limit (${l.perDevicePerSec}/s after a burst of ${l.burst}) caps ${r.settings.connections} devices at ${fmt(l.sustainedCeilingPerSec)}/s sustained: the window ran at ${pct(l.windowShareOfCeiling)} of that${l.windowShareOfCeiling > 0.9 ? ' (the limit, not the broker, may be what bounds this figure)' : ''}`,
  );
  console.log(
    `best mosquitto round: ${fmt(m.stream.acked)} PUBACKs, ${fmt(m.relayedTotal)} received by the subscriber -> ${m.allRelayed ? 'all relayed' : 'NOT all relayed'}`,
  );
  console.log(
    `PUBACKs per second, trackgate (first ${r.settings.warmupSeconds} s warm-up): ${t.stream.perSecond.map((n) => fmt(n)).join(' ')}`,
  );
  console.log(`PUBACKs per second, mosquitto: ${m.stream.perSecond.map((n) => fmt(n)).join(' ')}`);
  if (r.cost) costTable('MQTT ingest against Mosquitto and raw storage', r.cost);
}
