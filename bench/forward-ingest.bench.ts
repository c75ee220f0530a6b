/**
 * Issue 15: the cost of forwards on TCP ingest. The TCP ingest load of tcp-ingest.bench.ts (1,000
 * trackers, half Teltonika x 10 records/frame, half GT06, pre-encoded frames, one frame in flight
 * per connection) against trackgate with no forwards, and against trackgate with two forwards on
 * the account: a webhook (an HTTP receiver in this process answering 200 to every batch) and an
 * AMQP forward to the RabbitMQ of this machine (127.0.0.1:5672, guest/guest; an exchange and a
 * queue of the bench's own, read only at the end: the queue's message count, so that no consumer
 * competes for the CPU). Subject and baseline run alternately, ROUNDS times each; the best of each
 * is reported. Measured: positions stored and acknowledged per second. The forwards must keep up:
 * the most messages waiting (events after a forward's cursor) sampled every 2 s during the
 * window, and the seconds after the window until both forwards have delivered everything, which
 * must also arrive (webhook messages and queue count = positions stored).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { openDb } from '../core/db/db.js';
import type { Db } from '../core/db/db.js';
import * as forwardsRepo from '../core/forward/forwards.repository.js';
import { startChild, type Child } from './lib/child.js';
import { alternatingRounds, bestOf, connectTeltonikaGt06, teltonikaGt06Ids } from './lib/paired-rounds.js';
import type { ConnectResult, StreamResult } from './lib/tracker-generator.js';
import { prepareDataDir, startServerProcess, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';

const PER_PROTOCOL = 500;
const RECORDS_PER_FRAME = 10;
const ROUNDS = QUICK ? 1 : 3;
const WARMUP_MS = QUICK ? 1_000 : 3_000;
const DURATION_MS = QUICK ? 4_000 : 12_000;
const FRAMES = QUICK ? { teltonika: 60, gt06: 300 } : { teltonika: 300, gt06: 500 };
const GOAL = 0.8;
const AMQP_URL = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export interface ForwardIngestResult {
  name: 'forward-ingest';
  machine: Machine;
  settings: { connections: number; recordsPerFrame: number; forwards: string[]; rounds: number; windowSeconds: number };
  rounds: {
    variant: 'none' | 'forwards';
    positionsPerSec: number;
    serverCpuPct: number | undefined;
    rowsMatchAcks: boolean;
    maxPending?: number;
    caughtUpSeconds?: number;
    delivered?: { webhook: number; amqp: number; stored: number };
  }[];
  best: { none: number; forwards: number };
  ratio: number;
  goal: string;
  met: boolean;
}

const deviceIds = (): string[] => teltonikaGt06Ids(PER_PROTOCOL);

/** The webhook receiver: 200 to every batch, counting its messages (a JSON array: its commas at depth 1 are not counted, its ids are). */
async function startReceiver(): Promise<{ url: string; count(): number; close(): Promise<void> }> {
  let messages = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      messages += (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[]).length;
      res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    count: () => messages,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const connectAll = (gen: Child, ports: { teltonika: number; gt06: number }): Promise<ConnectResult> => connectTeltonikaGt06(gen, ports, PER_PROTOCOL);

/**
 * Messages waiting, summed over the forwards: the stream's last id minus each forward's position
 * (one account, so its event ids are consecutive), two indexed reads instead of a count that would
 * load the machine under test.
 */
async function pending(db: Db): Promise<number> {
  const last = Number((await db('forward_events').max({ m: 'id' }).first())?.m ?? 0);
  let n = 0;
  for (const f of await db('forwards').select('last_event_id')) n += Math.max(0, last - Number(f.last_event_id));
  return n;
}

async function countRows(db: Db): Promise<number> {
  return Number((await db('locations').count({ n: '*' }))[0].n);
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
    await prepareDataDir(data.dir, deviceIds(), receiver ? async (db, accountId) => {
      const now = Date.now();
      const base = { accountId, events: ['locations', 'alerts'] as ('locations' | 'alerts')[], groupId: null, enabled: true, topic: null, secret: null, created: now, modified: now };
      await forwardsRepo.insert(db, { ...base, id: randomUUID(), name: 'webhook', type: 'webhook', url: receiver.url, exchange: null }, 0);
      await forwardsRepo.insert(db, { ...base, id: randomUUID(), name: 'amqp', type: 'amqp', url: AMQP_URL, exchange }, 0);
    } : undefined);
    const server = await startServerProcess(data.dir, { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_GT06_PORT: '0' });
    const db = openDb({ dataDir: data.dir });
    try {
      const gen = await startChild('tracker-generator.ts');
      let stream: StreamResult;
      let maxPending = 0;
      let sampling = true;
      const sampler = (async () => {
        while (receiver && sampling) {
          maxPending = Math.max(maxPending, await pending(db).catch(() => 0));
          await new Promise((r) => setTimeout(r, 2000));
        }
      })();
      try {
        await connectAll(gen, { teltonika: server.ports.teltonika, gt06: server.ports.gt06 });
        await gen.call('prepare', { framesPerConnection: FRAMES, recordsPerFrame: RECORDS_PER_FRAME });
        stream = await gen.call<StreamResult>('stream', { warmupMs: WARMUP_MS, durationMs: DURATION_MS, cycle: false, watchPid: server.pid });
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
        delivered = { webhook: receiver.count(), amqp: (await ch.checkQueue(exchange)).messageCount, stored };
      }
      log(`${variant}: ${fmt(stream.windowPositionsPerSec)} positions/s; server ${stream.serverCpuPct?.toFixed(0)} % CPU${caughtUpSeconds === undefined ? '' : `; at most ${fmt(maxPending)} waiting, caught up ${caughtUpSeconds.toFixed(1)} s after the load; delivered ${JSON.stringify(delivered)}`}`);
      return { variant, positionsPerSec: stream.windowPositionsPerSec, serverCpuPct: stream.serverCpuPct, rowsMatchAcks: stored === stream.ackedPositions, ...(receiver && { maxPending, caughtUpSeconds, delivered }) };
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
  const rounds = await alternatingRounds<'none' | 'forwards', Awaited<ReturnType<typeof once>>>('none', 'forwards', ROUNDS, once);
  const best = { none: bestOf(rounds, 'none', (r) => r.positionsPerSec), forwards: bestOf(rounds, 'forwards', (r) => r.positionsPerSec) };
  const ratio = best.forwards / best.none;
  const withForwards = rounds.filter((r) => r.variant === 'forwards');
  const allDelivered = withForwards.every((r) => r.delivered && r.delivered.webhook >= r.delivered.stored && r.delivered.amqp >= r.delivered.stored);
  const result: ForwardIngestResult = {
    name: 'forward-ingest',
    machine: atStart,
    settings: { connections: PER_PROTOCOL * 2, recordsPerFrame: RECORDS_PER_FRAME, forwards: ['webhook (HTTP receiver answering 200)', 'amqp (RabbitMQ, persistent, confirms)'], rounds: ROUNDS, windowSeconds: DURATION_MS / 1000 },
    rounds,
    best,
    ratio,
    goal: `>= ${pct(GOAL)} of the rate without forwards; every position delivered by both`,
    met: ratio >= GOAL && rounds.every((r) => r.rowsMatchAcks) && allDelivered,
  };
  printTable(
    `TCP ingest with a webhook and an AMQP forward vs none (${PER_PROTOCOL * 2} trackers; best of ${ROUNDS} alternating rounds, ${DURATION_MS / 1000} s windows)`,
    ['measure', 'positions/s (best)', 'rounds', 'ratio', 'most waiting', 'caught up after', 'goal', 'met'],
    [
      ['webhook + amqp forwards', fmt(best.forwards), withForwards.map((r) => fmt(r.positionsPerSec)).join(' / '), pct(ratio), withForwards.map((r) => fmt(r.maxPending ?? 0)).join(' / '), withForwards.map((r) => `${r.caughtUpSeconds?.toFixed(1)} s`).join(' / '), result.goal, result.met ? 'yes' : 'NO'],
      ['no forwards', fmt(best.none), rounds.filter((r) => r.variant === 'none').map((r) => fmt(r.positionsPerSec)).join(' / '), '100 %', '', '', '', ''],
    ],
  );
  return result;
}
