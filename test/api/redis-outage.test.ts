/**
 * A Redis that hangs instead of refusing (SIGSTOP: the connection stays open, nothing answers) or
 * comes back empty, on a Redis of the test's own (test/helpers/own-services.ts).
 */
import test from 'ava';
import { ADMIN_KEY, startServer, type TestServer } from '../helpers/server.js';
import { backends } from '../helpers/backends.js';
import { useRedis } from '../helpers/redis.js';
import { startOwnRedis, type OwnServer } from '../helpers/own-services.js';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/receivers.js';
import { ManualClock } from '../../core/clock.js';
import { timed, until } from '../helpers/wait.js';

const available = await useRedis('redis outages');
// long enough that a health check held behind an alert waiting on Redis (this long) stands out from
// a busy machine's scheduling: there a request that waits on nothing took a second or two (2 s, with
// 1 s as the bound, failed while another test run kept the cores busy)
const REDIS_TIMEOUT_MS = 10_000;

interface Setup {
  s: TestServer;
  redis: OwnServer;
  smtp: SmtpReceiver;
  clock: ManualClock;
}

async function setup(
  t: { teardown(fn: () => unknown): void },
  backend: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
): Promise<Setup> {
  const redis = await startOwnRedis();
  const smtp = await startSmtpReceiver();
  // Redis keeps real expiries, so the clock starts now; tests move it only to make retries due.
  const clock = new ManualClock(Date.now());
  const s = await startServer(backend, {
    clock,
    env: {
      TRACKGATE_REDIS_URL: redis.url,
      TRACKGATE_SMTP_URL: smtp.url,
      TRACKGATE_REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
      TRACKGATE_TOKEN_TTL: '86400',
      TRACKGATE_LICENSES: '2',
      ...env,
    },
  });
  t.teardown(async () => {
    redis.thaw();
    await s.stop();
    await smtp.close();
    await redis.stop();
  });
  return { s, redis, smtp, clock };
}

const raise = (s: TestServer, id: string) =>
  s.request('POST', `/api/devices/${id}/alerts`, { token: s.adminToken, body: { alert: { alertName: 'SOSButton' } } });
const stored = async (s: TestServer, id: string) =>
  (
    await s.request('POST', `/api/devices/${id}/alerts`, {
      token: s.adminToken,
      body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
    })
  ).body.alerts as { notifications: string[]; suppressed: Record<string, string> }[];

for (const backend of available ? await backends() : []) {
  test(`redis outage (${backend}): while Redis hangs, REST answers in bounded time, alerts are stored and hold no database connection; after it thaws every message is counted and delivered`, async (t) => {
    const { s, redis, smtp, clock } = await setup(t, backend);
    await s.request('POST', '/api/devices', {
      token: s.adminToken,
      body: { id: 'd1', name: 'd1', alertEmails: ['ops@example.com'], dailyEmailLimit: 3 },
    });
    // One e-mail before: the day's counter exists in Redis when it freezes.
    t.deepEqual((await raise(s, 'd1')).body.alerts[0].notifications, ['Email']);
    await s.running.services.notifications.drain();
    t.is(smtp.mails.length, 1);
    redis.freeze();

    const bound = 4 * REDIS_TIMEOUT_MS;
    const list = await timed(bound, 'GET /api/devices', () =>
      s.request('GET', '/api/devices', { token: s.adminToken }),
    );
    t.is(list.value.status, 200);
    t.true(list.value.body.apiUsage >= 1, 'usage counted in memory meanwhile, as when Redis refuses');
    const one = await timed(bound, 'GET /api/devices/d1', () =>
      s.request('GET', '/api/devices/d1', { token: s.adminToken }),
    );
    t.like(one.value.body.device, { emailsSentToday: 1 }, 'counters read from the outbox meanwhile');
    const token = await timed(bound, 'POST /api/Auth/Token', () =>
      s.request('POST', '/api/Auth/Token', { body: { userName: 'admin', apiKey: ADMIN_KEY } }),
    );
    t.is(token.value.status, 200, 'a token is issued meanwhile');
    const wrong = await timed(bound, 'POST /api/Auth/Token', () =>
      s.request('POST', '/api/Auth/Token', { body: { userName: 'admin', apiKey: 'not-the-key-0123456789' } }),
    );
    t.is(wrong.value.status, 401);
    const created = await timed(bound, 'POST /api/devices', () =>
      s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd2', name: 'd2' } }),
    );
    t.is(created.value.status, 503, 'a licence cannot be claimed meanwhile');
    t.is(created.value.body.code, 'STORAGE_UNAVAILABLE');

    // More alerts at once than PostgreSQL's pool has connections, while the health check (one
    // database round trip, no Redis) is asked again and again: it must never wait for a
    // connection held by an alert that waits on Redis.
    const alerts = Promise.all(Array.from({ length: 12 }, () => timed(2 * bound, 'an alert', () => raise(s, 'd1'))));
    let slowest = 0;
    let done = false;
    void alerts.finally(() => (done = true));
    while (!done) {
      const health = await timed(bound, 'health', () => s.request('GET', '/api/health'));
      t.is(health.value.status, 200);
      slowest = Math.max(slowest, health.took);
      await new Promise((r) => setTimeout(r, 50));
    }
    const answers = await alerts;
    t.true(
      answers.every((a) => a.value.status === 201),
      'every alert is stored',
    );
    t.true(
      answers.every((a) => a.value.body.alerts[0].notifications.length === 0),
      'nothing counted yet',
    );
    t.true(slowest < REDIS_TIMEOUT_MS / 2, `the health check waited at most ${slowest} ms`);
    await s.running.services.notifications.drain();
    t.is(smtp.mails.length, 1, 'nothing is sent uncounted');

    redis.thaw();
    // The reservations Redis carries out late (it ran them after SIGCONT) must not count.
    clock.advance(60_000);
    s.running.services.notifications.kick();
    await until('every alert decided', async () => {
      clock.advance(10_000);
      s.running.services.notifications.kick();
      return (await stored(s, 'd1')).every((a) => a.notifications.length > 0 || a.suppressed.Email);
    });
    await s.running.services.notifications.drain();
    t.is(smtp.mails.length, 3, 'the daily limit of 3: the one before, and two counted once Redis answers');
    const decided = await stored(s, 'd1');
    t.is(decided.filter((a) => a.notifications.includes('Email')).length, 3);
    t.is(decided.filter((a) => a.suppressed.Email === 'dailyLimitReached').length, 10);
    t.like((await s.request('GET', '/api/devices/d1', { token: s.adminToken })).body.device, { emailsSentToday: 3 });
    // Two licences: d1 holds one; the claim for d2 that Redis carried out after thawing was undone,
    // so the other is free for d3.
    t.is(
      (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd3', name: 'd3' } })).status,
      201,
    );
  });
}

for (const backend of available ? await backends() : []) {
  test(`redis outage (${backend}): a licence claim waiting on a hung Redis holds no database connection or account lock`, async (t) => {
    // Every REST request first waits one Redis timeout for its usage count, then the activation's
    // licence claim waits another: probe the database in the middle of the second wait.
    const timeoutMs = REDIS_TIMEOUT_MS;
    const { s, redis } = await setup(t, backend);
    await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd1', name: 'd1' } });
    redis.freeze();
    const bound = 4 * timeoutMs;
    const activation = timed(bound, 'POST /api/devices', () =>
      s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd2', name: 'd2' } }),
    );
    await new Promise((r) => setTimeout(r, timeoutMs * 1.3));
    // The database serves others at once: the health check, and the operator renaming the same
    // account (which takes its row lock, as an activation's transaction does).
    // both at once: held behind the claim, either would take the rest of its wait (0.7 of the timeout)
    const [health, rename] = await Promise.all([
      timed(bound, 'health', () => s.request('GET', '/api/health')),
      timed(bound, 'account update', () =>
        s.running.services.accounts.update(s.running.bootstrap!.accountId, { name: 'Renamed' }),
      ),
    ]);
    t.is(health.value.status, 200);
    t.true(
      health.took < timeoutMs / 2,
      `the health check took ${health.took} ms while a licence claim waited on Redis`,
    );
    t.is(rename.value.name, 'Renamed');
    t.true(rename.took < timeoutMs / 2, `the account row was free after ${rename.took} ms`);
    t.is((await activation).value.status, 503, 'the claim itself cannot be decided meanwhile');
  });
}

if (available) {
  test('redis outage: a device at its daily limit stays there after Redis restarts empty', async (t) => {
    const { s, redis, smtp } = await setup(t, 'sqlite');
    await s.request('POST', '/api/devices', {
      token: s.adminToken,
      body: { id: 'd1', name: 'd1', alertEmails: ['ops@example.com'], dailyEmailLimit: 3 },
    });
    for (let i = 0; i < 3; i++) t.deepEqual((await raise(s, 'd1')).body.alerts[0].notifications, ['Email']);
    await s.running.services.notifications.drain();
    t.is(smtp.mails.length, 3);

    await redis.kill();
    await redis.start();
    await until(
      'the client is connected again',
      async () =>
        (await s.request('GET', '/api/devices/d1', { token: s.adminToken })).status === 200 &&
        s.running.services.quota.get(['x']).then(
          () => true,
          () => false,
        ),
    );

    for (let i = 0; i < 3; i++) {
      const r = await raise(s, 'd1');
      t.deepEqual(r.body.alerts[0].notifications, [], 'the counter is rebuilt from the outbox before counting');
      t.is(r.body.alerts[0].suppressed.Email, 'dailyLimitReached');
    }
    await s.running.services.notifications.drain();
    t.is(smtp.mails.length, 3, 'nothing over the limit');
    t.like((await s.request('GET', '/api/devices/d1', { token: s.adminToken })).body.device, { emailsSentToday: 3 });
    // Two licences: d1 holds one; the claim for d2 that Redis carried out after thawing was undone,
    // so the other is free for d3.
    t.is(
      (await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd3', name: 'd3' } })).status,
      201,
    );
  });
}
