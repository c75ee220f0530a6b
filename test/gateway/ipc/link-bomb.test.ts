import test from 'ava';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { createStorage } from '../../helpers/backends.js';
import { ADMIN_KEY, testEnv } from '../../helpers/server.js';
import { spawnTrackgate } from '../../helpers/spawn-trackgate.js';
import { linkBombBytes, sendLinkBytes } from '../../helpers/link-bomb.js';
import { TrackerClient } from '../../helpers/tracker-client.js';
import * as F from '../../helpers/frames.js';
import { until } from '../../helpers/wait.js';
import { silentLogger } from '../../../core/logger.js';
import { systemClock } from '../../../core/clock.js';
import { connectCoreLink } from '../../../gateway/ipc/core-link.client.js';

const secret = 'a-secret-of-the-link-bomb-test-0123456789';
const IMEI = '356307042441091';

/** A trackgate of its own (the bomb ended the process), with a device, and its REST API. */
async function start(t: import('ava').ExecutionContext, env: Record<string, string>) {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const lines: string[] = [];
  // NODE_OPTIONS: a heap as a small box has, so that a bomb decoded shows as the crash it is and not as swap
  const { child, ports, gateways } = await spawnTrackgate(
    testEnv({ ...storage.env, TRACKGATE_LOG_LEVEL: 'info', NODE_OPTIONS: '--max-old-space-size=1536', ...env }),
    { lines },
  );
  t.teardown(() => void child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${ports.http}`;
  const token = (
    (await (
      await fetch(`${base}/api/Auth/Token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
      })
    ).json()) as { token: string }
  ).token;
  const api = (path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  t.is((await api('/api/devices', { id: IMEI, name: 'bomb' })).status, 201);
  return { child, ports, gateways, lines, base, api };
}

/** Asks GET /api/health every 100 ms until stopped: the slowest answer (a failure or one over 5 s counts as Infinity). */
function watchHealth(base: string): { stop(): Promise<number> } {
  let slowest = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      try {
        const r = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(5000) });
        await r.arrayBuffer();
        slowest = Math.max(slowest, r.ok ? Date.now() - started : Infinity);
      } catch {
        slowest = Infinity;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return slowest;
    },
  };
}

/** The port of the link a gateway process is connected to: its one TCP connection to the loopback address (from /proc). */
function linkPortOf(pid: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  for (const line of readFileSync(`/proc/${pid}/net/tcp`, 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // remote address 127.0.0.1, state 01 (ESTABLISHED), an inode of this process
    if (f.length > 9 && f[2].startsWith('0100007F:') && f[3] === '01' && inodes.has(f[9]))
      return parseInt(f[2].split(':')[1], 16);
  }
  throw new Error(`gateway process ${pid} has no connection to the loopback address`);
}

/** Two bomb connections at once, as the issue made them: each is closed, and the process lives through them. */
async function bomb(
  t: import('ava').ExecutionContext,
  child: ChildProcess,
  port: number,
  bytes: Buffer,
): Promise<void> {
  t.true(bytes.length <= 64 * 1024, `the bomb is ${bytes.length} bytes: what the link takes before the secret`);
  const outcomes = await Promise.all([
    sendLinkBytes(port, bytes, '127.0.0.1', 20_000),
    sendLinkBytes(port, bytes, '127.0.0.1', 20_000),
  ]);
  t.deepEqual(outcomes, ['closed', 'closed'], 'both bomb connections are closed');
  // the core must not be in the middle of dying: ask it a few more times
  await new Promise((r) => setTimeout(r, 1000));
  t.is(child.exitCode, null, 'the core is alive');
  t.is(child.signalCode, null);
}

test('gateway.ipc link bomb: on the edge link, a peer without the secret writes a hello asking for compression and MessagePack and 64 KB of deflate inflating to 66 million elements, on two connections; nothing of it is inflated, the core lives, health answers within 1 s throughout, and a gateway with the secret works after it', async (t) => {
  const { child, ports, lines, base, api } = await start(t, {
    TRACKGATE_GATEWAY_LINK_PORT: '0',
    TRACKGATE_GATEWAY_SECRET: secret,
  });
  // made before health is watched: deflating 66 MB holds this process's event loop a second
  const bytes = linkBombBytes();
  const health = watchHealth(base);
  t.teardown(() => health.stop());
  await bomb(t, child, ports.gatewayLink, bytes);
  const slowest = await health.stop();
  t.true(slowest < 1000, `GET /api/health answered within 1 s throughout (slowest: ${slowest} ms)`);
  t.true(
    lines.some((l) => l.includes('gateway process refused: wrong secret')),
    'the refusal is logged, with why',
  );

  const gateway = connectCoreLink({
    host: '127.0.0.1',
    port: ports.gatewayLink,
    secret,
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => gateway.close());
  await gateway.ready();
  const r = await gateway.directory.resolve(IMEI, 'teltonika', null);
  if (r.status !== 'ok') return t.fail(`resolve: ${r.status}`);
  const fix = Date.now() - 60_000;
  await gateway.ingest.submit(r.device, 'teltonika', [
    {
      fixTime: new Date(fix),
      location: { latitudeDeg: 52.1, longitudeDeg: 4.3, valid: true },
      alarms: [],
      attributes: {},
    },
  ]);
  const last = (await (await api(`/api/devices/${IMEI}/lastLocation`)).json()) as {
    lastLocation?: { dateTime: string };
  };
  t.is(last.lastLocation?.dateTime, new Date(fix).toISOString(), 'the gateway with the secret stores after the attack');
});

test('gateway.ipc link bomb: on the local link of the default gateway processes, the same two connections are closed uninflated; the core lives, health answers within 1 s throughout, and its gateway process still acknowledges a tracker', async (t) => {
  const { child, ports, gateways, lines, base, api } = await start(t, {
    TRACKGATE_GATEWAY_PROCESSES: '1',
    TRACKGATE_TELTONIKA_PORT: '0',
  });
  t.is(gateways.length, 1);
  const port = linkPortOf(gateways[0]);
  const bytes = linkBombBytes();
  const health = watchHealth(base);
  t.teardown(() => health.stop());
  await bomb(t, child, port, bytes);
  const slowest = await health.stop();
  t.true(slowest < 1000, `GET /api/health answered within 1 s throughout (slowest: ${slowest} ms)`);
  t.true(
    lines.some((l) => l.includes('gateway process refused: wrong secret')),
    'the refusal is logged, with why',
  );

  const c = await TrackerClient.connect(ports.teltonika);
  t.teardown(() => c.end());
  c.write(F.teltonikaLogin(IMEI));
  t.deepEqual(await c.read(1, 10_000), Buffer.from([1]), 'the gateway process resolved the tracker through the core');
  const fix = Date.now() - 60_000;
  c.write(F.teltonikaAvl([{ time: new Date(fix), lat: 52.1, lon: 4.3 }]));
  t.is((await c.read(4, 10_000)).readUInt32BE(0), 1, 'and had its position stored');
  await until('the position is the last location', async () => {
    const last = (await (await api(`/api/devices/${IMEI}/lastLocation`)).json()) as {
      lastLocation?: { dateTime: string };
    };
    return last.lastLocation?.dateTime === new Date(fix).toISOString();
  });
});
