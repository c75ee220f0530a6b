/**
 * Forwards across deaths: trackgate killed with SIGKILL while a tracker streams and started again
 * (SQLite); two instances on one PostgreSQL, the one delivering killed, the other taking over.
 * Every stored location arrives at a webhook and a RabbitMQ queue, per device in order, none lost.
 */
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createStorage, postgresAvailable } from '../../helpers/backends.js';
import { ADMIN_KEY, startServer, testEnv } from '../../helpers/server.js';
import { TrackerClient } from '../../helpers/tracker-client.js';
import * as F from '../../helpers/frames.js';
import { until } from '../../helpers/wait.js';
import {
  check,
  locationKey,
  startAmqpReceiver,
  startWebhookReceiver,
  uniqueName,
  ALLOW_RECEIVERS_ENV,
  RABBITMQ_URL,
  type ForwardedMessage,
} from '../../helpers/forward-receivers.js';
import { spawnTrackgate } from '../../helpers/spawn-trackgate.js';

const T0 = Date.UTC(2026, 2, 1);

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

/** A small REST client of one spawned instance. */
async function client(port: number) {
  const base = `http://127.0.0.1:${port}`;
  const token = (
    (await (
      await fetch(`${base}/api/Auth/Token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
      })
    ).json()) as { token: string }
  ).token;
  return async (method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + p, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
}

/** The keys of every location stored for these devices (asked of a running instance). */
async function storedKeys(
  request: (m: string, p: string, b?: unknown) => Promise<{ body: any }>,
  devices: string[],
): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const d of devices) {
    const r = await request('POST', `/api/devices/${d}/locations`, {
      from: '2026-01-01T00:00:00Z',
      to: '2027-01-01T00:00:00Z',
      limit: 10000,
    });
    for (const l of r.body.locations as { dateTime: string }[]) keys.add(locationKey(d, l.dateTime));
  }
  return keys;
}

function expectAll(
  t: {
    deepEqual: (a: unknown, b: unknown, m?: string) => void;
    true: (v: boolean, m?: string) => void;
    log: (...a: unknown[]) => void;
  },
  name: string,
  got: readonly ForwardedMessage[],
  expected: Set<string>,
): void {
  const c = check(got, expected);
  t.deepEqual(c.missing.slice(0, 5), [], `${name}: none of ${expected.size} stored lost (${c.missing.length} missing)`);
  t.deepEqual(c.unexpected, [], `${name}: nothing unexpected`);
  t.deepEqual(c.outOfOrder, [], `${name}: per device in order`);
  t.true(c.repeats <= expected.size / 2, `${name}: ${c.repeats} repeats`);
  t.log(`${name}: ${got.length} messages for ${expected.size} stored, ${c.repeats} repeats`);
}

test('forward.crash: trackgate killed with SIGKILL mid-stream and started again: every stored location is forwarded, in order', async (t) => {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  const rabbit = await startAmqpReceiver(uniqueName('exchange'));
  t.teardown(() => rabbit.close());
  const env = testEnv({
    ...storage.env,
    TRACKGATE_LOG_LEVEL: 'info',
    TRACKGATE_TELTONIKA_PORT: '0',
    TRACKGATE_FORWARD_TIMEOUT_MS: '2000',
    ...ALLOW_RECEIVERS_ENV,
  });
  const { child, ports } = await spawnTrackgate(env);
  t.teardown(() => child.kill('SIGKILL'));
  const request = await client(ports.http);
  const IMEI = '356307042441013';
  t.is((await request('POST', '/api/devices', { id: IMEI, name: 'crash' })).status, 201);
  t.is((await request('POST', '/api/forwards', { name: 'hook', type: 'webhook', url: hook.url })).status, 201);
  t.is(
    (
      await request('POST', '/api/forwards', {
        name: 'rabbit',
        type: 'amqp',
        url: RABBITMQ_URL,
        exchange: rabbit.exchange,
      })
    ).status,
    201,
  );

  const c = await TrackerClient.connect(ports.teltonika);
  c.write(F.teltonikaLogin(IMEI));
  t.deepEqual(await c.read(1), Buffer.from([1]));
  let sent = 0;
  let acked = 0;
  let inflight = 0;
  for (;;) {
    while (inflight < 10) {
      c.write(
        F.teltonikaAvl(
          Array.from({ length: 5 }, (_, i) => ({
            time: new Date(T0 + (sent * 5 + i) * 1000),
            lat: 40 + sent / 1e4,
            lon: -3,
          })),
        ),
      );
      sent++;
      inflight++;
    }
    await c.read(4);
    inflight--;
    acked += 5;
    // once something was forwarded, the receiver refuses for a while (500), so that the kill lands
    // with messages still waiting: the forwards keep up with this load otherwise
    if (hook.messages.length > 0) hook.mode = 'error';
    if (acked >= 1500 && hook.messages.length > 0) break;
  }
  await kill(child);
  c.end();
  const beforeRestart = hook.messages.length;
  t.true(beforeRestart < acked, `killed mid-stream: ${beforeRestart} of ${acked} forwarded`);

  hook.mode = 'ok';
  const s = await startServer('sqlite', {
    storageEnv: storage.env,
    env: { TRACKGATE_FORWARD_TIMEOUT_MS: '2000', ...ALLOW_RECEIVERS_ENV },
  });
  t.teardown(() => s.stop());
  const expected = await storedKeys((m, p, b) => s.request(m, p, { token: s.adminToken, body: b }), [IMEI]);
  t.true(expected.size >= acked, `${expected.size} stored, ${acked} acknowledged`);
  await until(
    'everything stored is forwarded after the restart',
    () => check(hook.messages, expected).missing.length === 0 && check(rabbit.messages, expected).missing.length === 0,
    60_000,
  );
  expectAll(t, 'webhook', hook.messages, expected);
  expectAll(t, 'amqp', rabbit.messages, expected);
});

test('forward.crash: two instances on one PostgreSQL; the one delivering is killed, the other takes over', async (t) => {
  if (!(await postgresAvailable())) {
    if (process.env.CI) throw new Error('CI: PostgreSQL must answer');
    t.pass('PostgreSQL not reachable: skipped');
    return;
  }
  const storage = await createStorage('postgres');
  t.teardown(() => storage.cleanup());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  const env = testEnv({
    ...storage.env,
    TRACKGATE_LOG_LEVEL: 'info',
    TRACKGATE_FORWARD_TIMEOUT_MS: '2000',
    ...ALLOW_RECEIVERS_ENV,
  });
  const a = await spawnTrackgate(env);
  t.teardown(() => a.child.kill('SIGKILL'));
  const onA = await client(a.ports.http);
  const devices = ['pair-1', 'pair-2'];
  for (const d of devices) t.is((await onA('POST', '/api/devices', { id: d, name: d })).status, 201);
  const created = await onA('POST', '/api/forwards', { name: 'hook', type: 'webhook', url: hook.url });
  t.is(created.status, 201);
  // A takes the forward before B starts
  await onA('POST', `/api/devices/pair-1/locations`, {
    location: { dateTime: new Date(T0).toISOString(), latitude: 40, longitude: -3 },
  });
  await until('A delivers', () => hook.messages.length > 0);
  const b = await spawnTrackgate(env);
  t.teardown(() => b.child.kill('SIGKILL'));
  const onB = await client(b.ports.http);

  let i = 1;
  const postBoth = async (n: number, alsoA: boolean) => {
    for (const end = i + n; i < end; i++) {
      const dateTime = new Date(T0 + i * 1000).toISOString();
      const posts = [
        onB('POST', `/api/devices/pair-2/locations`, { location: { dateTime, latitude: 41, longitude: -3 } }),
      ];
      if (alsoA)
        posts.push(
          onA('POST', `/api/devices/pair-1/locations`, { location: { dateTime, latitude: 40, longitude: -3 } }),
        );
      else
        posts.push(
          onB('POST', `/api/devices/pair-1/locations`, { location: { dateTime, latitude: 40, longitude: -3 } }),
        );
      await Promise.all(posts);
    }
  };
  await postBoth(100, true);
  await kill(a.child);
  await postBoth(100, false);
  const expected = await storedKeys(onB, devices);
  await until('B delivers what A left', () => check(hook.messages, expected).missing.length === 0, 40_000);
  expectAll(t, 'webhook', hook.messages, expected);
  const after = (await onB('GET', `/api/forwards/${created.body.forward.id}`)).body.forward.status;
  t.is(after.lastError, null);
});
