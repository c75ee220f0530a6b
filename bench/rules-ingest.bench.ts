/**
 * The cost of alert rules on TCP ingest (BENCHMARKS.md "rules-ingest"): the tcp-ingest load with no
 * rules and with five rules on every device (SpeedLimit, a 50-point AllowedArea, BatteryVoltage,
 * Offline, IdleTime), rounds alternating, best of each reported. The speeds are generated so that a
 * SpeedLimit episode starts and ends every 60 records. The rules must keep up: after the window the
 * last fix evaluated per device must reach the last one stored within seconds, or the figure would
 * hide work done later.
 */
import { randomUUID } from 'node:crypto';
import { openDb } from '../core/db/db.js';
import type { Db } from '../core/db/db.js';
import * as rulesRepo from '../core/rules/alert-rules.repository.js';
import * as zonesRepo from '../core/rules/zones.repository.js';
import * as groupsRepo from '../core/groups/groups.repository.js';
import type { AlertRule } from '../core/model/alert-rule.js';
import { startChild, type Child } from './lib/child.js';
import { alternatingRounds, bestOf, connectTeltonikaGt06, teltonikaGt06Ids } from './lib/paired-rounds.js';
import type { ConnectResult, StreamResult } from './lib/tracker-generator.js';
import { prepareDataDir, startServerProcess, rowsStoredIn, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, pct, printTable, type Machine } from './lib/report.js';
import { compareCost, costTable, figure, usPer, type Cost } from './lib/cost.js';

const PER_PROTOCOL = 500;
const RECORDS_PER_FRAME = 10;
const ROUNDS = QUICK ? 1 : 3;
const WARMUP_MS = QUICK ? 1_000 : 3_000;
const DURATION_MS = QUICK ? 4_000 : 12_000;
const FRAMES = QUICK ? { teltonika: 60, gt06: 300 } : { teltonika: 300, gt06: 500 };
const GOAL = 0.85;

export interface RulesIngestResult {
  name: 'rules-ingest';
  machine: Machine;
  settings: {
    connections: number;
    recordsPerFrame: number;
    rules: string[];
    polygonPoints: number;
    rounds: number;
    windowSeconds: number;
  };
  rounds: {
    variant: 'none' | 'rules';
    positionsPerSec: number;
    serverCpuPct: number | undefined;
    positionsPerCpuSec: number;
    /** µs of CPU of trackgate's processes per position acknowledged in the window */
    cpuUsPerPosition: number;
    rowsMatchAcks: boolean;
    caughtUpSeconds?: number;
  }[];
  best: { none: number; rules: number };
  ratio: number;
  /** positions per CPU-second of the server (best of each): insensitive to other load on the machine */
  cpu: { none: number; rules: number; ratio: number };
  goal: string;
  met: boolean;
  /** trackgate's CPU per position with the rules against without (bench/lib/cost.ts) */
  cost: Cost;
}

const deviceIds = (): string[] => teltonikaGt06Ids(PER_PROTOCOL);

/**
 * A 50-point polygon (a circle of radius 0.08°) around the whole area the generated positions cover
 * (0.1° square): every position is tested against all its edges (its bounding box lets none out
 * early) and is inside. The generator's positions jump across the area from frame to frame, which
 * no real vehicle does: a zone crossing the area would raise an enter alert every few frames.
 */
function polygon(points = 50): [number, number][] {
  const ring: [number, number][] = [];
  for (let i = 0; i < points - 1; i++) {
    const a = (2 * Math.PI * i) / (points - 1);
    ring.push([-3.6538 + 0.08 * Math.cos(a), 40.4668 + 0.08 * Math.sin(a)]);
  }
  ring.push(ring[0]);
  return ring;
}

/** The five rules on every device, through one group holding them all. */
async function fillRules(db: Db, accountId: string): Promise<void> {
  const now = Date.now();
  const groupId = randomUUID();
  await groupsRepo.insert(db, {
    id: groupId,
    accountId,
    name: 'All trackers',
    description: null,
    creation: now,
    lastModified: now,
  });
  await groupsRepo.setDevices(db, groupId, deviceIds());
  const zoneId = randomUUID();
  await zonesRepo.insert(db, {
    id: zoneId,
    accountId,
    name: 'Service area',
    type: 'polygon',
    center: null,
    radius: null,
    polygon: polygon(),
    created: now,
  });
  const base = {
    accountId,
    devices: null,
    group: groupId,
    enabled: true,
    minDurationSeconds: 0,
    schedule: null,
    notify: { email: false, sms: false },
    command: null,
    created: now,
  };
  const rules: Omit<AlertRule, 'id'>[] = [
    { ...base, name: 'Speeding', alertName: 'SpeedLimit', params: { speed: 80 }, minDurationSeconds: 60 },
    { ...base, name: 'Service area', alertName: 'AllowedArea', params: { zone: zoneId } },
    { ...base, name: 'Low voltage', alertName: 'BatteryVoltage', params: { value: 12 } },
    { ...base, name: 'Silent', alertName: 'Offline', params: { minutes: 30 } },
    { ...base, name: 'Idling', alertName: 'IdleTime', params: { minutes: 5, speed: 3 } },
  ];
  for (const [i, r] of rules.entries()) await rulesRepo.insert(db, { ...r, id: randomUUID(), created: now + i });
}

const connectAll = (gen: Child, ports: { teltonika: number; gt06: number }): Promise<ConnectResult> =>
  connectTeltonikaGt06(gen, ports, PER_PROTOCOL);

/** Seconds until the last fix evaluated per device reaches the last fix stored (rules kept up), at most `limitMs`. */
async function caughtUp(dataDir: string, limitMs = 30_000): Promise<number> {
  const db = openDb({ dataDir });
  const t0 = performance.now();
  try {
    for (;;) {
      const behind = Number(
        (
          await db('last_locations')
            .leftJoin('rule_devices', 'rule_devices.device_id', 'last_locations.device_id')
            .where((w) =>
              w.whereNull('rule_devices.last_fix').orWhereRaw('rule_devices.last_fix < last_locations.date_time'),
            )
            .count({ n: '*' })
        )[0].n,
      );
      if (behind === 0) return (performance.now() - t0) / 1000;
      if (performance.now() - t0 > limitMs)
        throw new Error(`rules did not catch up within ${limitMs / 1000} s: ${behind} devices behind`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await db.destroy();
  }
}

async function once(variant: 'none' | 'rules'): Promise<RulesIngestResult['rounds'][number]> {
  const data = tempDir(`rules-${variant}`);
  try {
    await prepareDataDir(data.dir, deviceIds(), variant === 'rules' ? fillRules : undefined);
    const server = await startServerProcess(data.dir, { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_GT06_PORT: '0' });
    try {
      const gen = await startChild('tracker-generator.ts');
      let stream: StreamResult;
      try {
        await connectAll(gen, { teltonika: server.ports.teltonika, gt06: server.ports.gt06 });
        await gen.call('prepare', { framesPerConnection: FRAMES, recordsPerFrame: RECORDS_PER_FRAME });
        stream = await gen.call<StreamResult>('stream', {
          warmupMs: WARMUP_MS,
          durationMs: DURATION_MS,
          cycle: false,
          watchPid: server.pid,
        });
        await gen.call('close');
      } finally {
        await gen.stop();
      }
      if (stream.errors > 0) throw new Error(`${stream.errors} stream errors: ${stream.firstError}`);
      const caught = variant === 'rules' ? await caughtUp(data.dir) : undefined;
      const stored = await rowsStoredIn(data.dir);
      log(
        `${variant}: ${fmt(stream.windowPositionsPerSec)} positions/s; server ${stream.serverCpuPct?.toFixed(0)} % CPU${caught === undefined ? '' : `; rules caught up ${caught.toFixed(1)} s after the load`}`,
      );
      const positionsPerCpuSec = stream.windowPositionsPerSec / ((stream.serverCpuPct ?? NaN) / 100);
      return {
        variant,
        positionsPerSec: stream.windowPositionsPerSec,
        serverCpuPct: stream.serverCpuPct,
        positionsPerCpuSec,
        cpuUsPerPosition: usPer(stream.serverCpuMs ?? NaN, stream.windowPositions),
        rowsMatchAcks: stored === stream.ackedPositions,
        caughtUpSeconds: caught,
      };
    } finally {
      await server.stop();
    }
  } finally {
    data.remove();
  }
}

export async function run(): Promise<RulesIngestResult> {
  const atStart = machine();
  const rounds = await alternatingRounds<'none' | 'rules', Awaited<ReturnType<typeof once>>>(
    'none',
    'rules',
    ROUNDS,
    once,
  );
  const best = {
    none: bestOf(rounds, 'none', (r) => r.positionsPerSec),
    rules: bestOf(rounds, 'rules', (r) => r.positionsPerSec),
  };
  const ratio = best.rules / best.none;
  const cpuOf = (v: 'none' | 'rules') => bestOf(rounds, v, (r) => r.positionsPerCpuSec);
  const cpu = { none: cpuOf('none'), rules: cpuOf('rules'), ratio: cpuOf('rules') / cpuOf('none') };
  const costs = (v: 'none' | 'rules') => rounds.filter((r) => r.variant === v).map((r) => r.cpuUsPerPosition);
  const cost = compareCost(
    'position',
    figure('trackgate with five rules on every device', costs('rules')),
    figure('trackgate without rules, same load', costs('none')),
  );
  const result: RulesIngestResult = {
    name: 'rules-ingest',
    machine: atStart,
    settings: {
      connections: PER_PROTOCOL * 2,
      recordsPerFrame: RECORDS_PER_FRAME,
      rules: [
        'SpeedLimit 80 for 60 s',
        'AllowedArea (50-point polygon around every position)',
        'BatteryVoltage 12',
        'Offline 30 min',
        'IdleTime 5 min',
      ],
      polygonPoints: 50,
      rounds: ROUNDS,
      windowSeconds: DURATION_MS / 1000,
    },
    rounds,
    best,
    ratio,
    cpu,
    goal: `>= ${pct(GOAL)} of the rate without rules`,
    met: ratio >= GOAL && rounds.every((r) => r.rowsMatchAcks),
    cost,
  };
  printTable(
    `TCP ingest with five alert rules on every device vs none (${PER_PROTOCOL * 2} trackers; best of ${ROUNDS} alternating rounds, ${DURATION_MS / 1000} s windows)`,
    ['measure', 'positions/s (best)', 'rounds', 'ratio', 'goal', 'met', 'per server CPU-second (best)', 'ratio (CPU)'],
    [
      [
        'five rules on every device',
        fmt(best.rules),
        rounds
          .filter((r) => r.variant === 'rules')
          .map((r) => fmt(r.positionsPerSec))
          .join(' / '),
        pct(ratio),
        result.goal,
        result.met ? 'yes' : 'NO',
        fmt(cpu.rules),
        pct(cpu.ratio),
      ],
      [
        'no rules',
        fmt(best.none),
        rounds
          .filter((r) => r.variant === 'none')
          .map((r) => fmt(r.positionsPerSec))
          .join(' / '),
        '100 %',
        '',
        '',
        fmt(cpu.none),
        '100 %',
      ],
    ],
  );
  costTable('TCP ingest with rules against without', cost);
  return result;
}
