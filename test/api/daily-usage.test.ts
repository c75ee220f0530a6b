import test from 'ava';
import { startServer } from '../helpers/server.js';
import { ManualClock } from '../../core/clock.js';

test('apiDailyUsage: on the embedded default it goes on counting after a restart on the same data', async (t) => {
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const first = await startServer('sqlite', { clock, env: { TRACKGATE_TOKEN_TTL: '86400' } });
  let last = 0;
  for (let i = 0; i < 4; i++)
    last = (await first.request('GET', '/api/devices', { token: first.adminToken })).body.apiDailyUsage;
  t.true(last >= 4);
  await first.running.stop();

  clock.advance(60_000);
  const second = await startServer('sqlite', {
    clock,
    storageEnv: first.storageEnv,
    env: { TRACKGATE_TOKEN_TTL: '86400' },
  });
  t.teardown(() => second.stop());
  const after = await second.request('GET', '/api/devices', { token: second.adminToken });
  t.is(after.body.apiDailyUsage, last + 1);
  t.is(after.body.apiUsage, 1, 'the minute counts from a new start');
});
