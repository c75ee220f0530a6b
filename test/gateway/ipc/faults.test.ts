import test from 'ava';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { createStorage } from '../../helpers/backends.js';
import { ADMIN_KEY, startServer, testEnv, type TestServer } from '../../helpers/server.js';
import { teltonikaSession } from '../../helpers/tracker-client.js';
import { until } from '../../helpers/wait.js';
import * as F from '../../helpers/frames.js';
import { PROTOCOL_DEFAULT_PORTS } from '../../../config/config.js';
import { silentLogger } from '../../../core/logger.js';
import { systemClock } from '../../../core/clock.js';
import { protocols } from '../../../protocols/index.js';
import { startCoreLink } from '../../../gateway/ipc/core-link.server.js';
import { connectCoreLink, CoreUnreachable } from '../../../gateway/ipc/core-link.client.js';
import { startGatewayProcess } from '../../../gateway/ipc/gateway.process.js';
import { spawnTrackgate } from '../../helpers/spawn-trackgate.js';

const IMEI = '356307042441013';
const T0 = Date.UTC(2026, 2, 1);
/** frame n carries 5 records, at T0 + (5n .. 5n+4) s */
const frame = (n: number) =>
  F.teltonikaAvl(
    Array.from({ length: 5 }, (_, i) => ({ time: new Date(T0 + (n * 5 + i) * 1000), lat: 40 + n / 1e4, lon: -3 })),
  );

async function storedTimes(s: TestServer): Promise<Set<string>> {
  const r = await s.request('POST', `/api/devices/${IMEI}/locations`, {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z', limit: 10000 },
  });
  return new Set(r.body.locations.map((l: { dateTime: string }) => l.dateTime));
}

function missing(times: Set<string>, frames: number[]): number {
  let n = 0;
  for (const f of frames)
    for (let i = 0; i < 5; i++) if (!times.has(new Date(T0 + (f * 5 + i) * 1000).toISOString())) n++;
  return n;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('gateway.ipc faults: a gateway process killed mid-stream loses nothing acknowledged; its tracker reconnects to the other one and the core starts a new one', async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_GATEWAY_PROCESSES: '2', TRACKGATE_TELTONIKA_PORT: '0' } });
  t.teardown(() => s.stop());
  t.is(
    (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: IMEI, name: 'kill' } })).status,
    201,
  );
  const pool = s.running.gatewayPool!;
  const link = s.running.gatewayLink!;
  const c = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  await until('the core knows the holder', () => link.holderOf(IMEI) !== undefined);
  const victim = link.holderOf(IMEI)!;
  t.true(pool.pids().includes(victim));

  // frames of 5 records, up to 10 in flight; each 4-byte ack counts what one frame carried
  const acked: number[] = [];
  const inflight: number[] = [];
  let next = 0;
  let killed = false;
  for (;;) {
    while (!killed && inflight.length < 10) {
      c.write(frame(next));
      inflight.push(next++);
    }
    let ack: Buffer;
    try {
      ack = await c.read(4); // throws once the killed process's connection closes
    } catch {
      break;
    }
    t.is(ack.readUInt32BE(0), 5);
    acked.push(inflight.shift()!);
    if (acked.length >= 100 && !killed) {
      process.kill(victim, 'SIGKILL');
      killed = true;
    }
  }
  t.true(killed && (await c.waitClosed()), 'the tracker loses its connection with its gateway process');
  t.is(missing(await storedTimes(s), acked), 0, `every one of the ${acked.length} acknowledged frames is stored`);

  // the tracker reconnects: the other gateway process still listens on the port, and takes it
  const again = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  for (const n of inflight) again.write(frame(n));
  for (const _ of inflight) t.is((await again.read(4)).readUInt32BE(0), 5);
  await until('the new holder is known', () => link.holderOf(IMEI) !== undefined && link.holderOf(IMEI) !== victim);
  t.is(missing(await storedTimes(s), [...acked, ...inflight]), 0, 'what was resent is stored too');

  await until(
    'the core started another gateway process',
    () => pool.pids().length === 2 && !pool.pids().includes(victim),
  );
  t.false(alive(victim));
});

test('gateway.ipc faults: the core killed, its gateway processes acknowledge nothing more and leave with it; after a restart the tracker resends and all is stored', async (t) => {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const env = testEnv({
    ...storage.env,
    TRACKGATE_LOG_LEVEL: 'info',
    TRACKGATE_TELTONIKA_PORT: '0',
    TRACKGATE_GATEWAY_PROCESSES: '2',
  });
  const { child, ports, gateways } = await spawnTrackgate(env);
  t.teardown(() => child.kill('SIGKILL'));
  t.is(gateways.length, 2);
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
  const created = await fetch(`${base}/api/devices`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ id: IMEI, name: 'core kill' }),
  });
  t.is(created.status, 201);

  const c = await teltonikaSession(t, ports.teltonika, IMEI);
  c.write(frame(0));
  t.is((await c.read(4)).readUInt32BE(0), 5);
  child.kill('SIGKILL');
  await once(child, 'exit');
  c.write(frame(1));
  await t.throwsAsync(c.read(4, 2000), undefined, 'nothing is acknowledged once the core is gone');
  await until('the gateway processes left with the core (no orphan holds the port)', () =>
    gateways.every((pid) => !alive(pid)),
  );

  const s = await startServer('sqlite', {
    storageEnv: storage.env,
    env: { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_GATEWAY_PROCESSES: '2' },
  });
  t.teardown(() => s.stop());
  const again = await teltonikaSession(t, s.running.ports.teltonika, IMEI);
  again.write(frame(1));
  t.is((await again.read(4)).readUInt32BE(0), 5);
  t.is(missing(await storedTimes(s), [0, 1]), 0);
});

test('gateway.ipc faults: a gateway process whose link to the core is lost acknowledges nothing, connects again by itself, and resumes', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  t.is(
    (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: IMEI, name: 'link' } })).status,
    201,
  );
  const socketPath = path.join(os.tmpdir(), `trackgate-test-${process.pid}-${Date.now()}.sock`);
  const secret = 'a-secret-of-this-test-0123456789';
  const core = { path: socketPath, secret, ...s.running.services, logger: silentLogger };
  let link = await startCoreLink(core);
  t.teardown(() => link.close());
  const ports: Record<string, number | 'off'> = Object.fromEntries(
    Object.keys(PROTOCOL_DEFAULT_PORTS).map((p) => [p, 'off']),
  );
  ports.teltonika = 0;
  const gp = await startGatewayProcess({
    link: { path: socketPath },
    secret,
    host: '127.0.0.1',
    ports,
    checksum: 'accept',
    idleTimeoutSeconds: 60,
    commandWaitMs: 2000,
    logLevel: 'silent',
    protocols,
    clock: systemClock,
    logger: silentLogger,
  });
  t.teardown(() => gp.stop());

  const c = await teltonikaSession(t, gp.ports.teltonika, IMEI);
  c.write(frame(0));
  t.is((await c.read(4)).readUInt32BE(0), 5);

  await link.close();
  await until('the gateway process sees the link down', () => !gp.link.isUp());
  c.write(frame(1));
  t.true(await c.nothingFor(1500), 'no acknowledgement while the core is unreachable');
  t.false(c.closed, 'the tracker keeps its connection meanwhile');

  link = await startCoreLink(core);
  await until('the gateway process is back by itself', () => gp.link.isUp());
  c.write(frame(1));
  t.is((await c.read(4)).readUInt32BE(0), 5);
  t.is(missing(await storedTimes(s), [0, 1]), 0);
  await until('the core knows the device is connected there again (hello)', () =>
    link.connectedDevices().includes(IMEI),
  );
});

test("gateway.ipc faults: a gateway without the core's secret is refused and gets no answers", async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const socketPath = path.join(os.tmpdir(), `trackgate-test-${process.pid}-${Date.now()}-s.sock`);
  const link = await startCoreLink({
    path: socketPath,
    secret: 'the-right-secret-0123456789abcdef',
    ...s.running.services,
    logger: silentLogger,
  });
  t.teardown(() => link.close());
  const client = connectCoreLink({
    path: socketPath,
    secret: 'a-wrong-secret',
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => client.close());
  await new Promise((r) => setTimeout(r, 1500));
  t.false(client.isUp());
  t.is(link.connections(), 0);
  await t.throwsAsync(client.directory.resolve(IMEI, 'teltonika', null), { instanceOf: CoreUnreachable });
});

test('gateway.ipc faults: Ctrl-C to the whole process group stops the core and its gateway processes cleanly, none started again', async (t) => {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const lines: string[] = [];
  const { child, gateways } = await spawnTrackgate(
    testEnv({
      ...storage.env,
      TRACKGATE_LOG_LEVEL: 'info',
      TRACKGATE_TELTONIKA_PORT: '0',
      TRACKGATE_GATEWAY_PROCESSES: '2',
    }),
    { detached: true, lines },
  );
  t.teardown(() => child.kill('SIGKILL'));
  t.is(gateways.length, 2);
  process.kill(-child.pid!, 'SIGINT');
  const [code] = (await once(child, 'exit')) as [number];
  t.is(code, 0);
  await until('the gateway processes are gone', () => gateways.every((pid) => !alive(pid)));
  t.false(
    lines.some((l) => l.includes('gateway process died')),
    'none was taken for dead and started again',
  );
  t.true(lines.some((l) => l.includes('"msg":"stopped"')));
});
