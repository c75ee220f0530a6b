/**
 * Issue 4: memory per idle tracker. 10,000 Teltonika trackers connect to one trackgate process
 * and log in (ack 01 received), then stay silent. Reported: the server process's resident memory
 * (VmRSS of /proc/<pid>/status) before and after, and per connection. Baseline: the same process
 * before any tracker connected. Four generator processes share the connections.
 */
import { readdirSync } from 'node:fs';
import { startChild, type Child } from './lib/child.js';
import { teltonikaImei } from './lib/frames.js';
import type { ConnectResult } from './lib/tracker-generator.js';
import { prepareDataDir, startServerProcess, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, printTable, type Machine } from './lib/report.js';

const CONNECTIONS = QUICK ? 2_000 : 10_000;
const GENERATORS = 4;
const BATCH = 250;
const SETTLE_MS = 3_000;
const GOAL_BYTES = 2 ** 30;

export interface IdleResult {
  name: 'idle-connections';
  machine: Machine;
  settings: { connections: number; generators: number; batch: number };
  login: { loggedIn: number; seconds: number };
  /** kB, VmRSS of the server process */
  rssBeforeKb: number;
  rssAfterKb: number;
  /** kB, VmHWM (peak) of the server process at the end */
  peakRssKb: number;
  perConnectionBytes: number;
  serverOpenFiles: number;
  goal: string;
  met: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<IdleResult> {
  const atStart = machine();
  const data = tempDir('idle');
  try {
    const ids = Array.from({ length: CONNECTIONS }, (_, i) => teltonikaImei(i));
    log(`preparing: ${fmt(CONNECTIONS)} devices`);
    await prepareDataDir(data.dir, ids);
    const server = await startServerProcess(data.dir, { TRACKGATE_TELTONIKA_PORT: '0' });
    const gens: Child[] = [];
    try {
      await sleep(SETTLE_MS);
      const before = await server.memory();
      log(
        `server RSS before: ${fmt(before.rssKb / 1024, 1)} MiB; connecting ${fmt(CONNECTIONS)} trackers from ${GENERATORS} processes, ${BATCH} at a time each`,
      );
      for (let g = 0; g < GENERATORS; g++) gens.push(await startChild('tracker-generator.ts'));
      const per = CONNECTIONS / GENERATORS;
      const t0 = performance.now();
      const results = await Promise.all(
        gens.map((gen, g) =>
          gen.call<ConnectResult>('connect', {
            host: '127.0.0.1',
            ports: { teltonika: server.ports.teltonika },
            teltonika: { first: g * per, count: per },
            batch: BATCH,
          }),
        ),
      );
      const seconds = (performance.now() - t0) / 1000;
      const loggedIn = results.reduce((n, r) => n + r.loggedIn, 0);
      const failed = results.reduce((n, r) => n + r.failed, 0);
      if (failed > 0)
        throw new Error(`${failed} trackers could not log in: ${results.find((r) => r.firstError)?.firstError}`);
      log(`${fmt(loggedIn)} trackers logged in (${seconds.toFixed(1)} s); idle for ${SETTLE_MS / 1000} s`);
      await sleep(SETTLE_MS);
      const after = await server.memory();
      const serverOpenFiles = readdirSync(`/proc/${server.pid}/fd`).length;
      const result: IdleResult = {
        name: 'idle-connections',
        machine: atStart,
        settings: { connections: CONNECTIONS, generators: GENERATORS, batch: BATCH },
        login: { loggedIn, seconds },
        rssBeforeKb: before.rssKb,
        rssAfterKb: after.rssKb,
        peakRssKb: after.hwmKb,
        perConnectionBytes: ((after.rssKb - before.rssKb) * 1024) / loggedIn,
        serverOpenFiles,
        goal: `RSS with ${fmt(CONNECTIONS)} idle trackers < 1 GiB`,
        met: after.rssKb * 1024 < GOAL_BYTES && after.hwmKb * 1024 < GOAL_BYTES,
      };
      printIdle(result);
      return result;
    } finally {
      for (const g of gens) await g.call('close').catch(() => 0);
      for (const g of gens) await g.stop();
      await server.stop();
    }
  } finally {
    data.remove();
  }
}

export function printIdle(r: IdleResult): void {
  const mib = (kb: number): string => `${fmt(kb / 1024, 1)} MiB`;
  printTable(
    `Idle connections (${fmt(r.login.loggedIn)} Teltonika trackers logged in, then silent; server VmRSS)`,
    ['measure', 'value'],
    [
      ['RSS before (no tracker)', mib(r.rssBeforeKb)],
      [`RSS after (${fmt(r.login.loggedIn)} idle trackers)`, mib(r.rssAfterKb)],
      ['peak RSS (VmHWM)', mib(r.peakRssKb)],
      ['per connection', `${fmt(r.perConnectionBytes / 1024, 1)} KiB`],
      ['server open files', fmt(r.serverOpenFiles)],
      ['goal', r.goal],
      ['met', r.met ? 'yes' : 'NO'],
    ],
  );
  console.log(`connect + login of ${fmt(r.login.loggedIn)} trackers: ${r.login.seconds.toFixed(1)} s`);
}
