/**
 * The cost of forwards on TCP ingest (BENCHMARKS.md "forward-ingest"): the tcp-ingest load against
 * trackgate with no forwards and with a webhook and an AMQP forward on the account, rounds
 * alternating, best of each reported. Every position must reach both targets; the backlog is sampled
 * during the window, and the time to drain it measured after. RabbitMQ's own CPU time and its rate
 * alone are measured too, because on a small machine the broker shares the CPUs with trackgate.
 */
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { openDb } from '../core/db/db.js';
import type { Db } from '../core/db/db.js';
import * as forwardsRepo from '../core/forward/forwards.repository.js';
import { cpuMsOf, startChild, type Child } from './lib/child.js';
import { alternatingRounds, bestOf, connectTeltonikaGt06, teltonikaGt06Ids } from './lib/paired-rounds.js';
import { SERVER_CPUS } from './lib/ingest-load.js';
import type { ConnectResult, StreamResult } from './lib/tracker-generator.js';
import { prepareDataDir, startServerProcess, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';
import { compareCost, costTable, figure, type Cost } from './lib/cost.js';

const PER_PROTOCOL = 500;
const RECORDS_PER_FRAME = 10;
const ROUNDS = QUICK ? 1 : 3;
const WARMUP_MS = QUICK ? 1_000 : 3_000;
const DURATION_MS = QUICK ? 4_000 : 12_000;
const FRAMES = QUICK ? { teltonika: 60, gt06: 300 } : { teltonika: 300, gt06: 500 };
const GOAL = 0.8;
/** the forwards on the account (a webhook and an AMQP forward): the targets each position goes to */
const TARGETS = 2;
/** the cost goal (issue 45): trackgate's CPU per forwarded message per target, µs */
const COST_GOAL_US = 5;
/** unconfirmed messages the "RabbitMQ alone" publisher keeps out: 50,000 took the most per second here (2,000: 10,448/s; 5,000: 11,897; 20,000: 12,582; 50,000: 14,481) */
const BROKER_WINDOW = 50_000;
const AMQP_URL = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
/** the load generator and the webhook receiver: every CPU but trackgate's (SERVER_CPUS, as tcp-ingest) */
const LOAD_CPUS = SERVER_CPUS === undefined ? undefined : os.cpus().length === 2 ? '0' : `0-${os.cpus().length - 2}`;

export interface ForwardIngestResult {
  name: 'forward-ingest';
  machine: Machine;
  settings: {
    connections: number;
    recordsPerFrame: number;
    forwards: string[];
    rounds: number;
    windowSeconds: number;
    serverCpus: string;
    loadCpus: string;
  };
  rounds: {
    variant: 'none' | 'forwards';
    positionsPerSec: number;
    serverCpuPct: number | undefined;
    /** CPU time per position stored during the window (µs): trackgate, the load generator */
    serverCpuUsPerPosition?: number;
    generatorCpuUsPerPosition: number;
    /** CPU time during the window per message taken (µs): RabbitMQ (when its process can be read), the webhook receiver */
    brokerCpuUsPerMessage?: number;
    receiverCpuUsPerMessage?: number;
    /** positions acknowledged in the window, and messages each target took meanwhile (from the end of the warm-up to the end of the stream) */
    windowPositions: number;
    deliveredInWindow?: { webhook: number; amqp: number };
    rowsMatchAcks: boolean;
    maxPending?: number;
    caughtUpSeconds?: number;
    delivered?: { webhook: number; amqp: number; stored: number };
  }[];
  best: { none: number; forwards: number };
  ratio: number;
  /**
   * The most this machine could ingest with the forwards' targets on it: its CPUs divided by what
   * one position costs everyone (trackgate, generator, RabbitMQ and receiver, each at its best
   * round), as a ratio of the best rate without forwards.
   */
  machineCeilingRatio?: number;
  /**
   * The same ceiling if forwarding cost trackgate nothing: trackgate's CPU per position without
   * forwards plus the generator's, RabbitMQ's and the receiver's with them. Under the goal, no
   * forwarder however cheap can reach the goal on this machine with these targets on it.
   */
  freeForwardingCeilingRatio?: number;
  /**
   * The AMQP target alone: RabbitMQ taking the same messages (persistent, confirmed, routed by
   * device) from a publisher with nothing else running, in each round (bench/lib/amqp-publisher.ts);
   * the best, against the rate the goal asks of the ingest with forwards (each position is one
   * message to the AMQP forward, so the forward keeps up only if the broker takes that many).
   */
  brokerAlone?: {
    rounds: { messagesPerSec: number; publisherCpuPct: number; brokerCpuUsPerMessage?: number }[];
    best: number;
    goalRate: number;
  };
  goal: string;
  met: boolean;
  /**
   * trackgate's CPU per forwarded message per target ((µs per position with forwards − without) /
   * TARGETS) against RabbitMQ's per confirmed message alone (bench/lib/cost.ts)
   */
  cost: Cost;
}

const deviceIds = (): string[] => teltonikaGt06Ids(PER_PROTOCOL);

/** The webhook receiver in its own process, on the load's CPUs. */
async function startReceiver(): Promise<{
  url: string;
  pid: number;
  count(): Promise<number>;
  close(): Promise<void>;
}> {
  const child = await startChild('webhook-receiver.ts', undefined, LOAD_CPUS);
  const port = await child.call<number>('listen');
  return {
    url: `http://127.0.0.1:${port}/hook`,
    pid: child.pid,
    count: () => child.call<number>('count'),
    close: () => child.stop(),
  };
}

/** The RabbitMQ server's process (beam.smp), when there is one to read. */
function brokerPid(): number | undefined {
  try {
    const pid = Number(execFileSync('pgrep', ['-o', '-f', 'beam.smp'], { encoding: 'utf8' }).trim().split('\n')[0]);
    return Number.isFinite(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

const connectAll = (gen: Child, ports: { teltonika: number; gt06: number }): Promise<ConnectResult> =>
  connectTeltonikaGt06(gen, ports, PER_PROTOCOL);

/** The broker's messages so far (published into the bench's queue), for its CPU per message. */
async function queued(ch: amqp.Channel | undefined, queue: string): Promise<number> {
  return ch ? (await ch.checkQueue(queue)).messageCount : 0;
}

/**
 * Messages waiting, summed over the forwards: the stream's last id minus each forward's position
 * (one account, so its event ids are consecutive), two indexed reads instead of a count that would
 * load the machine under test.
 */
async function pendingByForward(db: Db): Promise<Record<string, number>> {
  const last = Number((await db('forward_events').max({ m: 'id' }).first())?.m ?? 0);
  const out: Record<string, number> = {};
  for (const f of await db('forwards').select('name', 'last_event_id'))
    out[String(f.name)] = Math.max(0, last - Number(f.last_event_id));
  return out;
}

async function pending(db: Db): Promise<number> {
  return Object.values(await pendingByForward(db)).reduce((a, b) => a + b, 0);
}

async function countRows(db: Db): Promise<number> {
  return Number((await db('locations').count({ n: '*' }))[0].n);
}

/** RabbitMQ alone: the most persistent confirmed messages per second it takes here (see brokerAlone above). */
async function brokerAlone(): Promise<NonNullable<ForwardIngestResult['brokerAlone']>['rounds'][number]> {
  const exchange = `trackgate-bench-${randomUUID()}`;
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  const publisher = await startChild('amqp-publisher.ts', undefined, LOAD_CPUS);
  try {
    await ch.assertExchange(exchange, 'topic', { durable: false });
    await ch.assertQueue(exchange, { durable: false });
    await ch.bindQueue(exchange, exchange, '#');
    await publisher.call('prepare', { devices: deviceIds(), messages: 50_000 });
    const broker = brokerPid();
    const cpuAtStart = broker ? await cpuMsOf(broker) : undefined;
    const r = await publisher.call<{ messagesPerSec: number; publisherCpuPct: number; published: number }>('publish', {
      url: AMQP_URL,
      exchange,
      warmupMs: WARMUP_MS,
      durationMs: DURATION_MS,
      window: BROKER_WINDOW,
    });
    const took = await queued(ch, exchange);
    const brokerCpuUsPerMessage =
      broker && cpuAtStart !== undefined && took > 0
        ? (((await cpuMsOf(broker)) - cpuAtStart) * 1000) / took
        : undefined;
    log(
      `RabbitMQ alone: ${fmt(r.messagesPerSec)} messages/s confirmed; publisher ${r.publisherCpuPct.toFixed(0)} % of a core${brokerCpuUsPerMessage === undefined ? '' : `, RabbitMQ ${brokerCpuUsPerMessage.toFixed(1)} µs CPU per message`}`,
    );
    return { messagesPerSec: r.messagesPerSec, publisherCpuPct: r.publisherCpuPct, brokerCpuUsPerMessage };
  } finally {
    await publisher.stop();
    await ch.deleteQueue(exchange).catch(() => {});
    await ch.deleteExchange(exchange).catch(() => {});
    await conn.close().catch(() => {});
  }
}

async function once(variant: 'none' | 'forwards'): Promise<ForwardIngestResult['rounds'][number]> {
  const data = tempDir(`forward-${variant}`);
  const receiver = variant === 'forwards' ? await startReceiver() : undefined;
  const exchange = `trackgate-bench-${randomUUID()}`;
  const amqpConn = variant === 'forwards' ? await amqp.connect(AMQP_URL) : undefined;
  const ch = await amqpConn?.createChannel();
  if (ch) {
    await ch.assertExchange(exchange, 'topic', { durable: false });
    await ch.assertQueue(exchange, { durable: false });
    await ch.bindQueue(exchange, exchange, '#');
  }
  try {
    await prepareDataDir(
      data.dir,
      deviceIds(),
      receiver
        ? async (db, accountId) => {
            const now = Date.now();
            const base = {
              accountId,
              events: ['locations', 'alerts'] as ('locations' | 'alerts')[],
              groupId: null,
              enabled: true,
              topic: null,
              secret: null,
              created: now,
              modified: now,
            };
            await forwardsRepo.insert(
              db,
              { ...base, id: randomUUID(), name: 'webhook', type: 'webhook', url: receiver.url, exchange: null },
              0,
            );
            await forwardsRepo.insert(
              db,
              { ...base, id: randomUUID(), name: 'amqp', type: 'amqp', url: AMQP_URL, exchange },
              0,
            );
          }
        : undefined,
    );
    // the receivers are on loopback (or the private network), which forwards reach only when allowed
    const allow = [...new Set(['127.0.0.1', new URL(AMQP_URL).hostname])].join(',');
    const server = await startServerProcess(
      data.dir,
      { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_GT06_PORT: '0', TRACKGATE_FORWARD_ALLOW: allow },
      SERVER_CPUS,
    );
    const db = openDb({ dataDir: data.dir });
    try {
      const gen = await startChild('tracker-generator.ts', undefined, LOAD_CPUS);
      const broker = receiver ? brokerPid() : undefined;
      let brokerAtStart: { cpuMs: number; messages: number } | undefined;
      let receiverAtStart: { cpuMs: number; messages: number } | undefined;
      let brokerCpuUsPerMessage: number | undefined;
      let receiverCpuUsPerMessage: number | undefined;
      const deliveredInWindow = { webhook: 0, amqp: 0 };
      let stream: StreamResult;
      let maxPending = 0;
      const maxPendingOf: Record<string, number> = {};
      let sampling = true;
      const sampler = (async () => {
        while (receiver && sampling) {
          const each = await pendingByForward(db).catch(() => ({}) as Record<string, number>);
          for (const [name, n] of Object.entries(each)) maxPendingOf[name] = Math.max(maxPendingOf[name] ?? 0, n);
          maxPending = Math.max(
            maxPending,
            Object.values(each).reduce((a, b) => a + b, 0),
          );
          await new Promise((r) => setTimeout(r, 2000));
        }
      })();
      try {
        await connectAll(gen, { teltonika: server.ports.teltonika, gt06: server.ports.gt06 });
        await gen.call('prepare', { framesPerConnection: FRAMES, recordsPerFrame: RECORDS_PER_FRAME });
        const streaming = gen.call<StreamResult>('stream', {
          warmupMs: WARMUP_MS,
          durationMs: DURATION_MS,
          cycle: false,
          watchPid: server.pid,
        });
        // the window: from the end of the warm-up to the end of the stream
        await new Promise((r) => setTimeout(r, WARMUP_MS));
        if (broker) brokerAtStart = { cpuMs: await cpuMsOf(broker), messages: await queued(ch, exchange) };
        if (receiver) receiverAtStart = { cpuMs: await cpuMsOf(receiver.pid), messages: await receiver.count() };
        stream = await streaming;
        if (broker && brokerAtStart) {
          const took = (await queued(ch, exchange)) - brokerAtStart.messages;
          deliveredInWindow.amqp = took;
          if (took > 0) brokerCpuUsPerMessage = (((await cpuMsOf(broker)) - brokerAtStart.cpuMs) * 1000) / took;
        }
        if (receiver && receiverAtStart) {
          const took = (await receiver.count()) - receiverAtStart.messages;
          deliveredInWindow.webhook = took;
          if (took > 0)
            receiverCpuUsPerMessage = (((await cpuMsOf(receiver.pid)) - receiverAtStart.cpuMs) * 1000) / took;
        }
        await gen.call('close');
      } finally {
        sampling = false;
        await sampler;
        await gen.stop();
      }
      if (stream.errors > 0) throw new Error(`${stream.errors} stream errors: ${stream.firstError}`);
      const stored = await countRows(db);
      let caughtUpSeconds: number | undefined;
      let delivered: ForwardIngestResult['rounds'][number]['delivered'];
      if (receiver && ch) {
        const t0 = performance.now();
        while ((await pending(db)) > 0) {
          if (performance.now() - t0 > 60_000) throw new Error('the forwards did not catch up within 60 s');
          await new Promise((r) => setTimeout(r, 250));
        }
        caughtUpSeconds = (performance.now() - t0) / 1000;
        log(`most waiting per forward: ${JSON.stringify(maxPendingOf)}`);
        delivered = { webhook: await receiver.count(), amqp: (await ch.checkQueue(exchange)).messageCount, stored };
      }
      const perPosition = (cpuPct: number | undefined) =>
        cpuPct === undefined || stream.windowPositionsPerSec <= 0
          ? undefined
          : (cpuPct * 10_000) / stream.windowPositionsPerSec;
      const serverCpuUsPerPosition = perPosition(stream.serverCpuPct);
      const generatorCpuUsPerPosition = perPosition(stream.generatorCpuPct) ?? 0;
      log(
        `${variant}: ${fmt(stream.windowPositionsPerSec)} positions/s; CPU per position: trackgate ${serverCpuUsPerPosition?.toFixed(1)} µs (${stream.serverCpuPct?.toFixed(0)} % of a core), generator ${generatorCpuUsPerPosition.toFixed(1)} µs${brokerCpuUsPerMessage === undefined ? '' : `; per message: RabbitMQ ${brokerCpuUsPerMessage.toFixed(1)} µs, receiver ${receiverCpuUsPerMessage?.toFixed(1)} µs`}${caughtUpSeconds === undefined ? '' : `; at most ${fmt(maxPending)} waiting, caught up ${caughtUpSeconds.toFixed(1)} s after the load; delivered ${JSON.stringify(delivered)}`}`,
      );
      return {
        variant,
        positionsPerSec: stream.windowPositionsPerSec,
        serverCpuPct: stream.serverCpuPct,
        serverCpuUsPerPosition,
        generatorCpuUsPerPosition,
        brokerCpuUsPerMessage,
        receiverCpuUsPerMessage,
        windowPositions: stream.windowPositions,
        rowsMatchAcks: stored === stream.ackedPositions,
        ...(receiver && { deliveredInWindow, maxPending, caughtUpSeconds, delivered }),
      };
    } finally {
      await db.destroy();
      await server.stop();
    }
  } finally {
    await receiver?.close();
    if (ch) {
      await ch.deleteQueue(exchange).catch(() => {});
      await ch.deleteExchange(exchange).catch(() => {});
    }
    await amqpConn?.close().catch(() => {});
    data.remove();
  }
}

export async function run(): Promise<ForwardIngestResult> {
  const atStart = machine();
  // each round: without and with forwards (alternating which goes first), then the broker alone
  const alone: Awaited<ReturnType<typeof brokerAlone>>[] = [];
  const rounds = await alternatingRounds<'none' | 'forwards', Awaited<ReturnType<typeof once>>>(
    'none',
    'forwards',
    ROUNDS,
    once,
    async () => {
      alone.push(await brokerAlone());
    },
  );
  const best = {
    none: bestOf(rounds, 'none', (r) => r.positionsPerSec),
    forwards: bestOf(rounds, 'forwards', (r) => r.positionsPerSec),
  };
  const brokerBest = Math.max(...alone.map((a) => a.messagesPerSec));
  const ratio = best.forwards / best.none;
  const withForwards = rounds.filter((r) => r.variant === 'forwards');
  /** the least of `f` over `of` (each party at its best round) */
  const least = (of: typeof rounds, f: (r: (typeof rounds)[number]) => number | undefined) =>
    Math.min(...of.map(f).filter((v): v is number => v !== undefined && Number.isFinite(v)));
  // what the others spend per position with forwards: generator, RabbitMQ, receiver
  const targets =
    least(withForwards, (r) => r.generatorCpuUsPerPosition) +
    least(withForwards, (r) => r.brokerCpuUsPerMessage) +
    least(withForwards, (r) => r.receiverCpuUsPerMessage);
  const perPositionAll = least(withForwards, (r) => r.serverCpuUsPerPosition) + targets;
  const perPositionFree =
    least(
      rounds.filter((r) => r.variant === 'none'),
      (r) => r.serverCpuUsPerPosition,
    ) + targets;
  const freeForwardingCeilingRatio = Number.isFinite(perPositionFree)
    ? (os.cpus().length * 1e6) / perPositionFree / best.none
    : undefined;
  if (freeForwardingCeilingRatio !== undefined)
    log(
      `if forwarding cost trackgate nothing: ${perPositionFree.toFixed(1)} µs of CPU per position for all parties; at most ${fmt((os.cpus().length * 1e6) / perPositionFree)} positions/s = ${pct(freeForwardingCeilingRatio)} of the best rate without forwards`,
    );
  const machineCeilingRatio = Number.isFinite(perPositionAll)
    ? (os.cpus().length * 1e6) / perPositionAll / best.none
    : undefined;
  if (machineCeilingRatio !== undefined)
    log(
      `all parties together: ${perPositionAll.toFixed(1)} µs of CPU per position with forwards; ${os.cpus().length} CPUs allow at most ${fmt((os.cpus().length * 1e6) / perPositionAll)} positions/s = ${pct(machineCeilingRatio)} of the best rate without forwards`,
    );
  log(
    `RabbitMQ alone took at most ${fmt(brokerBest)} messages/s; the goal asks the ingest with forwards for ${fmt(GOAL * best.none)} positions/s, each one message to the AMQP forward${brokerBest < GOAL * best.none ? ': more than the broker takes on this machine with nothing else running, so no forwarder can keep up at that rate here' : ''}`,
  );
  // each pair of rounds (alternatingRounds runs them two by two): with forwards minus without, per target
  const noneBest = Math.min(
    ...rounds.filter((r) => r.variant === 'none').map((r) => r.serverCpuUsPerPosition ?? Number.POSITIVE_INFINITY),
  );
  const perTarget: number[] = [];
  for (let i = 0; i + 1 < rounds.length; i += 2) {
    const pair = rounds.slice(i, i + 2);
    const of = (v: 'none' | 'forwards') => pair.find((r) => r.variant === v)?.serverCpuUsPerPosition ?? NaN;
    perTarget.push((of('forwards') - of('none')) / TARGETS);
  }
  // the forwards lag behind the ingest (a backlog at the window's end, drained after it): the same
  // CPU over the messages the targets took in the window instead of the positions acknowledged
  const inWindow = withForwards.map((r) => {
    const taken = (r.deliveredInWindow?.webhook ?? 0) + (r.deliveredInWindow?.amqp ?? 0);
    const forwardingUs = ((r.serverCpuUsPerPosition ?? NaN) - noneBest) * r.windowPositions;
    return taken > 0 ? forwardingUs / taken : NaN;
  });
  const withCost = figure(
    'trackgate with the forwards, per position',
    withForwards.map((r) => r.serverCpuUsPerPosition ?? NaN),
  );
  const noneCost = figure(
    'trackgate without forwards, per position',
    rounds.filter((r) => r.variant === 'none').map((r) => r.serverCpuUsPerPosition ?? NaN),
  );
  const cost = compareCost(
    'forwarded message',
    {
      label: `trackgate per forwarded message per target: (with forwards - without) / ${TARGETS} targets`,
      us: (withCost.us - noneCost.us) / TARGETS,
      rounds: perTarget,
    },
    figure(
      'RabbitMQ (beam.smp) alone, per persistent message confirmed',
      alone.map((a) => a.brokerCpuUsPerMessage ?? NaN),
    ),
    {
      goal: { text: `<= ${COST_GOAL_US} µs per message per target`, maxUs: COST_GOAL_US },
      more: [
        figure(
          'the same difference over the messages both targets took in the window (the backlog left out)',
          inWindow,
        ),
        withCost,
        noneCost,
        figure(
          "RabbitMQ during the forwards' window, per message taken",
          withForwards.map((r) => r.brokerCpuUsPerMessage ?? NaN),
        ),
        figure(
          "the webhook receiver during the forwards' window, per message taken",
          withForwards.map((r) => r.receiverCpuUsPerMessage ?? NaN),
        ),
      ],
    },
  );
  // a negative difference is the rounds' noise, not a measure: it meets no goal
  if (!(cost.trackgate.us >= 0)) cost.met = false;
  const allDelivered = withForwards.every(
    (r) => r.delivered && r.delivered.webhook >= r.delivered.stored && r.delivered.amqp >= r.delivered.stored,
  );
  const result: ForwardIngestResult = {
    name: 'forward-ingest',
    machine: atStart,
    settings: {
      connections: PER_PROTOCOL * 2,
      recordsPerFrame: RECORDS_PER_FRAME,
      forwards: ['webhook (HTTP receiver answering 200)', 'amqp (RabbitMQ, persistent, confirms)'],
      rounds: ROUNDS,
      windowSeconds: DURATION_MS / 1000,
      serverCpus: SERVER_CPUS ?? 'any',
      loadCpus: LOAD_CPUS ?? 'any',
    },
    rounds,
    best,
    ratio,
    ...(machineCeilingRatio !== undefined && { machineCeilingRatio }),
    ...(freeForwardingCeilingRatio !== undefined && { freeForwardingCeilingRatio }),
    brokerAlone: { rounds: alone, best: brokerBest, goalRate: GOAL * best.none },
    goal: `>= ${pct(GOAL)} of the rate without forwards; every position delivered by both`,
    met: ratio >= GOAL && rounds.every((r) => r.rowsMatchAcks) && allDelivered,
    cost,
  };
  printTable(
    `TCP ingest with a webhook and an AMQP forward vs none (${PER_PROTOCOL * 2} trackers; best of ${ROUNDS} alternating rounds, ${DURATION_MS / 1000} s windows)`,
    [
      'measure',
      'positions/s (best)',
      'rounds',
      'ratio',
      'trackgate µs CPU/position',
      'generator µs/position',
      'RabbitMQ µs/message',
      'receiver µs/message',
      'most waiting',
      'caught up after',
      'goal',
      'met',
    ],
    [
      [
        'webhook + amqp forwards',
        fmt(best.forwards),
        withForwards.map((r) => fmt(r.positionsPerSec)).join(' / '),
        pct(ratio),
        withForwards.map((r) => r.serverCpuUsPerPosition?.toFixed(1) ?? '?').join(' / '),
        withForwards.map((r) => r.generatorCpuUsPerPosition.toFixed(1)).join(' / '),
        withForwards.map((r) => r.brokerCpuUsPerMessage?.toFixed(1) ?? '?').join(' / '),
        withForwards.map((r) => r.receiverCpuUsPerMessage?.toFixed(1) ?? '?').join(' / '),
        withForwards.map((r) => fmt(r.maxPending ?? 0)).join(' / '),
        withForwards.map((r) => `${r.caughtUpSeconds?.toFixed(1)} s`).join(' / '),
        result.goal,
        result.met ? 'yes' : 'NO',
      ],
      [
        'no forwards',
        fmt(best.none),
        rounds
          .filter((r) => r.variant === 'none')
          .map((r) => fmt(r.positionsPerSec))
          .join(' / '),
        '100 %',
        rounds
          .filter((r) => r.variant === 'none')
          .map((r) => r.serverCpuUsPerPosition?.toFixed(1) ?? '?')
          .join(' / '),
        rounds
          .filter((r) => r.variant === 'none')
          .map((r) => r.generatorCpuUsPerPosition.toFixed(1))
          .join(' / '),
        '',
        '',
        '',
        '',
        '',
        '',
      ],
      [
        'RabbitMQ alone (the AMQP target, nothing else running): messages/s',
        fmt(brokerBest),
        alone.map((a) => fmt(a.messagesPerSec)).join(' / '),
        pct(brokerBest / best.none),
        '',
        alone.map((a) => `publisher ${a.publisherCpuPct.toFixed(0)} %`).join(' / '),
        alone.map((a) => a.brokerCpuUsPerMessage?.toFixed(1) ?? '?').join(' / '),
        '',
        '',
        '',
        `>= ${fmt(GOAL * best.none)}/s for the goal`,
        brokerBest >= GOAL * best.none ? 'yes' : 'NO',
      ],
      [
        'ceiling of this machine with the targets on it',
        machineCeilingRatio === undefined ? '?' : fmt(machineCeilingRatio * best.none),
        '',
        machineCeilingRatio === undefined ? '?' : pct(machineCeilingRatio),
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
      ],
      [
        'the same if forwarding cost trackgate nothing',
        freeForwardingCeilingRatio === undefined ? '?' : fmt(freeForwardingCeilingRatio * best.none),
        '',
        freeForwardingCeilingRatio === undefined ? '?' : pct(freeForwardingCeilingRatio),
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
      ],
    ],
  );
  costTable('TCP ingest with forwards against without and against RabbitMQ', cost);
  if (!(cost.trackgate.us > 0))
    console.log(
      'WARNING: trackgate cost less per position with the forwards than without: the rounds differ by more than the forwards cost (other work on the machine, or too few rounds); the figure per target is not a measure (goal not counted as met)',
    );
  return result;
}
