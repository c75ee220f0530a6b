import test from 'ava';
import { ManualClock } from '../../core/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';
import * as F from '../helpers/frames.js';

const T0 = Date.UTC(2026, 2, 2, 10, 0, 0);
const IMEI = '356307042441013';
type T = { teardown(fn: () => unknown): void };

/** A GT06 tracker logged in as IMEI: each heartbeat (no position) is written and its ack read. */
async function gt06(t: T, s: TestServer): Promise<{ heartbeat(): Promise<void> }> {
  const c = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => c.end());
  c.write(F.gt06Login(IMEI, 1));
  await c.read(F.gt06Ack(0x01, 1).length);
  let serial = 2;
  return {
    async heartbeat() {
      const n = serial++;
      c.write(F.gt06Heartbeat(n));
      await c.read(F.gt06Ack(0x13, n).length);
    },
  };
}

const lastConnection = async (s: TestServer): Promise<string | null> =>
  (await s.request('GET', `/api/devices/${IMEI}`, { token: s.adminToken })).body.device.lastConnection;

test('lastConnection: a heartbeat after a gap is written at once, one within seconds of the last write soon after; the Offline rule then quotes the last one, "1 minute"', async (t) => {
  const clock = new ManualClock(new Date(T0));
  const s = await startServer('sqlite', { clock, env: { TRACKGATE_GT06_PORT: '0' } });
  t.teardown(() => s.stop());
  t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: IMEI, name: 'Van' } })).status, 201);
  const rule = await s.request('POST', '/api/alertRules', {
    token: s.adminToken,
    body: {
      name: 'Silent van',
      alertName: 'Offline',
      params: { minutes: 1 },
      devices: [IMEI],
      notify: { email: false, sms: false },
    },
  });
  t.is(rule.status, 201, JSON.stringify(rule.body));
  const tracker = await gt06(t, s);
  await until('the login written', async () => (await lastConnection(s)) === new Date(T0).toISOString());

  // 20 s later: heard after a gap, written at once (it was not, for up to a minute)
  clock.advance(20_000);
  await tracker.heartbeat();
  await until(
    'the heartbeat after a gap written',
    async () => (await lastConnection(s)) === new Date(T0 + 20_000).toISOString(),
    3000,
  );
  // 1 s later: the newest time follows within a few seconds
  clock.advance(1000);
  await tracker.heartbeat();
  await until(
    'the next heartbeat written too',
    async () => (await lastConnection(s)) === new Date(T0 + 21_000).toISOString(),
    15_000,
  );

  clock.advance(61_000);
  await s.running.rules.tick();
  await s.running.rules.idle();
  const alerts = await s.request('POST', `/api/devices/${IMEI}/alerts`, {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
  });
  t.deepEqual(
    alerts.body.alerts.map((a: { text: string }) => a.text),
    [`No report for 1 minute (last at ${new Date(T0 + 21_000).toISOString().replace('.000Z', 'Z')})`],
  );
});

test('lastConnection: through gateway processes, a heartbeat a moment after the login is written within seconds', async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_GT06_PORT: '0', TRACKGATE_GATEWAY_PROCESSES: '1' } });
  t.teardown(() => s.stop());
  t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: IMEI, name: 'Van' } })).status, 201);
  const tracker = await gt06(t, s);
  await until('the login written', async () => (await lastConnection(s)) !== null);
  const login = Date.parse((await lastConnection(s))!);
  // a moment later than the login, by the core's clock: not left at the login's time
  await until('a second passed', () => Date.now() >= login + 1500);
  const sent = Date.now();
  await tracker.heartbeat();
  await until('the heartbeat written', async () => Date.parse((await lastConnection(s))!) >= sent, 15_000);
  t.pass();
});
