/**
 * MQTT load generator, in its own process: raw `net` sockets, one per simulated device, speaking
 * MQTT 3.1.1 with packets encoded before the clock starts (test/helpers/mqtt-packets.ts). Each connection keeps
 * a bounded window of QoS 1 PUBLISHes in flight and sends the next ones as PUBACKs come back; the
 * pre-encoded packets of a connection lie back to back in one buffer, so a refill is one write of
 * a slice of it. No MQTT library on the hot path.
 */
import net from 'node:net';
import { serveCommands } from './child.js';
import { treeCpuMs } from './cost.js';
import {
  CONNACK_TYPE,
  PUBACK_TYPE,
  connectPacket,
  locationPayload,
  publishQos1Packet,
  splitPackets,
} from '../../test/helpers/mqtt-packets.js';

export interface MqttClientSpec {
  deviceId: string;
  clientId: string;
  username?: string;
  password?: string;
}

export interface MqttConnectArgs {
  host: string;
  port: number;
  clients: MqttClientSpec[];
  /** CONNECTs in flight at a time */
  batch: number;
}

export interface MqttConnectResult {
  connected: number;
  refused: number;
  returnCodes: Record<string, number>;
  failed: number;
  firstError?: string;
  seconds: number;
}

export interface MqttPrepareArgs {
  messagesPerConnection: number;
}

export interface MqttStreamArgs {
  /** QoS 1 messages in flight per connection */
  window: number;
  warmupMs: number;
  durationMs: number;
  /** start again at the first message once a connection has sent them all (relaying brokers) */
  cycle: boolean;
  /** processes whose CPU use during the window is reported (server under test, subscriber), each with every process below it */
  watch?: Record<string, number>;
  /** longest wait for the in-flight messages after the window */
  drainMs?: number;
}

export interface MqttStreamResult {
  windowAckedPerSec: number;
  windowAcked: number;
  /** PUBACKs received in all (warm-up and drain included): the messages the broker took */
  acked: number;
  /** PUBLISHes written in all */
  sent: number;
  /** messages still without PUBACK when the drain gave up */
  unacked: number;
  warmupSeconds: number;
  windowSeconds: number;
  drainSeconds: number;
  /** epoch ms (performance.timeOrigin based) of the window's edges, to line up other processes' counts */
  windowStartEpochMs: number;
  windowEndEpochMs: number;
  exhausted: number;
  errors: number;
  firstError?: string;
  closed: number;
  generatorCpuPct: number;
  watchedCpuPct: Record<string, number>;
  /** the same in ms of CPU time during the window (for the cost per message: bench/lib/cost.ts) */
  watchedCpuMs: Record<string, number>;
  /** PUBACKs per second, warm-up included */
  perSecond: number[];
  /** PUBACKs per connection */
  ackedPerConnection: { deviceId: string; acked: number }[];
}

interface Conn {
  spec: MqttClientSpec;
  socket: net.Socket;
  packets?: Buffer;
  packetBytes: number;
  count: number;
  next: number;
  inflight: number;
  acked: number;
  leftover: number;
  leftBytes: Buffer;
  exhausted: boolean;
  closed: boolean;
}

let conns: Conn[] = [];

const epochNow = (): number => performance.timeOrigin + performance.now();

function open(
  host: string,
  port: number,
  spec: MqttClientSpec,
): Promise<{ conn?: Conn; returnCode?: number; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, noDelay: true });
    let buf: Buffer = Buffer.alloc(0);
    let settled = false;
    const done = (r: { conn?: Conn; returnCode?: number; error?: string }) => {
      if (settled) return;
      settled = true;
      socket.removeAllListeners('data');
      clearTimeout(timer);
      resolve(r);
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done({ error: 'no CONNACK within 30 s' });
    }, 30_000);
    socket.on('connect', () =>
      socket.write(
        connectPacket({ clientId: spec.clientId, username: spec.username, password: spec.password, keepaliveS: 0 }),
      ),
    );
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 4) return;
      if (buf[0] !== CONNACK_TYPE) {
        socket.destroy();
        return done({ error: `expected CONNACK, got packet type 0x${buf[0].toString(16)}` });
      }
      const rc = buf[3];
      if (rc !== 0) {
        socket.destroy();
        return done({ returnCode: rc });
      }
      const conn: Conn = {
        spec,
        socket,
        packetBytes: 0,
        count: 0,
        next: 0,
        inflight: 0,
        acked: 0,
        leftover: 0,
        leftBytes: Buffer.alloc(0),
        exhausted: false,
        closed: false,
      };
      socket.on('close', () => (conn.closed = true));
      done({ conn, returnCode: 0 });
    });
    socket.on('error', (e) => done({ error: e.message }));
    socket.on('close', () => done({ error: 'closed before CONNACK' }));
  });
}

async function connect(a: MqttConnectArgs): Promise<MqttConnectResult> {
  const t0 = performance.now();
  conns = [];
  const returnCodes: Record<string, number> = {};
  let failed = 0;
  let firstError: string | undefined;
  for (let i = 0; i < a.clients.length; i += a.batch) {
    const results = await Promise.all(a.clients.slice(i, i + a.batch).map((c) => open(a.host, a.port, c)));
    for (const r of results) {
      if (r.returnCode !== undefined) returnCodes[r.returnCode] = (returnCodes[r.returnCode] ?? 0) + 1;
      if (r.conn) conns.push(r.conn);
      else if (r.error) {
        failed++;
        firstError ??= r.error;
      }
    }
  }
  const refused = Object.entries(returnCodes).reduce((n, [rc, c]) => (rc === '0' ? n : n + c), 0);
  return {
    connected: conns.length,
    refused,
    returnCodes,
    failed,
    firstError,
    seconds: (performance.now() - t0) / 1000,
  };
}

/** Encodes every connection's messages into one buffer per connection; all packets of a connection have the same length. */
function prepare(a: MqttPrepareArgs): { bytes: number; messages: number; packetBytes: number[] } {
  let bytes = 0;
  const sizes = new Set<number>();
  for (const c of conns) {
    const topic = `devices/${c.spec.deviceId}/locations`;
    const list: Buffer[] = [];
    for (let k = 0; k < a.messagesPerConnection; k++)
      list.push(publishQos1Packet(topic, (k % 65535) + 1, locationPayload(k)));
    const size = list[0].length;
    if (list.some((p) => p.length !== size)) throw new Error(`packets of ${c.spec.deviceId} differ in length`);
    c.packets = Buffer.concat(list);
    c.packetBytes = size;
    c.count = a.messagesPerConnection;
    c.next = 0;
    bytes += c.packets.length;
    sizes.add(size);
  }
  return { bytes, messages: conns.length * a.messagesPerConnection, packetBytes: [...sizes] };
}

function stream(a: MqttStreamArgs): Promise<MqttStreamResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const windowStart = t0 + a.warmupMs;
    const windowEnd = windowStart + a.durationMs;
    let phase: 'warmup' | 'window' | 'drain' | 'done' = 'warmup';
    let sending = true;
    let windowAcked = 0;
    let acked = 0;
    let sent = 0;
    let errors = 0;
    let firstError: string | undefined;
    const perSecond: number[] = [];
    let cpuAtStart = process.cpuUsage();
    const watched0: Record<string, number> = {};
    const watched: Record<string, number> = {};
    const watchedMs: Record<string, number> = {};
    let windowStartEpochMs = 0;
    let windowEndEpochMs = 0;
    let drainStarted = 0;
    let generatorCpuPct = 0;

    const fill = (c: Conn): void => {
      if (!sending || c.closed || c.exhausted) return;
      const want = a.window - c.inflight;
      if (want <= 0) return;
      let n = want;
      if (c.next + n > c.count) {
        if (!a.cycle) {
          n = c.count - c.next;
          if (n <= 0) {
            c.exhausted = true;
            return;
          }
        } else n = c.count - c.next; // write up to the end now, wrap on the next fill
      }
      c.socket.write(c.packets!.subarray(c.next * c.packetBytes, (c.next + n) * c.packetBytes));
      c.next += n;
      c.inflight += n;
      sent += n;
      if (c.next === c.count && a.cycle) {
        c.next = 0;
        if (c.inflight < a.window) fill(c);
      }
    };

    const onAcks = (c: Conn, n: number): void => {
      c.inflight -= n;
      c.acked += n;
      acked += n;
      if (phase === 'window') windowAcked += n;
      const sec = Math.floor((performance.now() - t0) / 1000);
      perSecond[sec] = (perSecond[sec] ?? 0) + n;
    };

    for (const c of conns) {
      c.socket.removeAllListeners('data');
      c.socket.on('data', (chunk: Buffer) => {
        // every packet the broker sends a publisher here is a 4-byte PUBACK: 0x40 0x02 id id
        let buf = c.leftBytes.length ? Buffer.concat([c.leftBytes, chunk]) : chunk;
        let n = 0;
        let i = 0;
        for (; i + 4 <= buf.length; i += 4) {
          if (buf[i] !== PUBACK_TYPE || buf[i + 1] !== 2) {
            // not a PUBACK: read it properly and report it
            c.leftBytes = splitPackets(buf.subarray(i), (type) => {
              errors++;
              firstError ??= `${c.spec.clientId}: unexpected packet type 0x${type.toString(16)}`;
            });
            buf = Buffer.alloc(0);
            i = 0;
            break;
          }
          n++;
        }
        if (buf.length) c.leftBytes = i < buf.length ? Buffer.from(buf.subarray(i)) : Buffer.alloc(0);
        if (n) {
          onAcks(c, n);
          fill(c);
        }
        if (phase === 'drain') checkDrained();
      });
      c.socket.on('error', (e) => {
        errors++;
        firstError ??= `${c.spec.clientId}: ${e.message}`;
      });
      c.socket.on('close', () => {
        if (phase === 'drain') checkDrained();
      });
    }

    const checkDrained = (): void => {
      if (phase !== 'drain') return;
      if (conns.every((c) => c.inflight === 0 || c.closed)) finish();
    };

    const finish = (): void => {
      if (phase === 'done') return;
      phase = 'done';
      clearTimeout(drainTimer);
      const exhausted = conns.filter((c) => c.exhausted).length;
      resolve({
        windowAckedPerSec: windowAcked / (a.durationMs / 1000),
        windowAcked,
        acked,
        sent,
        unacked: conns.reduce((n, c) => n + c.inflight, 0),
        warmupSeconds: a.warmupMs / 1000,
        windowSeconds: a.durationMs / 1000,
        drainSeconds: (performance.now() - drainStarted) / 1000,
        windowStartEpochMs,
        windowEndEpochMs,
        exhausted,
        errors,
        firstError,
        closed: conns.filter((c) => c.closed).length,
        generatorCpuPct,
        watchedCpuPct: watched,
        watchedCpuMs: watchedMs,
        perSecond: perSecond.map((n) => n ?? 0),
        ackedPerConnection: conns.map((c) => ({ deviceId: c.spec.deviceId, acked: c.acked })),
      });
    };

    let drainTimer: NodeJS.Timeout | undefined;
    setTimeout(
      () => {
        phase = 'window';
        windowStartEpochMs = epochNow();
        cpuAtStart = process.cpuUsage();
        for (const [k, pid] of Object.entries(a.watch ?? {})) watched0[k] = treeCpuMs(pid);
      },
      Math.max(0, windowStart - performance.now()),
    );
    setTimeout(
      () => {
        phase = 'drain';
        windowEndEpochMs = epochNow();
        sending = false;
        drainStarted = performance.now();
        const cpu = process.cpuUsage(cpuAtStart);
        generatorCpuPct = ((cpu.user + cpu.system) / 1000 / a.durationMs) * 100;
        for (const [k, pid] of Object.entries(a.watch ?? {})) {
          watchedMs[k] = treeCpuMs(pid) - watched0[k];
          watched[k] = (watchedMs[k] / a.durationMs) * 100;
        }
        drainTimer = setTimeout(finish, a.drainMs ?? 30_000);
        checkDrained();
      },
      Math.max(0, windowEnd - performance.now()),
    );

    for (const c of conns) fill(c);
  });
}

async function close(): Promise<void> {
  // DISCONNECT, then close
  await Promise.all(
    conns.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.closed) return resolve();
          c.socket.once('close', () => resolve());
          c.socket.end(Buffer.from([0xe0, 0x00]));
          setTimeout(() => {
            c.socket.destroy();
            resolve();
          }, 5000).unref();
        }),
    ),
  );
  conns = [];
}

serveCommands({ connect, prepare, stream, close });
