/**
 * What one JSON Patch may do (api/patch.ts), on a real trackgate in a process of its own: the
 * patches that multiplied a document (thirty doubling copies, a thousand copies, moves of a large
 * value, a large added value copied) answer at once with a 4xx naming the limit, on every PATCH
 * endpoint, while GET /api/health keeps answering, and nothing stored changes. The server runs
 * with a small heap, so code without the limits fails fast instead of filling the machine's memory.
 */
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createStorage } from '../helpers/backends.js';
import { ADMIN_KEY, testEnv } from '../helpers/server.js';
import { spawnTrackgate } from '../helpers/spawn-trackgate.js';
import { copyDoublingPatch, sendGroupCopyAttack } from '../helpers/patch-attack.js';

/** Generous: the answers come in milliseconds; a patch that multiplies the document takes minutes. */
const BOUND_MS = 3000;
const LIMIT = 1024 * 1024;

interface Reply {
  status: number;
  body: any;
}

let child: ChildProcess | undefined;
let cleanup: (() => Promise<void>) | undefined;
let base = '';

async function request(method: string, path: string, token: string | undefined, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function token(userName: string, apiKey: string): Promise<string> {
  return (await request('POST', '/api/Auth/Token', undefined, { userName, apiKey })).body.token as string;
}

async function created(path: string, admin: string, body: unknown): Promise<Reply> {
  const r = await request('POST', path, admin, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

interface Target {
  name: string;
  path: string;
  token: string;
  /** thirty copies of a field into itself, each doubling it */
  doubling: unknown[];
  /** a field `test` may compare */
  array: string;
}

const targets: Target[] = [];

test.before(async () => {
  const storage = await createStorage('sqlite');
  cleanup = storage.cleanup;
  const env = testEnv({
    ...storage.env,
    TRACKGATE_LOG_LEVEL: 'info',
    TRACKGATE_LICENSES: '100',
    NODE_OPTIONS: '--max-old-space-size=384',
  });
  const spawned = await spawnTrackgate(env);
  child = spawned.child;
  base = `http://127.0.0.1:${spawned.ports.http}`;
  const admin = await token('admin', ADMIN_KEY);
  // a group of 60 devices is 1.7 KB of JSON, as in issue 36.2
  const devices = Array.from({ length: 60 }, (_, i) => `tracker-356307042441013-${String(i).padStart(2, '0')}`);
  for (const id of devices) await created('/api/devices', admin, { id, name: id });
  const group = (await created('/api/groups', admin, { name: 'Fleet', description: 'all of them', devices })).body
    .id as string;
  const writer = await created('/api/users', admin, {
    name: 'Writer',
    email: 'writer@example.com',
    country: 'ES',
    timeZone: 'UTC',
    privileges: ['write'],
  });
  const writerToken = await token('writer@example.com', writer.body.apiKey);
  const square = [
    [-3.7, 40.41],
    [-3.69, 40.41],
    [-3.69, 40.42],
    [-3.7, 40.42],
    [-3.7, 40.41],
  ];
  const zone = (await created('/api/zones', admin, { name: 'Yard', type: 'polygon', polygon: square })).body.zone
    .id as string;
  const rule = (
    await created('/api/alertRules', admin, {
      name: 'Speeding',
      alertName: 'SpeedLimit',
      devices: devices.slice(0, 5),
      params: { speed: 90 },
    })
  ).body.alertRule.id as string;
  const forward = (
    await created('/api/forwards', admin, {
      name: 'ERP',
      type: 'webhook',
      url: 'https://erp.example.com/in',
      enabled: false,
    })
  ).body.forward.id as string;
  targets.push(
    {
      name: 'groups',
      path: `/api/groups/${group}`,
      token: writerToken,
      doubling: copyDoublingPatch(30, '/devices'),
      array: '/devices',
    },
    // a device's only array, groups, is read-only: its tags are doubled instead
    {
      name: 'devices',
      path: `/api/devices/${devices[0]}`,
      token: admin,
      doubling: Array.from({ length: 30 }, (_, i) => ({ op: 'copy', from: '/tags', path: `/tags/k${i}` })),
      array: '/groups',
    },
    {
      name: 'users',
      path: `/api/users/${writer.body.id}`,
      token: admin,
      doubling: copyDoublingPatch(30, '/privileges'),
      array: '/privileges',
    },
    {
      name: 'zones',
      path: `/api/zones/${zone}`,
      token: admin,
      doubling: copyDoublingPatch(30, '/polygon'),
      array: '/polygon',
    },
    {
      name: 'alertRules',
      path: `/api/alertRules/${rule}`,
      token: admin,
      doubling: copyDoublingPatch(30, '/devices'),
      array: '/devices',
    },
    {
      name: 'forwards',
      path: `/api/forwards/${forward}`,
      token: admin,
      doubling: copyDoublingPatch(30, '/events'),
      array: '/events',
    },
  );
});

test.after.always(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  await cleanup?.();
});

/** What GET shows of the resource, without the per-request usage counters. */
async function stored(target: Target): Promise<unknown> {
  const { apiUsage: _u, apiDailyUsage: _d, ...rest } = (await request('GET', target.path, target.token)).body;
  return rest;
}

/** `n` small objects, about 22 bytes of JSON each. */
const objects = (n: number) => Array.from({ length: n }, (_, i) => ({ i, s: 'abcdefghij' }));

const variants: { name: string; ops: (t: Target) => unknown[]; status: number; names: RegExp }[] = [
  {
    name: 'thirty copies of a field into itself',
    ops: (t) => t.doubling,
    status: 413,
    names: new RegExp(`more than ${LIMIT} bytes`),
  },
  {
    name: 'thirty copies of the whole document beside itself',
    ops: () => Array.from({ length: 30 }, (_, i) => ({ op: 'copy', from: '', path: `/k${i}` })),
    status: 413,
    names: new RegExp(`more than ${LIMIT} bytes`),
  },
  {
    name: 'a thousand copies of a 2 KB value',
    ops: () => [
      { op: 'add', path: '/pad', value: objects(100) },
      ...Array.from({ length: 999 }, (_, i) => ({ op: 'copy', from: '/pad', path: `/c${i}` })),
    ],
    status: 413,
    names: new RegExp(`more than ${LIMIT} bytes`),
  },
  {
    name: 'moves of a 550 KB value',
    ops: () => [
      { op: 'add', path: '/m0', value: objects(25_000) },
      ...Array.from({ length: 999 }, (_, i) => ({ op: 'move', from: `/m${i}`, path: `/m${i + 1}` })),
    ],
    status: 413,
    names: new RegExp(`more than ${LIMIT} bytes`),
  },
  {
    name: 'a 700 KB added value, copied',
    ops: () => [
      { op: 'add', path: '/a', value: objects(32_000) },
      { op: 'copy', from: '/a', path: '/b' },
    ],
    status: 413,
    names: new RegExp(`more than ${LIMIT} bytes`),
  },
  {
    name: 'more operations than a patch may have',
    ops: (t) => Array.from({ length: 1001 }, () => ({ op: 'test', path: t.array, value: [] })),
    status: 400,
    names: /at most 1000 operations/,
  },
];

for (const variant of variants) {
  test.serial(
    `api.patch: ${variant.name} answers ${variant.status} naming the limit at once on every PATCH endpoint, health answers meanwhile, nothing changes`,
    async (t) => {
      for (const target of targets) {
        const before = await stored(target);
        const started = performance.now();
        const [answer, health] = await Promise.all([
          request('PATCH', target.path, target.token, variant.ops(target)).then((r) => ({
            ...r,
            took: performance.now() - started,
          })),
          request('GET', '/api/health', undefined).then((r) => ({ ...r, took: performance.now() - started })),
        ]);
        t.log(
          `${target.name}: ${answer.status} in ${Math.round(answer.took)} ms, health in ${Math.round(health.took)} ms`,
        );
        t.is(answer.status, variant.status, `${target.name}: ${JSON.stringify(answer.body)}`);
        t.regex(answer.body.error as string, variant.names, target.name);
        t.true(answer.took < BOUND_MS, `${target.name}: answered in ${Math.round(answer.took)} ms`);
        t.is(health.status, 200, target.name);
        t.true(health.took < BOUND_MS, `${target.name}: health answered in ${Math.round(health.took)} ms`);
        t.deepEqual(await stored(target), before, `${target.name}: nothing changed`);
      }
    },
  );
}

test.serial(
  "api.patch: a write user's 30-copy patch of a group (test/helpers/patch-attack.ts) is refused with 413 in milliseconds; the group is as it was",
  async (t) => {
    const group = targets[0];
    const before = await stored(group);
    const answer = await sendGroupCopyAttack(base, group.token, group.path.split('/').pop()!, 60_000);
    t.log(`413 in ${Math.round(answer.tookMs)} ms`);
    t.is(answer.status, 413);
    t.like(answer.body, { success: false, code: 'PAYLOAD_TOO_LARGE', details: { limitBytes: LIMIT } });
    t.true(answer.tookMs < BOUND_MS);
    t.deepEqual(await stored(group), before);
  },
);

test.serial('api.patch: a patch within the limits still applies, copies and moves included', async (t) => {
  const group = targets[0];
  const current = (await stored(group)) as { devices: string[] };
  const ops = [
    { op: 'copy', from: '/devices/1', path: '/devices/-' },
    { op: 'move', from: '/devices/0', path: '/devices/-' },
    { op: 'remove', path: '/devices/0' },
    { op: 'replace', path: '/description', value: 'patched' },
    { op: 'test', path: '/description', value: 'patched' },
  ];
  const r = await request('PATCH', group.path, group.token, ops);
  t.is(r.status, 200, JSON.stringify(r.body));
  const [first, second, ...rest] = current.devices;
  t.deepEqual([...(r.body.devices as string[])].sort(), [...rest, second, first].sort());
  t.is(r.body.devices.length, current.devices.length);
  t.is(r.body.description, 'patched');
});
