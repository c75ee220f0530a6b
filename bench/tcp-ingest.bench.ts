/**
 * TCP ingest (BENCHMARKS.md "tcp-ingest"): 1,000 trackers (BENCH_TRACKERS) of six protocols stream
 * pre-encoded frames, one in flight per connection. Measured: positions stored AND acknowledged per
 * second; the rows in `locations` must equal them. Baselines: the same rows inserted by
 * better-sqlite3 with the writer's settings, and inserted raw in trackgate's commit shape (to tell
 * how much is the storage itself); the generator is checked against an ack-only server.
 * Rounds alternate and the best of each is reported: this machine's speed moves by a third within
 * minutes. With two or more CPUs, trackgate runs on the last CPU and the generator on CPU 0.
 */
import os from 'node:os';
import { DEFAULT_MAX_BATCH_ROWS } from '../core/ingest/ingest.service.js';
import { startChild } from './lib/child.js';
import { alternatingRounds, bestRound } from './lib/paired-rounds.js';
import { BENCH_PROTOCOLS, type BenchProtocol } from './lib/frames.js';
import {
  CONNECTIONS,
  framesPerConnection,
  GATEWAY_CPUS,
  GATEWAY_PROCESSES,
  GENERATOR_CPUS,
  MIX,
  RECORDS_PER_FRAME,
  SERVER_CPUS,
  connectAll,
  deviceIds,
  pinSelf,
  placeGatewayProcesses,
  rawBlocks,
  rowsOf,
  type RawRow,
} from './lib/ingest-load.js';
import { INSERT, TX_ROWS, rawStorage, rawUsPerRow, timedStorage, type RawStorageResult } from './lib/raw-storage.js';
import type { ConnectResult, StreamResult } from './lib/tracker-generator.js';
import { prepareDataDir, startServerProcess, rowsStoredIn, tempDir } from './lib/trackgate.js';
import { QUICK, cpuUsPer, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';
import { compareCost, costTable, figure, usPerFromPct, usPer, type Cost } from './lib/cost.js';

const WARMUP_MS = QUICK ? 1_000 : 3_000;
const DURATION_MS = QUICK ? 5_000 : 20_000;
const ECHO_DURATION_MS = QUICK ? 3_000 : 10_000;
/** pre-encoded frames per connection: far more than a connection gets acknowledged in the window */
const FRAMES: Record<BenchProtocol, number> = framesPerConnection(
  QUICK
    ? { teltonika: 60, gt06: 300, gl200: 300, ruptela: 60, wialon: 300, navis: 60 }
    : { teltonika: 400, gt06: 600, gl200: 600, ruptela: 400, wialon: 600, navis: 400 },
);
const GOAL = 0.5;
/** the cost goal (issue 45): trackgate's CPU per position at most this many times raw storage's per row */
const COST_GOAL = 2;
/** the other TCP goal: positions per second on this 2-CPU machine */
const GOAL_PER_SEC = 60_000;
/** trackgate and storage rounds each, alternating (BENCH_ROUNDS: another count); the best of each is reported */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));

export interface TrackgateRound {
  variant: 'trackgate';
  login: ConnectResult;
  ingest: StreamResult & { storedRows: number; rowsMatchAcks: boolean };
  gatewayProcesses: number;
}
interface StorageRound {
  variant: 'raw';
  raw: IngestResult['rawStorage'];
  shaped: IngestResult['rawStorage'];
}
type Round = TrackgateRound | StorageRound;

export interface IngestResult {
  name: 'tcp-ingest';
  machine: Machine;
  settings: {
    connections: number;
    mix: Record<BenchProtocol, number>;
    recordsPerFrame: number;
    warmupSeconds: number;
    windowSeconds: number;
    rounds: number;
    rowsPerTransaction: number;
    serverCpus: string;
    generatorCpus: string;
    gatewayProcesses: number;
    gatewayCpus: string;
  };
  login: ConnectResult;
  ingest: StreamResult & { storedRows: number; rowsMatchAcks: boolean };
  rawStorage: RawStorageResult;
  /** the same rows, raw, in trackgate's commit shape (see the file's comment) */
  shapedStorage: IngestResult['rawStorage'];
  /** every round's figures, in the order run (the fields above are the best of each) */
  rounds: (
    | {
        variant: 'trackgate';
        positionsPerSec: number;
        rowsMatchAcks: boolean;
        serverCpuPct?: number;
        coreCpuPct?: number;
        generatorCpuPct: number;
        machineCpuPct: number;
        positionsPerCpuSec: number;
        /** µs of CPU of trackgate's processes (core and gateway processes) per position acknowledged in the window */
        cpuUsPerPosition: number;
      }
    | {
        variant: 'raw';
        rowsPerSec: number;
        shapedRowsPerSec: number;
        rowsPerCpuSec: number;
        /** µs of CPU per row inserted */
        cpuUsPerRow: number;
      }
  )[];
  /** wall clock: trackgate positions/s over raw storage rows/s */
  ratio: number;
  /** per CPU second of the process doing the work (insensitive to other load on the machine) */
  cpu: {
    trackgatePositionsPerCpuSec: number;
    rawRowsPerCpuSec: number;
    ratio: number;
    /**
     * The best trackgate round's cost per position, in µs of CPU of every process on the machine
     * (trackgate, generator, kernel), and the rate every CPU busy would take at that cost: the most
     * this machine can reach without a cheaper path per position.
     */
    cpus: number;
    machinePerPositionUs: number;
    ceilingPerSec: number;
  };
  goal: string;
  met: boolean;
  /** trackgate's CPU per position against raw storage's per row (bench/lib/cost.ts) */
  cost: Cost;
  generatorCheck: {
    ackOnlyPositionsPerSec: number;
    generatorCpuPctAckOnly: number;
    generatorCpuPctTrackgate: number;
    trackgateShareOfAckOnly: number;
  };
}

const INSERT_OR_SKIP = `${INSERT} on conflict (device_id, date_time) do nothing`;
const UPSERT_LAST = `insert into last_locations (device_id, date_time, data) values (?, ?, ?)
  on conflict (device_id) do update set date_time = excluded.date_time, data = excluded.data where excluded.date_time >= last_locations.date_time`;

/**
 * The same rows, raw, in trackgate's commit shape: frames (a device's consecutive rows) in the
 * order the trackers sent them, round by round, gathered into transactions of at most
 * DEFAULT_MAX_BATCH_ROWS rows without splitting a frame or taking two frames of one device; each
 * row inserted unless stored already, each device's last location upserted with each frame.
 */
const shapedStorage = (framesAcked: StreamResult['framesAcked'], expected: number) =>
  timedStorage('shaped', deviceIds(), rawBlocks(rowsOf(framesAcked)), expected, (db) => {
    const insert = db.prepare(INSERT_OR_SKIP);
    const upsert = db.prepare(UPSERT_LAST);
    const write = db.transaction((frames: RawRow[][]) => {
      for (const frame of frames) {
        for (const r of frame) insert.run(r[0], r[1], r[2], r[3]);
        const last = frame[frame.length - 1];
        upsert.run(last[0], last[1], last[3]);
      }
    });
    return (block, commit) => {
      let batch: RawRow[][] = [];
      let batchRows = 0;
      const devices = new Set<string>();
      const flush = (): void => {
        const frames = batch;
        const n = batchRows;
        if (n > 0) commit(() => (write(frames), n));
        batch = [];
        batchRows = 0;
        devices.clear();
      };
      for (let i = 0; i < block.length; ) {
        let end = i + 1;
        while (end < block.length && block[end][0] === block[i][0]) end++;
        const frame = block.slice(i, end);
        i = end;
        if (batchRows + frame.length > DEFAULT_MAX_BATCH_ROWS || devices.has(frame[0][0])) flush();
        batch.push(frame);
        batchRows += frame.length;
        devices.add(frame[0][0]);
      }
      flush();
    };
  });

/**
 * One trackgate round: a fresh data directory and server, the trackers logged in, the window
 * streamed. `tls`: the box certificate's files; the trackers then connect to the TLS ports
 * (bench/tls-ingest.bench.ts).
 */
export async function trackgateRound(tls?: { certFile: string; keyFile: string }): Promise<TrackgateRound> {
  const data = tempDir('ingest');
  try {
    await prepareDataDir(data.dir, deviceIds());
    const suffix = tls ? '_TLS_PORT' : '_PORT';
    const server = await startServerProcess(
      data.dir,
      {
        ...Object.fromEntries(BENCH_PROTOCOLS.map((p) => [`TRACKGATE_${p.toUpperCase()}${suffix}`, '0'])),
        ...(tls && {
          TRACKGATE_TLS_CERT: tls.certFile,
          TRACKGATE_TLS_KEY: tls.keyFile,
          TRACKGATE_HTTPS_PORT: '0',
        }),
        TRACKGATE_GATEWAY_PROCESSES: GATEWAY_PROCESSES,
      },
      SERVER_CPUS,
    );
    const gatewayProcesses = placeGatewayProcesses(server.pid).length;
    let login: ConnectResult;
    let stream: StreamResult;
    try {
      const gen = await startChild('tracker-generator.ts', undefined, GENERATOR_CPUS);
      try {
        login = await connectAll(
          gen,
          Object.fromEntries(BENCH_PROTOCOLS.map((p) => [p, server.ports[tls ? `${p}/tls` : p]])) as Record<
            BenchProtocol,
            number
          >,
          tls !== undefined,
        );
        log(`${login.loggedIn} trackers logged in (${login.seconds.toFixed(1)} s); encoding frames`);
        const prepared = await gen.call<{ bytes: number; frames: number }>('prepare', {
          framesPerConnection: FRAMES,
          recordsPerFrame: RECORDS_PER_FRAME,
        });
        log(
          `${fmt(prepared.frames)} frames (${fmt(prepared.bytes / 2 ** 20, 1)} MiB) encoded; streaming: ${WARMUP_MS / 1000} s warm-up, ${DURATION_MS / 1000} s measured`,
        );
        stream = await gen.call<StreamResult>('stream', {
          warmupMs: WARMUP_MS,
          durationMs: DURATION_MS,
          cycle: false,
          watchPid: server.pid,
        });
        await gen.call('close');
        if (stream.errors > 0) throw new Error(`${stream.errors} stream errors: ${stream.firstError}`);
        if (stream.exhausted > 0)
          log(`WARNING: ${stream.exhausted} connections ran out of frames before the window closed`);
      } finally {
        await gen.stop();
      }
    } finally {
      await server.stop();
    }
    const storedRows = await rowsStoredIn(data.dir);
    const ingest = { ...stream, storedRows, rowsMatchAcks: storedRows === stream.ackedPositions };
    log(
      `trackgate: ${fmt(stream.windowPositionsPerSec)} positions/s acknowledged; ${fmt(storedRows)} rows stored, ${fmt(stream.ackedPositions)} positions acknowledged; CPU: trackgate ${stream.serverCpuPct?.toFixed(0)} % of a core${gatewayProcesses ? ` (core ${stream.coreCpuPct?.toFixed(0)} %: ${stream.coreCpuPct === undefined ? '?' : cpuUsPer(stream.coreCpuPct, stream.windowPositionsPerSec).toFixed(1)} µs per position)` : ''}, generator ${stream.generatorCpuPct.toFixed(0)} %`,
    );
    return { variant: 'trackgate', login, ingest, gatewayProcesses };
  } finally {
    data.remove();
  }
}

/** One storage round: the rows a trackgate round acknowledged, stored raw, then raw in trackgate's commit shape, on trackgate's CPU. */
async function storageRound(acked: TrackgateRound['ingest']): Promise<StorageRound> {
  log(
    `raw storage: inserting the same ${fmt(acked.ackedPositions)} rows into a fresh database, ${TX_ROWS} per transaction`,
  );
  pinSelf(SERVER_CPUS);
  try {
    const raw = await rawStorage(deviceIds(), rawBlocks(rowsOf(acked.framesAcked)), acked.ackedPositions);
    log(
      `raw storage in trackgate's commit shape: the same rows, at most ${fmt(DEFAULT_MAX_BATCH_ROWS)} per transaction, one frame per device`,
    );
    const shaped = await shapedStorage(acked.framesAcked, acked.ackedPositions);
    log(`raw storage ${fmt(raw.rowsPerSec)} rows/s; in trackgate's commit shape ${fmt(shaped.rowsPerSec)} rows/s`);
    return { variant: 'raw', raw, shaped };
  } finally {
    pinSelf(GENERATOR_CPUS);
  }
}

async function generatorCheck(): Promise<StreamResult> {
  log('generator check: the same trackers against an ack-only server');
  const ackServer = await startChild('ack-server.ts', undefined, SERVER_CPUS);
  const gen = await startChild('tracker-generator.ts', undefined, GENERATOR_CPUS);
  try {
    const ports = await ackServer.call<Record<BenchProtocol, number>>('start');
    await connectAll(gen, ports);
    await gen.call('prepare', { framesPerConnection: FRAMES, recordsPerFrame: RECORDS_PER_FRAME });
    const echo = await gen.call<StreamResult>('stream', {
      warmupMs: WARMUP_MS,
      durationMs: ECHO_DURATION_MS,
      cycle: true,
    });
    await gen.call('close');
    return echo;
  } finally {
    await gen.stop();
    await ackServer.stop();
  }
}

export async function run(): Promise<IngestResult> {
  const atStart = machine();
  log(
    `preparing: ${fmt(CONNECTIONS)} devices (${BENCH_PROTOCOLS.map((p) => `${MIX[p]} ${p}`).join(', ')}); CPUs: trackgate ${SERVER_CPUS ?? 'any'}, generator ${GENERATOR_CPUS ?? 'any'}; ${ROUNDS} round(s) each, alternating`,
  );
  // idle while the others work: kept off trackgate's CPU
  pinSelf(GENERATOR_CPUS);
  try {
    // trackgate goes first: a storage round stores the rows the last trackgate round acknowledged
    let lastAcked: TrackgateRound['ingest'] | undefined;
    const rounds = await alternatingRounds<'trackgate' | 'raw', Round>('trackgate', 'raw', ROUNDS, async (v) => {
      if (v === 'raw') return storageRound(lastAcked!);
      const r = await trackgateRound();
      lastAcked = r.ingest;
      return r;
    });
    const echo = await generatorCheck();
    const tg = rounds.filter((r): r is TrackgateRound => r.variant === 'trackgate');
    const st = rounds.filter((r): r is StorageRound => r.variant === 'raw');
    const best = bestRound(tg, (r) => r.ingest.windowPositionsPerSec);
    const raw = bestRound(st, (r) => r.raw.rowsPerSec).raw;
    const shaped = bestRound(st, (r) => r.shaped.rowsPerSec).shaped;
    const ingest = best.ingest;
    const ratio = ingest.windowPositionsPerSec / raw.rowsPerSec;
    const perCpuSec = (i: TrackgateRound['ingest']): number =>
      i.windowPositions / (((i.serverCpuPct ?? NaN) / 100) * i.windowSeconds);
    const trackgatePositionsPerCpuSec = Math.max(...tg.map((r) => perCpuSec(r.ingest)));
    const rawRowsPerCpuSec = Math.max(...st.map((r) => r.raw.rowsPerCpuSec));
    const allStored = tg.every((r) => r.ingest.rowsMatchAcks);
    const cpus = os.cpus().length;
    const machinePerPositionUs = cpuUsPer(ingest.machineCpuPct, ingest.windowPositionsPerSec);
    const costOf = (i: TrackgateRound['ingest']): number => usPer(i.serverCpuMs ?? NaN, i.windowPositions);
    const cost = compareCost(
      'position',
      figure(
        `trackgate (core + ${best.gatewayProcesses} gateway processes), per position acknowledged`,
        tg.map((r) => costOf(r.ingest)),
      ),
      figure(
        `raw storage: better-sqlite3, one prepared insert, ${fmt(TX_ROWS)} rows/transaction, per row`,
        st.map((r) => rawUsPerRow(r.raw)),
      ),
      {
        goal: { text: `<= ${COST_GOAL} x raw storage per row`, maxRatio: COST_GOAL },
        more: [
          figure(
            "raw storage in trackgate's commit shape, per row",
            st.map((r) => rawUsPerRow(r.shaped)),
          ),
          figure(
            "trackgate's core alone, per position",
            tg.map((r) => usPerFromPct(r.ingest.coreCpuPct, r.ingest.windowSeconds, r.ingest.windowPositions)),
          ),
        ],
      },
    );
    const result: IngestResult = {
      name: 'tcp-ingest',
      machine: atStart,
      settings: {
        connections: CONNECTIONS,
        mix: MIX,
        recordsPerFrame: RECORDS_PER_FRAME,
        warmupSeconds: WARMUP_MS / 1000,
        windowSeconds: DURATION_MS / 1000,
        rounds: ROUNDS,
        rowsPerTransaction: TX_ROWS,
        serverCpus: SERVER_CPUS ?? 'any',
        generatorCpus: GENERATOR_CPUS ?? 'any',
        gatewayProcesses: best.gatewayProcesses,
        gatewayCpus: GATEWAY_CPUS,
      },
      login: best.login,
      ingest: { ...ingest, framesAcked: [] },
      rawStorage: raw,
      shapedStorage: shaped,
      rounds: rounds.map((r) =>
        r.variant === 'trackgate'
          ? {
              variant: r.variant,
              positionsPerSec: r.ingest.windowPositionsPerSec,
              rowsMatchAcks: r.ingest.rowsMatchAcks,
              serverCpuPct: r.ingest.serverCpuPct,
              coreCpuPct: r.ingest.coreCpuPct,
              generatorCpuPct: r.ingest.generatorCpuPct,
              machineCpuPct: r.ingest.machineCpuPct,
              positionsPerCpuSec: perCpuSec(r.ingest),
              cpuUsPerPosition: costOf(r.ingest),
            }
          : {
              variant: r.variant,
              rowsPerSec: r.raw.rowsPerSec,
              shapedRowsPerSec: r.shaped.rowsPerSec,
              rowsPerCpuSec: r.raw.rowsPerCpuSec,
              cpuUsPerRow: rawUsPerRow(r.raw),
            },
      ),
      ratio,
      cpu: {
        trackgatePositionsPerCpuSec,
        rawRowsPerCpuSec,
        ratio: trackgatePositionsPerCpuSec / rawRowsPerCpuSec,
        cpus,
        machinePerPositionUs,
        ceilingPerSec: (cpus * 1e6) / machinePerPositionUs,
      },
      goal: `>= ${pct(GOAL)} of raw storage`,
      met: ratio >= GOAL && allStored,
      cost,
      generatorCheck: {
        ackOnlyPositionsPerSec: echo.windowPositionsPerSec,
        generatorCpuPctAckOnly: echo.generatorCpuPct,
        generatorCpuPctTrackgate: ingest.generatorCpuPct,
        trackgateShareOfAckOnly: ingest.windowPositionsPerSec / echo.windowPositionsPerSec,
      },
    };
    printIngest(result);
    return result;
  } finally {
    pinSelf(undefined);
  }
}

export function printIngest(r: IngestResult): void {
  const i = r.ingest;
  printTable(
    `TCP ingest (${r.settings.connections} connections: ${r.settings.mix.teltonika} Teltonika, ${r.settings.mix.ruptela} Ruptela and ${r.settings.mix.navis} Navtelecom FLEX x ${r.settings.recordsPerFrame} records/frame, ${r.settings.mix.gt06} GT06, ${r.settings.mix.gl200} gl200 and ${r.settings.mix.wialon} Wialon IPS x 1; ${r.settings.windowSeconds} s after ${r.settings.warmupSeconds} s warm-up; best of ${r.settings.rounds} alternating round(s) each; CPUs: trackgate ${r.settings.serverCpus}, generator ${r.settings.generatorCpus})`,
    ['measure', 'positions/s', 'ratio', 'goal', 'met', 'per CPU-second', 'ratio (CPU)'],
    [
      [
        'trackgate: stored and acknowledged',
        fmt(i.windowPositionsPerSec),
        pct(r.ratio),
        r.goal,
        r.met ? 'yes' : 'NO',
        fmt(r.cpu.trackgatePositionsPerCpuSec),
        pct(r.cpu.ratio),
      ],
      [
        `raw storage: better-sqlite3, one prepared insert, ${fmt(r.settings.rowsPerTransaction)} rows/transaction`,
        fmt(r.rawStorage.rowsPerSec),
        '100 %',
        '',
        '',
        fmt(r.rawStorage.rowsPerCpuSec),
        '100 %',
      ],
      [
        `raw storage in trackgate's commit shape (<= ${fmt(DEFAULT_MAX_BATCH_ROWS)} rows, one frame per device, last location upserted)`,
        fmt(r.shapedStorage.rowsPerSec),
        pct(r.shapedStorage.rowsPerSec / r.rawStorage.rowsPerSec),
        '',
        '',
        fmt(r.shapedStorage.rowsPerCpuSec),
        pct(r.shapedStorage.rowsPerCpuSec / r.rawStorage.rowsPerCpuSec),
      ],
      ['generator against an ack-only server', fmt(r.generatorCheck.ackOnlyPositionsPerSec), '', '', '', '', ''],
    ],
  );
  const each = (v: 'trackgate' | 'raw'): string =>
    r.rounds
      .filter((x) => x.variant === v)
      .map((x) =>
        x.variant === 'trackgate'
          ? `${fmt(x.positionsPerSec)}${x.rowsMatchAcks ? '' : ' (rows MISMATCH)'}`
          : `${fmt(x.rowsPerSec)} (shaped ${fmt(x.shapedRowsPerSec)})`,
      )
      .join(' / ');
  console.log(
    `rounds, in the order run: trackgate ${each('trackgate')} positions/s; raw storage ${each('raw')} rows/s`,
  );
  const by = i.ackedByProtocol;
  console.log(
    `best trackgate round: acknowledged ${fmt(i.ackedPositions)} positions (Teltonika ${fmt(by.teltonika)}, GT06 ${fmt(by.gt06)}, gl200 ${fmt(by.gl200)}, Ruptela ${fmt(by.ruptela)}, Wialon ${fmt(by.wialon)}, Navtelecom ${fmt(by.navis)}); rows in locations: ${fmt(i.storedRows)} -> ${i.rowsMatchAcks ? 'equal' : 'MISMATCH'}`,
  );
  console.log(
    `CPU during the window: trackgate ${i.serverCpuPct?.toFixed(0)} % of a core, generator ${i.generatorCpuPct.toFixed(0)} % (against the ack-only server: ${r.generatorCheck.generatorCpuPctAckOnly.toFixed(0)} %, ${pct(r.generatorCheck.trackgateShareOfAckOnly)} of its rate used by trackgate)`,
  );
  const c = r.cpu;
  const goalRate = Math.max(GOAL_PER_SEC, GOAL * r.rawStorage.rowsPerSec);
  console.log(
    `the whole machine during the best window: ${i.machineCpuPct.toFixed(0)} % of a core (${c.cpus} CPUs), ${c.machinePerPositionUs.toFixed(1)} µs of CPU per position; every CPU busy at that cost: ${fmt(c.ceilingPerSec)} positions/s` +
      (c.ceilingPerSec < goalRate
        ? `, below the goals' ${fmt(goalRate)}/s: they need the cost per position cut to ${pct(c.ceilingPerSec / goalRate)} of it`
        : ''),
  );
  console.log(
    `positions acknowledged per second (first ${r.settings.warmupSeconds} s: warm-up, not counted): ${i.perSecond.map((n) => fmt(n)).join(' ')}`,
  );
  console.log(
    `login of ${r.login.loggedIn} trackers: ${r.login.seconds.toFixed(1)} s; drain after the window: ${i.drainSeconds.toFixed(2)} s`,
  );
  if (r.cost) costTable('TCP ingest against raw storage', r.cost);
}
