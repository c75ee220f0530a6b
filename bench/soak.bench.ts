/**
 * Soak (BENCHMARKS.md "soak"): two accounts' trackers, MQTT devices and REST clients report for
 * several minutes while a tenant of account A attacks and the run's own PostgreSQL and Redis are
 * stopped, started, frozen and thawed. The server runs in its own process, pinned to the last CPU.
 * At the end, straight from the database: every acknowledged position must be stored. Reported per
 * phase: account B's acknowledged rates and the server's RSS. SOAK_SECONDS (default 240) sets the
 * length; phases scale with it.
 */
import net from 'node:net';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import pg from 'pg';
import { loadConfig } from '../config/config.js';
import { openStorage } from '../main.js';
import { systemClock } from '../core/clock.js';
import { createAccountsService } from '../core/accounts/accounts.service.js';
import { startOwnPostgres, startOwnRedis, type OwnServer } from '../test/helpers/own-services.js';
import { ADMIN_KEY, benchEnv, startServerProcess, tempDir, type ServerProcess } from './lib/trackgate.js';
import { teltonikaAvl, teltonikaImei, teltonikaLogin } from './lib/frames.js';
import { connectPacket, remainingLength, subscribePacket } from '../test/helpers/mqtt-packets.js';
import { fmt, log, machine, printTable } from './lib/report.js';
import { linkBombBytes, sendLinkBytes } from '../test/helpers/link-bomb.js';
import { sendGroupCopyAttack } from '../test/helpers/patch-attack.js';
import { execFileSync } from 'node:child_process';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 240);
/** after the attack, the honest load alone this long: the RSS must come back within 10 % of where it was after calm */
const SETTLE_S = 30;
const TRACKERS_PER_ACCOUNT = 10;
const MQTT_PER_ACCOUNT = 5;
const REST_PER_ACCOUNT = 5;
const KEY_B = 'bench-admin-key-b-0123456789abcdef';
const MQTT_PASSWORD = 'soak-mqtt-password';
const ACK_TIMEOUT_MS = 5000;
const GATEWAY_SECRET = 'soak-gateway-secret-0123456789abcdef';
/** the rule storm: rules created on one device of A until the service says no, and the batch it gets */
const STORM_RULES = 1000;
const STORM_BATCH = 200;

type Account = 'A' | 'B';
type Source = 'tracker' | 'mqtt' | 'rest';

interface Phase {
  name: string;
  from: number;
  to: number;
}

/** Phase boundaries as fractions of the run: calm, attack, PG down, Redis down, Redis frozen, PG frozen, recovery. */
function phases(total: number): Phase[] {
  const at = (f: number) => Math.round(total * f);
  return [
    { name: 'calm', from: 0, to: at(0.12) },
    { name: 'attack', from: at(0.12), to: at(0.3) },
    { name: 'attack + PostgreSQL down', from: at(0.3), to: at(0.42) },
    { name: 'attack + Redis down', from: at(0.42), to: at(0.54) },
    { name: 'attack + Redis frozen', from: at(0.54), to: at(0.66) },
    { name: 'attack + PostgreSQL frozen', from: at(0.66), to: at(0.76) },
    { name: 'recovery (attack goes on)', from: at(0.76), to: total },
    { name: 'after the attack', from: total, to: total + SETTLE_S },
  ];
}

/** What was acknowledged, per device: fix times in ms. */
class Ledger {
  readonly acked = new Map<string, Set<number>>();
  readonly events: { t: number; account: Account; source: Source }[] = [];
  constructor(private readonly t0: number) {}
  ack(account: Account, source: Source, deviceId: string, fixMs: number): void {
    let set = this.acked.get(deviceId);
    if (!set) this.acked.set(deviceId, (set = new Set()));
    set.add(fixMs);
    this.events.push({ t: (Date.now() - this.t0) / 1000, account, source });
  }
  total(): number {
    let n = 0;
    for (const s of this.acked.values()) n += s.size;
    return n;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Teltonika tracker: logs in, sends one 1-record AVL frame at a time, resends what was not acknowledged (new connection after a timeout or a close). */
function runTracker(o: {
  port: number;
  imei: string;
  account: Account;
  ledger: Ledger;
  stop: () => boolean;
  intervalMs: number;
  firstFixMs: number;
}): Promise<void> {
  let fix = o.firstFixMs;
  return (async () => {
    while (!o.stop()) {
      const socket = net.connect({ host: '127.0.0.1', port: o.port });
      socket.on('error', () => {});
      let buffer: Buffer = Buffer.alloc(0);
      let waiter: ((b: Buffer | null) => void) | undefined;
      socket.on('data', (d) => {
        buffer = Buffer.concat([buffer, d]);
        waiter?.(buffer);
      });
      socket.on('close', () => waiter?.(null));
      const read = (bytes: number): Promise<Buffer | null> =>
        new Promise((resolve) => {
          const timer = setTimeout(() => ((waiter = undefined), resolve(null)), ACK_TIMEOUT_MS);
          const check = (b: Buffer | null) => {
            if (b === null || b.length >= bytes) {
              clearTimeout(timer);
              waiter = undefined;
              if (b === null) return resolve(null);
              const out = b.subarray(0, bytes);
              buffer = b.subarray(bytes);
              resolve(out);
            }
          };
          waiter = check;
          check(buffer.length ? buffer : socket.destroyed ? null : Buffer.alloc(0));
        });
      const connected = await new Promise<boolean>((r) => {
        socket.once('connect', () => r(true));
        socket.once('error', () => r(false));
      });
      if (!connected) {
        await sleep(500);
        continue;
      }
      socket.write(teltonikaLogin(o.imei));
      const login = await read(1);
      if (login?.[0] !== 1) {
        socket.destroy();
        await sleep(500);
        continue;
      }
      while (!o.stop()) {
        socket.write(teltonikaAvl(1, fix, 1000, fix / 1000));
        const ack = await read(4);
        if (!ack) break; // not acknowledged: resend the same record on a new connection
        if (ack.readUInt32BE(0) === 1) {
          o.ledger.ack(o.account, 'tracker', o.imei, fix);
          fix += 1000;
        }
        await sleep(o.intervalMs);
      }
      socket.destroy();
      await sleep(200);
    }
  })();
}

/** An MQTT device publishing QoS 1 locations; a PUBACK is an acknowledgement. It retries after a refused login too (CONNACK 3 while the database is down), as devices do. */
function runMqttDevice(o: {
  port: number;
  id: string;
  account: Account;
  ledger: Ledger;
  stop: () => boolean;
  intervalMs: number;
  firstFixMs: number;
}): Promise<void> {
  const client: MqttClient = mqtt.connect(`mqtt://127.0.0.1:${o.port}`, {
    clientId: o.id,
    username: o.id,
    password: MQTT_PASSWORD,
    reconnectPeriod: 500,
    connectTimeout: 5000,
    clean: true,
    reconnectOnConnackError: true,
  });
  client.on('error', () => {});
  let fix = o.firstFixMs;
  return (async () => {
    while (!o.stop()) {
      if (client.connected) {
        const fixMs = fix;
        fix += 1000;
        const body = JSON.stringify({
          dateTime: new Date(fixMs).toISOString(),
          latitude: 40.4 + (fixMs % 1000) / 1e4,
          longitude: -3.7,
          speed: 10,
        });
        client.publish(`devices/${o.id}/locations`, body, { qos: 1 }, (err) => {
          if (!err) o.ledger.ack(o.account, 'mqtt', o.id, fixMs);
        });
      }
      await sleep(o.intervalMs);
    }
    await client.endAsync(true).catch(() => {});
  })();
}

/** A REST integration posting one location at a time; a 201 is an acknowledgement. */
function runRestClient(o: {
  base: string;
  token: () => string;
  id: string;
  account: Account;
  ledger: Ledger;
  stop: () => boolean;
  intervalMs: number;
  firstFixMs: number;
}): Promise<void> {
  let fix = o.firstFixMs;
  return (async () => {
    while (!o.stop()) {
      const fixMs = fix;
      fix += 1000;
      try {
        const res = await fetch(`${o.base}/api/devices/${o.id}/locations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${o.token()}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            location: { dateTime: new Date(fixMs).toISOString(), latitude: 41.4, longitude: 2.17, speed: 20 },
          }),
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (res.status === 201) o.ledger.ack(o.account, 'rest', o.id, fixMs);
      } catch {
        /* timed out or refused: not acknowledged */
      }
      await sleep(o.intervalMs);
    }
  })();
}

interface HostileCounts {
  garbageBytes: number;
  oversizedConnects: number;
  poisonedBodies: number;
  poisonedRefused: number;
  nulIds: number;
  linkBombs: number;
  linkBombsClosed: number;
  patchAttacks: number;
  patchAttacksRefused: number;
  stormRules: number;
  stormBatches: number;
  zigzagZonePuts: number;
}

/** The attack: everything a hostile tenant of account A and anyone with a socket can send. */
function runHostile(o: { server: ServerProcess; token: () => string; active: () => boolean; stop: () => boolean }): {
  counts: HostileCounts;
  done: Promise<void>;
} {
  const counts: HostileCounts = {
    garbageBytes: 0,
    oversizedConnects: 0,
    poisonedBodies: 0,
    poisonedRefused: 0,
    nulIds: 0,
    linkBombs: 0,
    linkBombsClosed: 0,
    patchAttacks: 0,
    patchAttacksRefused: 0,
    stormRules: 0,
    stormBatches: 0,
    zigzagZonePuts: 0,
  };
  const ports = o.server.ports;
  const garbage = async (port: number) => {
    while (!o.stop()) {
      if (!o.active()) {
        await sleep(500);
        continue;
      }
      const s = net.connect({ host: '127.0.0.1', port });
      s.on('error', () => {});
      await new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          if (s.destroyed || o.stop() || !o.active()) {
            clearInterval(timer);
            s.destroy();
            return resolve();
          }
          const chunk = randomBytes(16 * 1024);
          counts.garbageBytes += chunk.length;
          s.write(chunk);
        }, 20);
        s.once('close', () => {
          clearInterval(timer);
          resolve();
        });
      });
      await sleep(100);
    }
  };
  const oversized = async () => {
    while (!o.stop()) {
      if (o.active()) {
        const s = net.connect({ host: '127.0.0.1', port: ports.mqtt });
        s.on('error', () => {});
        // CONNECT declaring 268 MB, then 1 MB of it: a broker that buffers before login holds it all
        s.write(Buffer.concat([Buffer.from([0x10]), remainingLength(268_435_455), randomBytes(1024 * 1024)]));
        counts.oversizedConnects++;
        setTimeout(() => s.destroy(), 3000);
      }
      await sleep(1000);
    }
  };
  const slowSubscriber = async () => {
    // an API user of account A subscribes to everything of its account and never reads
    const s = net.connect({ host: '127.0.0.1', port: ports.mqtt });
    s.on('error', () => {});
    s.write(
      Buffer.concat([
        connectPacket({ clientId: `admin-slow-${Date.now()}`, username: 'admin', password: ADMIN_KEY, keepaliveS: 0 }),
        subscribePacket(1, 'live/#', 0),
      ]),
    );
    s.pause();
    while (!o.stop()) await sleep(500);
    s.destroy();
  };
  const poisoned = async () => {
    // 6,000 levels of nesting, written as text (JSON.stringify itself overflows at that depth)
    const deep = `${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}`;
    const bodies = [
      `{"location":{"dateTime":"${new Date().toISOString()}","latitude":1,"longitude":1,"attributes":${deep}}}`,
      JSON.stringify({
        location: { dateTime: new Date().toISOString(), latitude: 1, longitude: 1, attributes: { note: 'a\u0000b' } },
      }),
      JSON.stringify({ location: { dateTime: '9999-01-01T00:00:00Z', latitude: 1, longitude: 1 } }),
      JSON.stringify({ location: { dateTime: '2026-02-30T10:00:00Z', latitude: 1, longitude: 1 } }),
    ];
    let i = 0;
    while (!o.stop()) {
      if (o.active()) {
        try {
          const res = await fetch(`${o.server.base}/api/devices/a-rest-0/locations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${o.token()}`, 'content-type': 'application/json' },
            body: bodies[i++ % bodies.length],
            signal: AbortSignal.timeout(10_000),
          });
          await res.arrayBuffer();
          counts.poisonedBodies++;
          if (res.status >= 400 && res.status < 500) counts.poisonedRefused++;
        } catch {
          /* the server may be busy with an outage */
        }
      }
      await sleep(200);
    }
  };
  const nulIds = async () => {
    if (!ports.osmand) return;
    while (!o.stop()) {
      if (o.active()) {
        await fetch(
          `http://127.0.0.1:${ports.osmand}/?id=abc%00def&lat=1&lon=1&timestamp=${Math.floor(Date.now() / 1000)}`,
          { signal: AbortSignal.timeout(10_000) },
        )
          .then((r) => r.arrayBuffer())
          .catch(() => {});
        counts.nulIds++;
      }
      await sleep(250);
    }
  };
  const api = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
    fetch(`${o.server.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${o.token()}`, 'content-type': contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    }).then(async (r) => ({ status: r.status, body: (await r.json().catch(() => ({}))) as Record<string, unknown> }));
  const linkBombs = async () => {
    // a peer without the secret, on the edge link and on the gateway processes' own link
    const targets = [ports.gatewayLink, ...localLinkPorts(o.server)].filter((p): p is number => !!p);
    while (!o.stop()) {
      if (o.active()) {
        for (const port of targets) {
          counts.linkBombs++;
          if ((await sendLinkBytes(port, linkBombBytes(), '127.0.0.1', 5000).catch(() => 'open')) === 'closed')
            counts.linkBombsClosed++;
        }
      }
      await sleep(2000);
    }
  };
  const patches = async () => {
    // a write user's JSON Patch that doubles a group thirty times
    let group: string | undefined;
    while (!o.stop()) {
      if (o.active()) {
        try {
          group ??= (await api('POST', '/api/groups', { name: 'soak doubling', devices: ['a-rest-2', 'a-rest-3'] }))
            .body.id as string | undefined;
          if (group) {
            const answer = await sendGroupCopyAttack(o.server.base, o.token(), group, 30_000);
            counts.patchAttacks++;
            if (answer.status >= 400 && answer.status < 500) counts.patchAttacksRefused++;
          }
        } catch {
          /* the server may be busy with an outage */
        }
      }
      await sleep(1000);
    }
  };
  const ruleStorm = async () => {
    // as many SpeedLimit rules on one device as the service takes, then batches of alternating speeds
    while (!o.stop() && !o.active()) await sleep(500);
    for (let i = 0; i < STORM_RULES && !o.stop(); i++) {
      const r = await api('POST', '/api/alertRules', {
        name: `storm ${i}`,
        alertName: 'SpeedLimit',
        devices: ['a-rest-4'],
        params: { speed: 50 },
      }).catch(() => ({ status: 0, body: {} }));
      if (r.status === 201 || r.status === 200) counts.stormRules++;
      else if (r.status >= 400 && r.status < 500) break;
    }
    let minute = 0;
    while (!o.stop()) {
      if (o.active()) {
        const start = Date.now() - 30 * 86_400_000 + minute * 60_000 * STORM_BATCH;
        minute++;
        const locations = Array.from({ length: STORM_BATCH }, (_, k) => ({
          dateTime: new Date(start + k * 60_000).toISOString(),
          latitude: 40,
          longitude: -3,
          speed: k % 2 ? 120 : 10,
        }));
        await api('POST', '/api/devices/a-rest-4/locations', { locations }).catch(() => undefined);
        counts.stormBatches++;
      }
      await sleep(2000);
    }
  };
  const zigzagZone = async () => {
    // a valid zone of 9,999 points whose edges all overlap in longitude, stored again and again
    const ring: number[][] = [];
    for (let k = 0; k < 9998; k++) ring.push([k % 2 ? 1 : 0, k * 0.0001]);
    ring.push([-1, 1], [-1, 0]);
    ring[ring.length - 1] = [...ring[0]];
    const zone = { name: 'soak zig-zag', type: 'polygon', polygon: ring };
    let id: string | undefined;
    while (!o.stop()) {
      if (o.active()) {
        try {
          if (!id) id = ((await api('POST', '/api/zones', zone)).body.zone as { id?: string } | undefined)?.id;
          else await api('PUT', `/api/zones/${id}`, zone);
          counts.zigzagZonePuts++;
        } catch {
          /* the server may be busy with an outage */
        }
      }
      await sleep(1000);
    }
  };
  const done = Promise.all([
    garbage(ports.teltonika),
    garbage(ports.gt06),
    oversized(),
    slowSubscriber(),
    poisoned(),
    nulIds(),
    linkBombs(),
    patches(),
    ruleStorm(),
    zigzagZone(),
  ]).then(() => {});
  return { counts, done };
}

/** The loopback TCP ports the server listens on besides its public ones: its gateway processes' link. */
function localLinkPorts(server: ServerProcess): number[] {
  const known = new Set(Object.values(server.ports));
  try {
    const lines = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' }).split('\n');
    return lines
      .filter((l) => l.includes(`pid=${server.pid},`) && /127\.0\.0\.1:\d+/.test(l))
      .map((l) => Number(/127\.0\.0\.1:(\d+)/.exec(l)![1]))
      .filter((p) => !known.has(p));
  } catch {
    return [];
  }
}

async function token(base: string, userName: string, apiKey: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${base}/api/Auth/Token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName, apiKey }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { token?: string };
    return body.token;
  } catch {
    return undefined;
  }
}

export async function run(): Promise<object> {
  // Whatever was started is stopped, also when the run fails half-way.
  const cleanups: (() => unknown)[] = [];
  try {
    return await soak(cleanups);
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
  }
}

async function soak(cleanups: (() => unknown)[]): Promise<object> {
  const pinned = os.cpus().length >= 2;
  const pgServer: OwnServer = await startOwnPostgres();
  cleanups.push(() => pgServer.stop());
  const redisServer: OwnServer = await startOwnRedis();
  cleanups.push(() => redisServer.stop());
  const data = tempDir('soak');
  cleanups.push(() => data.remove());
  const databaseUrl = pgServer.url;
  const env = {
    TRACKGATE_DATABASE_URL: databaseUrl,
    TRACKGATE_REDIS_URL: redisServer.url,
    TRACKGATE_TELTONIKA_PORT: '0',
    TRACKGATE_GT06_PORT: '0',
    TRACKGATE_OSMAND_PORT: '0',
    TRACKGATE_MQTT_PORT: '0',
    TRACKGATE_RATE_LIMIT: '0',
    TRACKGATE_LOG_LEVEL: 'warn',
    TRACKGATE_GATEWAY_LINK_PORT: '0',
    TRACKGATE_GATEWAY_SECRET: GATEWAY_SECRET,
  };
  // Two accounts, made before the server starts (the server then bootstraps nothing).
  const db = await openStorage(loadConfig(benchEnv(data.dir, env)));
  const accounts = createAccountsService(db, systemClock);
  await accounts.create({ name: 'Account A', licenses: 1000, adminUser: 'admin', adminApiKey: ADMIN_KEY });
  await accounts.create({ name: 'Account B', licenses: 1000, adminUser: 'admin-b', adminApiKey: KEY_B });
  await db.destroy();

  // The server logs `listening` at info; warn keeps the soak's own log small but hides that line, so start at info.
  const server = await startServerProcess(
    data.dir,
    { ...env, TRACKGATE_LOG_LEVEL: 'info' },
    pinned ? String(os.cpus().length - 1) : undefined,
  );
  cleanups.push(() => server.stop());
  let serverExited = false;
  let exitNote = '';
  const alive = setInterval(() => {
    try {
      process.kill(server.pid, 0);
    } catch {
      if (!serverExited) exitNote = server.log().slice(-20).join('\n');
      serverExited = true;
    }
  }, 500);
  cleanups.push(() => clearInterval(alive));
  const tokens: Record<Account, string> = {
    A: (await token(server.base, 'admin', ADMIN_KEY))!,
    B: (await token(server.base, 'admin-b', KEY_B))!,
  };
  const refreshTokens = setInterval(async () => {
    tokens.A = (await token(server.base, 'admin', ADMIN_KEY)) ?? tokens.A;
    tokens.B = (await token(server.base, 'admin-b', KEY_B)) ?? tokens.B;
  }, 60_000);
  cleanups.push(() => clearInterval(refreshTokens));

  const devices: Record<Account, { trackers: string[]; mqtt: string[]; rest: string[] }> = {
    A: { trackers: [], mqtt: [], rest: [] },
    B: { trackers: [], mqtt: [], rest: [] },
  };
  for (const account of ['A', 'B'] as Account[]) {
    const lower = account.toLowerCase();
    for (let i = 0; i < TRACKERS_PER_ACCOUNT; i++)
      devices[account].trackers.push(teltonikaImei((account === 'A' ? 0 : 500) + i));
    for (let i = 0; i < MQTT_PER_ACCOUNT; i++) devices[account].mqtt.push(`${lower}-mqtt-${i}`);
    for (let i = 0; i < REST_PER_ACCOUNT; i++) devices[account].rest.push(`${lower}-rest-${i}`);
    for (const id of [...devices[account].trackers, ...devices[account].mqtt, ...devices[account].rest]) {
      const body = { id, name: id, ...(devices[account].mqtt.includes(id) ? { mqttPassword: MQTT_PASSWORD } : {}) };
      const res = await fetch(`${server.base}/api/devices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens[account]}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`device ${id}: ${res.status} ${await res.text()}`);
    }
  }

  const plan = phases(SECONDS);
  const t0 = Date.now();
  const ledger = new Ledger(t0);
  const elapsed = () => (Date.now() - t0) / 1000;
  let stopping = false;
  const stop = () => stopping;
  const firstFixMs = Date.now() - 3600_000;
  const load: Promise<void>[] = [];
  for (const account of ['A', 'B'] as Account[]) {
    devices[account].trackers.forEach((imei, i) =>
      load.push(
        runTracker({
          port: server.ports.teltonika,
          imei,
          account,
          ledger,
          stop,
          intervalMs: 200,
          firstFixMs: firstFixMs + i,
        }),
      ),
    );
    devices[account].mqtt.forEach((id) =>
      load.push(runMqttDevice({ port: server.ports.mqtt, id, account, ledger, stop, intervalMs: 500, firstFixMs })),
    );
    devices[account].rest.forEach((id) =>
      load.push(
        runRestClient({
          base: server.base,
          token: () => tokens[account],
          id,
          account,
          ledger,
          stop,
          intervalMs: 500,
          firstFixMs,
        }),
      ),
    );
  }
  const attack = plan[1].from;
  // the attack ends with the run's phases; the honest load goes on for SETTLE_S, to see the RSS come back
  let attackOver = false;
  const hostile = runHostile({
    server,
    token: () => tokens.A,
    active: () => elapsed() >= attack,
    stop: () => stopping || attackOver,
  });

  const rss: { t: number; kb: number }[] = [];
  const sampler = setInterval(async () => {
    if (serverExited) return;
    const m = await server.memory().catch(() => undefined);
    if (m) rss.push({ t: elapsed(), kb: m.rssKb });
  }, 1000);
  cleanups.push(() => clearInterval(sampler));

  const chaos: { t: number; what: string }[] = [];
  const act = async (what: string, f: () => Promise<void> | void) => {
    chaos.push({ t: Math.round(elapsed()), what });
    log(`soak: ${what}`);
    await f();
  };
  const until = async (t: number) => {
    while (elapsed() < t && !serverExited) await sleep(200);
  };
  log(`soak: ${SECONDS} s; phases ${plan.map((p) => `${p.name} ${p.from}-${p.to}s`).join(', ')}`);
  await until(plan[2].from);
  await act('PostgreSQL killed', () => pgServer.kill());
  await until(plan[2].to - 2);
  await act('PostgreSQL started', () => pgServer.start());
  await until(plan[3].from);
  await act('Redis killed', () => redisServer.kill());
  await until(plan[3].to - 2);
  await act('Redis started (empty)', () => redisServer.start());
  await until(plan[4].from);
  await act('Redis frozen (SIGSTOP)', () => redisServer.freeze());
  await until(plan[4].to - 2);
  await act('Redis thawed', () => redisServer.thaw());
  await until(plan[5].from);
  await act('PostgreSQL frozen (SIGSTOP)', () => pgServer.freeze());
  await until(plan[5].to - 2);
  await act('PostgreSQL thawed', () => pgServer.thaw());
  await until(SECONDS);
  attackOver = true;
  await act('attack over', () => hostile.done);
  await until(SECONDS + SETTLE_S);

  stopping = true;
  await Promise.all(load);
  clearInterval(sampler);
  clearInterval(refreshTokens);
  await sleep(2000);

  // Acknowledged = stored, read straight from the database.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const stored = new Map<string, Set<number>>();
  for (const row of (await client.query('select device_id, date_time from locations')).rows as {
    device_id: string;
    date_time: string;
  }[]) {
    let set = stored.get(row.device_id);
    if (!set) stored.set(row.device_id, (set = new Set()));
    set.add(Number(row.date_time));
  }
  await client.end();
  let missing = 0;
  const missingBySource: Record<Source, number> = { tracker: 0, mqtt: 0, rest: 0 };
  const sourceOf = (id: string): Source =>
    id.includes('-mqtt-') ? 'mqtt' : id.includes('-rest-') ? 'rest' : 'tracker';
  for (const [deviceId, fixes] of ledger.acked) {
    const have = stored.get(deviceId) ?? new Set();
    for (const f of fixes) {
      if (!have.has(f)) {
        missing++;
        missingBySource[sourceOf(deviceId)]++;
      }
    }
  }
  const storedRowsOfA = [...stored.entries()]
    .filter(([id]) => devices.A.trackers.includes(id) || id.startsWith('a-'))
    .reduce((n, [, s]) => n + s.size, 0);

  const rows = plan.map((p) => {
    const within = ledger.events.filter((e) => e.t >= p.from && e.t < p.to);
    const rate = (account: Account, source?: Source) =>
      within.filter((e) => e.account === account && (!source || e.source === source)).length /
      Math.max(1, p.to - p.from);
    const mem = rss.filter((r) => r.t >= p.from && r.t < p.to).map((r) => r.kb);
    return {
      phase: p.name,
      seconds: `${p.from}-${p.to}`,
      bPerSec: rate('B'),
      bTracker: rate('B', 'tracker'),
      bMqtt: rate('B', 'mqtt'),
      bRest: rate('B', 'rest'),
      aPerSec: rate('A'),
      rssMaxMb: mem.length ? Math.max(...mem) / 1024 : NaN,
    };
  });
  printTable(
    `soak: acknowledged positions per second by phase (account B is not attacked; A's tenant is the attacker)`,
    ['phase', 's', 'B total/s', 'B trackers', 'B MQTT', 'B REST', 'A total/s', 'RSS max MB'],
    rows.map((r) => [
      r.phase,
      r.seconds,
      fmt(r.bPerSec, 1),
      fmt(r.bTracker, 1),
      fmt(r.bMqtt, 1),
      fmt(r.bRest, 1),
      fmt(r.aPerSec, 1),
      fmt(r.rssMaxMb, 0),
    ]),
  );
  const rssFirst = rss.find((r) => r.t >= plan[0].to - 1)?.kb ?? NaN;
  const rssLast = rss.at(-1)?.kb ?? NaN;
  const rssMax = Math.max(...rss.map((r) => r.kb));
  const rssBack = rssLast <= rssFirst * 1.1;
  printTable(
    'soak: outcome',
    ['what', 'value'],
    [
      ['server process exited during the run', serverExited ? 'YES' : 'no'],
      ['positions acknowledged', fmt(ledger.total())],
      ['acknowledged but not stored', fmt(missing)],
      ['rows stored for account A devices (incl. resends acknowledged late)', fmt(storedRowsOfA)],
      [
        'RSS after calm / max / at the end (MB)',
        `${fmt(rssFirst / 1024)} / ${fmt(rssMax / 1024)} / ${fmt(rssLast / 1024)}`,
      ],
      ['garbage bytes sent to tracker ports', fmt(hostile.counts.garbageBytes)],
      ['MQTT CONNECTs declaring 268 MB', fmt(hostile.counts.oversizedConnects)],
      [
        'poisoned REST bodies sent / refused with 4xx',
        `${fmt(hostile.counts.poisonedBodies)} / ${fmt(hostile.counts.poisonedRefused)}`,
      ],
      ['OsmAnd requests with a NUL in the id', fmt(hostile.counts.nulIds)],
      [
        'link bombs without the secret sent / closed by the server',
        `${fmt(hostile.counts.linkBombs)} / ${fmt(hostile.counts.linkBombsClosed)}`,
      ],
      [
        'doubling JSON Patches sent / refused with 4xx',
        `${fmt(hostile.counts.patchAttacks)} / ${fmt(hostile.counts.patchAttacksRefused)}`,
      ],
      [
        'rule storm: rules taken on one device / batches of 200 alternating speeds',
        `${fmt(hostile.counts.stormRules)} / ${fmt(hostile.counts.stormBatches)}`,
      ],
      ['zig-zag zones of 9,999 points stored', fmt(hostile.counts.zigzagZonePuts)],
      ['RSS at the end within 10 % of after calm', rssBack ? 'yes' : 'NO'],
    ],
  );
  if (serverExited) console.log(`the server exited; its last log lines:\n${exitNote}`);

  const failures = [
    serverExited && 'the server exited',
    missing > 0 && `${missing} acknowledged positions are not stored`,
    !rssBack && `RSS ended at ${fmt(rssLast / 1024)} MB, over 10 % above ${fmt(rssFirst / 1024)} MB after calm`,
  ].filter(Boolean);
  if (failures.length) throw new Error(`soak failed: ${failures.join('; ')}`);
  return {
    machine: machine(),
    seconds: SECONDS,
    chaos,
    phases: rows,
    acknowledged: ledger.total(),
    acknowledgedNotStored: missing,
    missingBySource,
    serverExited,
    rssMb: { afterCalm: rssFirst / 1024, max: rssMax / 1024, end: rssLast / 1024 },
    hostile: hostile.counts,
  };
}
