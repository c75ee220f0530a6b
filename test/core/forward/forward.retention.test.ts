/**
 * Retention: messages a target does not take are kept in the database, within bounds; beyond
 * them the oldest are dropped, counted in the forward's status and logged, never silently. What
 * every forward has delivered is deleted.
 */
import test from 'ava';
import { ManualClock } from '../../../core/clock.js';
import { ADMIN_KEY, startServer } from '../../helpers/server.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { until } from '../../helpers/wait.js';
import { check, locationKey, startWebhookReceiver, ALLOW_RECEIVERS_ENV } from '../../helpers/forward-receivers.js';

const T0 = Date.UTC(2026, 2, 1);

test('forward.retention: beyond TRACKGATE_FORWARD_MAX_PENDING and past TRACKGATE_FORWARD_RETENTION_DAYS the oldest are dropped, counted and logged; the rest arrive', async (t) => {
  const clock = new ManualClock(Date.now());
  const logger = capturingLogger();
  const s = await startServer('sqlite', {
    clock,
    logger,
    env: {
      ...ALLOW_RECEIVERS_ENV,
      TRACKGATE_FORWARD_MAX_PENDING: '1000',
      TRACKGATE_FORWARD_RETENTION_DAYS: '1',
      TRACKGATE_FORWARD_TIMEOUT_MS: '500',
    },
  });
  t.teardown(() => s.stop());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  hook.mode = 'error';
  let token = s.adminToken;
  t.is((await s.request('POST', '/api/devices', { token, body: { id: 'ret-1', name: 'ret' } })).status, 201);
  const created = await s.request('POST', '/api/forwards', {
    token,
    body: { name: 'down', type: 'webhook', url: hook.url, events: ['locations'] },
  });
  const id = created.body.forward.id as string;

  const post = async (from: number, n: number) => {
    const locations = Array.from({ length: n }, (_, i) => ({
      dateTime: new Date(T0 + (from + i) * 1000).toISOString(),
      latitude: 40,
      longitude: -3,
    }));
    const r = await s.request('POST', '/api/devices/ret-1/locations', { token, body: { locations } });
    t.is(r.status, 201, JSON.stringify(r.body).slice(0, 300));
  };
  await post(0, 600);
  await post(600, 600);
  const status = async () => (await s.request('GET', `/api/forwards/${id}`, { token })).body.forward.status;
  t.is((await status()).pending, 1200, 'everything waits while the target fails');

  await s.running.forwarding.sweep();
  let st = await status();
  t.is(st.pending, 1000);
  t.is(st.dropped, 200, 'the 200 oldest beyond the newest 1000');
  const line = logger.at('warn', /^forward messages dropped by retention/);
  t.is(line.length, 1);
  t.like(line[0], { forwardId: id, dropped: 200 });
  t.regex(String(line[0].reason), /more than 1000 waiting/);

  // a day and more later, what still waits is dropped too
  await post(1200, 100);
  clock.advance(25 * 3600_000);
  token = await s.token('admin', ADMIN_KEY);
  await post(1300, 50);
  await s.running.forwarding.sweep();
  st = await status();
  t.is(st.dropped, 200 + 1100, 'everything stored more than a day ago');
  t.is(st.pending, 50);
  t.regex(String(logger.at('warn', /^forward messages dropped by retention/)[1].reason), /stored more than 24 h ago/);

  // the target answers again: the 50 kept arrive, none of the dropped
  hook.mode = 'ok';
  // a change of the forward starts its delivery again at once, without waiting out the backoff
  t.is(
    (
      await s.request('PATCH', `/api/forwards/${id}`, {
        token,
        body: [{ op: 'replace', path: '/name', value: 'back' }],
      })
    ).status,
    200,
  );
  const expected = new Set(
    Array.from({ length: 50 }, (_, i) => locationKey('ret-1', new Date(T0 + (1300 + i) * 1000).toISOString())),
  );
  await until('the kept messages arrive', () => check(hook.messages, expected).missing.length === 0, 20_000).catch(
    async (e) => {
      t.log(
        JSON.stringify(await status()),
        hook.requests.length,
        hook.requests.map((r) => r.answered).join(','),
        JSON.stringify(logger.entries.filter((x) => x.level !== 'debug').slice(-8)),
      );
      throw e;
    },
  );
  t.deepEqual(check(hook.messages, expected).unexpected, [], 'none of the dropped');
  await until('delivered', async () => (await status()).pending === 0);
  // what every forward delivered is deleted
  await s.running.forwarding.sweep();
  t.is(Number((await s.running.db('forward_events').count({ n: '*' }))[0].n), 0);
});
