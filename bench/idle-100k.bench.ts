/**
 * 100,000 idle trackers on one box (BENCHMARKS.md "idle-100k"): 90,000 Teltonika trackers over TCP
 * across 6 gateway processes (BENCH_GATEWAY_PROCESSES) and 10,000 MQTT devices log in and stay
 * silent. Reported: the time until all are logged in, and VmRSS summed over the core and its
 * gateway processes. Generators each use loopback addresses of their own (at most PER_ADDRESS
 * each): binding a source address instead made bind()'s port search the bottleneck. trackgate runs
 * built (dist/), as `npm start` runs it: tsx's loader costs each process tens of MiB no user's
 * process carries.
 */
import { readdirSync } from 'node:fs';
import { childPids, startChild, memoryOf, type Child } from './lib/child.js';
import { teltonikaImei } from './lib/frames.js';
import type { ConnectResult } from './lib/tracker-generator.js';
import type { MqttConnectResult } from './lib/mqtt-generator.js';
import { prepareDataDir, startServerProcess, tempDir } from './lib/trackgate.js';
import { hashDevicePassword } from '../core/secrets.js';
import { QUICK, fmt, log, machine, printTable, type Machine } from './lib/report.js';

/** BENCH_IDLE_TCP, BENCH_IDLE_MQTT, BENCH_GATEWAY_PROCESSES: other sizes, for trying things out */
const TCP = Number(process.env.BENCH_IDLE_TCP ?? (QUICK ? 4_500 : 90_000));
const MQTT = Number(process.env.BENCH_IDLE_MQTT ?? (QUICK ? 500 : 10_000));
const GATEWAY_PROCESSES = Number(process.env.BENCH_GATEWAY_PROCESSES ?? (QUICK ? 2 : 6));
/** TCP generators: each under its process's 20,000 files and its source address's ports */
const TCP_GENERATORS = Math.max(1, Math.ceil(TCP / 18_000));
/**
 * connections at most from one generator to one destination address: Linux takes a connect's
 * source port from the even half of the ephemeral range first (about 14,000 here), and past it
 * every connect scans the range in the kernel (measured: the generators' system time at a whole
 * CPU once they held 12,000-15,000 connections each to one address, and the same trackgate took
 * 133-147 s for the storm instead of 89 s)
 */
const PER_ADDRESS = 5_000;
const BATCH = 200;
const SETTLE_MS = 5_000;
const GOAL_BYTES = 1.5 * 2 ** 30;
const GOAL_LOGIN_SECONDS = 60;
const MQTT_PASSWORD = 'bench-mqtt-password';

export interface Idle100kResult {
  name: 'idle-100k';
  machine: Machine;
  settings: { tcp: number; mqtt: number; gatewayProcesses: number; tcpGenerators: number; batch: number };
  login: { tcp: number; mqtt: number; seconds: number };
  /** kB, VmRSS summed over trackgate's processes */
  rssBeforeKb: number;
  rssAfterKb: number;
  processes: { pid: number; role: 'core' | 'gateway'; rssKb: number; openFiles: number }[];
  perConnectionBytes: number;
  goal: string;
  met: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mqttId = (i: number): string => `mq${String(i).padStart(8, '0')}`;

async function processes(core: number): Promise<Idle100kResult['processes']> {
  const list: Idle100kResult['processes'] = [];
  for (const [pid, role] of [[core, 'core'] as const, ...childPids(core).map((p) => [p, 'gateway'] as const)]) {
    try {
      list.push({ pid, role, rssKb: (await memoryOf(pid)).rssKb, openFiles: readdirSync(`/proc/${pid}/fd`).length });
    } catch {
      // gone meanwhile
    }
  }
  return list;
}

const sum = (ps: Idle100kResult['processes']): number => ps.reduce((n, p) => n + p.rssKb, 0);

export async function run(): Promise<Idle100kResult> {
  const atStart = machine();
  const data = tempDir('idle100k');
  try {
    const tcpIds = Array.from({ length: TCP }, (_, i) => teltonikaImei(i));
    const mqttIds = Array.from({ length: MQTT }, (_, i) => mqttId(i));
    log(`preparing: ${fmt(TCP)} TCP devices, ${fmt(MQTT)} MQTT devices`);
    const hash = hashDevicePassword(MQTT_PASSWORD);
    await prepareDataDir(data.dir, [...tcpIds, ...mqttIds], async (db) => {
      for (let i = 0; i < mqttIds.length; i += 500)
        await db('devices')
          .whereIn('id', mqttIds.slice(i, i + 500))
          .update({ mqtt_password_hash: hash });
    });
    const server = await startServerProcess(
      data.dir,
      {
        TRACKGATE_HOST: '0.0.0.0',
        TRACKGATE_TELTONIKA_PORT: '0',
        TRACKGATE_MQTT_PORT: '0',
        TRACKGATE_GATEWAY_PROCESSES: String(GATEWAY_PROCESSES),
      },
      undefined,
      { compiled: true },
    );
    const gens: Child[] = [];
    try {
      await sleep(SETTLE_MS);
      const before = await processes(server.pid);
      log(
        `trackgate before: ${before.length} processes, ${fmt(sum(before) / 1024, 1)} MiB; connecting ${fmt(TCP)} TCP trackers from ${TCP_GENERATORS} processes and ${fmt(MQTT)} MQTT devices from one, ${BATCH} at a time each`,
      );
      for (let g = 0; g < TCP_GENERATORS; g++) gens.push(await startChild('tracker-generator.ts'));
      const mqttGen = await startChild('mqtt-generator.ts');
      gens.push(mqttGen);
      const per = Math.ceil(TCP / TCP_GENERATORS);
      const addressesPer = Math.ceil(per / PER_ADDRESS);
      /** generator g's destination addresses: 127.0.0.2 onwards, each generator its own */
      const addresses = (g: number): string[] =>
        Array.from({ length: addressesPer }, (_, k) => `127.0.0.${2 + g * addressesPer + k}`);
      const t0 = performance.now();
      const [tcpResults, mqttResult] = await Promise.all([
        Promise.all(
          gens.slice(0, TCP_GENERATORS).map((gen, g) =>
            gen.call<ConnectResult>('connect', {
              host: addresses(g),
              ports: { teltonika: server.ports.teltonika },
              teltonika: { first: g * per, count: Math.min(per, TCP - g * per) },
              batch: BATCH,
            }),
          ),
        ),
        mqttGen.call<MqttConnectResult>('connect', {
          host: `127.0.0.${2 + TCP_GENERATORS * addressesPer}`,
          port: server.ports.mqtt,
          batch: BATCH,
          clients: mqttIds.map((id) => ({
            deviceId: id,
            clientId: `${id}-idle`,
            username: id,
            password: MQTT_PASSWORD,
          })),
        }),
      ]);
      const seconds = (performance.now() - t0) / 1000;
      const tcp = tcpResults.reduce((n, r) => n + r.loggedIn, 0);
      const failed = tcpResults.reduce((n, r) => n + r.failed, 0);
      if (failed > 0) {
        for (const line of server
          .log()
          .filter((l) => /"level":(40|50|60)/.test(l))
          .slice(-20))
          console.error(`trackgate: ${line}`);
        throw new Error(`${failed} trackers could not log in: ${tcpResults.find((r) => r.firstError)?.firstError}`);
      }
      if (mqttResult.connected !== MQTT)
        throw new Error(
          `${MQTT - mqttResult.connected} MQTT devices not connected: ${JSON.stringify(mqttResult.returnCodes)} ${mqttResult.firstError ?? ''}`,
        );
      log(
        `${fmt(tcp)} TCP trackers (generators done after ${tcpResults.map((r) => r.seconds.toFixed(1)).join(' / ')} s) and ${fmt(mqttResult.connected)} MQTT devices (${mqttResult.seconds.toFixed(1)} s) logged in (${seconds.toFixed(1)} s); idle for ${SETTLE_MS / 1000} s`,
      );
      await sleep(SETTLE_MS);
      const after = await processes(server.pid);
      const total = tcp + mqttResult.connected;
      const result: Idle100kResult = {
        name: 'idle-100k',
        machine: atStart,
        settings: {
          tcp: TCP,
          mqtt: MQTT,
          gatewayProcesses: GATEWAY_PROCESSES,
          tcpGenerators: TCP_GENERATORS,
          batch: BATCH,
        },
        login: { tcp, mqtt: mqttResult.connected, seconds },
        rssBeforeKb: sum(before),
        rssAfterKb: sum(after),
        processes: after,
        perConnectionBytes: ((sum(after) - sum(before)) * 1024) / total,
        goal: `${fmt(TCP + MQTT)} idle trackers: RSS of all trackgate processes < 1.5 GiB; all logged in within ${GOAL_LOGIN_SECONDS} s`,
        met: sum(after) * 1024 < GOAL_BYTES && seconds <= GOAL_LOGIN_SECONDS && total === TCP + MQTT,
      };
      const mib = (kb: number): string => `${fmt(kb / 1024, 1)} MiB`;
      printTable(
        `Idle trackers (${fmt(tcp)} Teltonika over TCP in ${GATEWAY_PROCESSES} gateway processes + ${fmt(mqttResult.connected)} MQTT in the core; VmRSS)`,
        ['measure', 'value'],
        [
          ['RSS before, all processes', mib(result.rssBeforeKb)],
          [`RSS after, all processes`, mib(result.rssAfterKb)],
          ...after.map((p) => [`  ${p.role} ${p.pid}`, `${mib(p.rssKb)}, ${fmt(p.openFiles)} open files`]),
          ['per connection', `${fmt(result.perConnectionBytes / 1024, 1)} KiB`],
          ['all logged in after', `${seconds.toFixed(1)} s`],
          ['goal', result.goal],
          ['met', result.met ? 'yes' : 'NO'],
        ],
      );
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
