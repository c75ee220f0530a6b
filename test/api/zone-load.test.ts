/**
 * Big zones do not hold the server (issue 36.4 and 36.5), on a real trackgate in a process of its
 * own, so this process can keep asking while it works: GET /api/health and another account's
 * request answer within 2 s while a zone request checks a 9,999-point zig-zag ring (every
 * edge overlapping every other in longitude: all pairs compared took seconds), and while 100
 * ForbiddenArea rules on one 9,988-point zone evaluate REST batches of 2,000 positions (every
 * rule ray-casting every edge for every position took half a minute).
 */
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createStorage, postgresAvailable } from '../helpers/backends.js';
import { ADMIN_KEY, testEnv } from '../helpers/server.js';
import { spawnTrackgate } from '../helpers/spawn-trackgate.js';
import { runCli } from '../helpers/run-cli.js';
import { PATIENCE_MS } from '../helpers/wait.js';

/**
 * What the health check and the other account may take while the zone work runs: they answer in
 * milliseconds on an idle machine; at a load of 30–50 on two cores the parsing and storing of the
 * 300 KB zone or of 2,000 locations alone held them up to 1.1 s. The work before the fix held
 * them 5 s (each zone check) and half a minute (the rules).
 */
const BOUND_MS = 2000;
const OTHER_KEY = 'other-account-key-0123456789';

let child: ChildProcess | undefined;
let cleanup: (() => Promise<void>) | undefined;
let base = '';
let admin = '';
let other = '';

async function request(
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(PATIENCE_MS),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function token(userName: string, apiKey: string): Promise<string> {
  const r = await request('POST', '/api/Auth/Token', undefined, { userName, apiKey });
  if (r.status !== 200) throw new Error(`token for ${userName}: ${r.status}`);
  return r.body.token as string;
}

async function created(path: string, body: unknown): Promise<any> {
  const r = await request('POST', path, admin, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

test.before(async () => {
  // PostgreSQL where it answers: its I/O waits off the event loop, while SQLite's commit of 2,000
  // locations holds the loop for as long as the disk's flush takes, which is not what this checks
  const storage = await createStorage((await postgresAvailable()) ? 'postgres' : 'sqlite');
  cleanup = storage.cleanup;
  const env = testEnv({ ...storage.env, TRACKGATE_LOG_LEVEL: 'info', TRACKGATE_LICENSES: '10' });
  const spawned = await spawnTrackgate(env);
  child = spawned.child;
  base = `http://127.0.0.1:${spawned.ports.http}`;
  admin = await token('admin', ADMIN_KEY);
  // the second account, made by the command beside the running server (as an operator would)
  const account = await runCli(
    [
      'account',
      'create',
      '--name',
      'Other',
      '--licenses',
      '1',
      '--admin-user',
      'other-admin',
      '--admin-api-key',
      OTHER_KEY,
    ],
    env,
  );
  if (account.status !== 0) throw new Error(`account create: ${account.stderr}`);
  other = await token('other-admin', OTHER_KEY);
});

test.after.always(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  await cleanup?.();
});

/**
 * Asks GET /api/health and the other account's GET /api/zones, one after the other, until `work`
 * settles; resolves with its value and the slowest answer of each (they must answer at all).
 */
async function whileAsking<T>(work: Promise<T>): Promise<{ value: T; health: number; other: number; asked: number }> {
  let done = false;
  const settled = work.finally(() => (done = true));
  let [health, others, asked] = [0, 0, 0];
  while (!done) {
    let started = performance.now();
    const h = await request('GET', '/api/health', undefined);
    health = Math.max(health, performance.now() - started);
    started = performance.now();
    const o = await request('GET', '/api/zones', other);
    others = Math.max(others, performance.now() - started);
    if (h.status !== 200 || o.status !== 200) throw new Error(`health ${h.status}, other account ${o.status}`);
    asked++;
  }
  return { value: await settled, health, other: others, asked };
}

/** Points alternating between two longitudes while the latitude climbs, closed by a rectangle's east side: valid, and every edge overlaps every other in longitude. */
function zigzag(points: number): number[][] {
  const m = points - 4;
  const ring: number[][] = [];
  for (let k = 0; k < m; k++) ring.push([k % 2 ? -3.7 : -3.71, 40.4 + (k * 0.5) / m]);
  ring.push([-3.69, ring[m - 1][1]], [-3.69, 40.39], [-3.71, 40.39], [...ring[0]]);
  return ring;
}

test.serial(
  'zones: while PUT and PATCH check a 9,999-point zig-zag ring, health and another account answer within 2 s',
  async (t) => {
    const square = [
      [-3.71, 40.39],
      [-3.69, 40.39],
      [-3.69, 40.9],
      [-3.71, 40.9],
      [-3.71, 40.39],
    ];
    const id = (await created('/api/zones', { name: 'Yard', type: 'polygon', polygon: square })).zone.id as string;
    const ring = zigzag(9999);
    const put = await whileAsking(
      request('PUT', `/api/zones/${id}`, admin, { name: 'Yard', type: 'polygon', polygon: ring }),
    );
    t.log(
      `PUT: health at most ${Math.round(put.health)} ms, the other account ${Math.round(put.other)} ms (${put.asked} rounds)`,
    );
    t.is(put.value.status, 200, JSON.stringify(put.value.body).slice(0, 300));
    t.is(put.value.body.zone.polygon.length, 9999);
    const flipped = ring.map(([x, y]) => [x, y + 0.001]);
    const patch = await whileAsking(
      request('PATCH', `/api/zones/${id}`, admin, [{ op: 'replace', path: '/polygon', value: flipped }]),
    );
    t.log(
      `PATCH: health at most ${Math.round(patch.health)} ms, the other account ${Math.round(patch.other)} ms (${patch.asked} rounds)`,
    );
    t.is(patch.value.status, 200, JSON.stringify(patch.value.body).slice(0, 300));
    for (const r of [put, patch]) {
      t.true(r.health < BOUND_MS, `health answered in ${Math.round(r.health)} ms`);
      t.true(r.other < BOUND_MS, `the other account answered in ${Math.round(r.other)} ms`);
    }
  },
);

/** A regular polygon of `points` (closed) around the depot. */
function ngon(points: number): number[][] {
  const ring: number[][] = [];
  for (let i = 0; i < points - 1; i++)
    ring.push([
      -3.7 + 0.05 * Math.cos((2 * Math.PI * i) / (points - 1)),
      40.4 + 0.05 * Math.sin((2 * Math.PI * i) / (points - 1)),
    ]);
  ring.push([...ring[0]]);
  return ring;
}

test.serial(
  'rules: while 100 ForbiddenArea rules on one 9,988-point zone evaluate batches of 2,000 positions, health and another account answer within 2 s',
  async (t) => {
    const zone = (await created('/api/zones', { name: 'Forbidden', type: 'polygon', polygon: ngon(9988) })).zone
      .id as string;
    // 50 rules a device (the most one device may have), on two devices
    const devices = ['356307042441021', '356307042441022'];
    for (const id of devices) {
      await created('/api/devices', { id, name: id });
      for (let i = 0; i < 50; i++)
        await created('/api/alertRules', {
          name: `Forbidden ${i}`,
          alertName: 'ForbiddenArea',
          devices: [id],
          params: { zone },
          notify: { email: false, sms: false },
        });
    }
    // 1,999 positions in the zone's bounding box but outside it (its north-east corner), then one inside
    const t0 = Date.UTC(2026, 0, 5, 8);
    const batch = Array.from({ length: 2000 }, (_, i) => ({
      dateTime: new Date(t0 + i * 1000).toISOString(),
      ...(i < 1999
        ? { latitude: 40.448 - (i % 7) * 0.0001, longitude: -3.652 + (i % 5) * 0.0001 }
        : { latitude: 40.4, longitude: -3.7 }),
      speed: 30,
    }));
    const alerts = async (id: string) =>
      (
        await request('POST', `/api/devices/${id}/alerts`, admin, {
          from: '2026-01-01T00:00:00Z',
          to: '2027-01-01T00:00:00Z',
        })
      ).body.alerts as { alertName: string }[];
    const work = (async () => {
      for (const id of devices) {
        const posted = await request('POST', `/api/devices/${id}/locations`, admin, { locations: batch });
        if (posted.status !== 201)
          throw new Error(`locations: ${posted.status} ${JSON.stringify(posted.body).slice(0, 300)}`);
      }
      // evaluated once the last position of each batch raised its rules' alerts
      const deadline = Date.now() + PATIENCE_MS;
      for (;;) {
        const counts = await Promise.all(devices.map(async (id) => (await alerts(id)).length));
        if (counts.every((c) => c === 50)) return counts;
        if (Date.now() > deadline) throw new Error(`alerts: ${counts.join(', ')} of 50 each`);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const r = await whileAsking(work);
    t.log(`health at most ${Math.round(r.health)} ms, the other account ${Math.round(r.other)} ms (${r.asked} rounds)`);
    t.deepEqual(r.value, [50, 50], 'each rule fired once, at the last position');
    t.true((await alerts(devices[0])).every((a) => a.alertName === 'ForbiddenArea'));
    t.true(r.health < BOUND_MS, `health answered in ${Math.round(r.health)} ms`);
    t.true(r.other < BOUND_MS, `the other account answered in ${Math.round(r.other)} ms`);
  },
);
