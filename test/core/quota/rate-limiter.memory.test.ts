import test from 'ava';
import { createMemoryLimiters } from '../../../core/quota/rate-limiter.memory.js';

test('rate-limiter.memory: the failed-login table is bounded; past its size the oldest windows are forgotten first', async (t) => {
  const { failedLogins } = createMemoryLimiters({ perMinute: 10, failedTokenLimit: 1, failedWindowSeconds: 900 });
  await failedLogins.recordFailure(['ip:first']);
  t.true((await failedLogins.blockedFor(['ip:first'])) > 0);
  // Addresses an attacker could cycle through (IPv6 gives plenty), each failing once.
  for (let i = 0; i < 120_000; i++) await failedLogins.recordFailure([`ip:2001:db8::${i.toString(16)}`]);
  t.is(await failedLogins.blockedFor(['ip:first']), 0, 'the oldest window made room');
  t.true((await failedLogins.blockedFor(['ip:2001:db8::1d4bf'])) > 0, 'the newest are kept');
  t.true((await failedLogins.blockedFor(['ip:2001:db8::4e20'])) > 0, '100,000 of them');
});
