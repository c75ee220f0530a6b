/** One contract for request accounting: in-process and Redis (real server). */
import test from 'ava';
import { createMemoryLimiters } from '../../../core/quota/rate-limiter.memory.js';
import type { LimitSettings, Limiters } from '../../../core/quota/rate-limiter.js';
import { createRedisLimiters } from '../../../core/quota/rate-limiter.redis.js';
import { testRedis, useRedis } from '../../helpers/redis.js';

type Make = (t: { teardown(fn: () => Promise<void>): void }, settings: LimitSettings) => Limiters;

const implementations: Record<string, Make> = {
  memory: (_t, settings) => createMemoryLimiters(settings),
};
if (await useRedis('rate-limiter (redis)')) {
  implementations.redis = (t, settings) => {
    const r = testRedis();
    t.teardown(() => r.cleanup());
    return createRedisLimiters(r.client(), r.prefix, settings);
  };
}

// Windows are keyed by the time passed in, so any fixed instant works; 10 s into a minute.
const AT = new Date(Date.UTC(2026, 2, 1, 12, 30, 10));
const later = (ms: number) => new Date(AT.getTime() + ms);

for (const [name, make] of Object.entries(implementations)) {
  test(`rate-limiter (${name}): counts requests per user per minute and per UTC day`, async (t) => {
    const { requests } = make(t, { perMinute: 10, failedTokenLimit: 5 });
    t.like(await requests.hit('u1', AT), { allowed: true, minute: 1, day: 1, retryAfterSeconds: 0 });
    t.like(await requests.hit('u1', later(1000)), { minute: 2, day: 2 });
    t.like(await requests.hit('u2', later(2000)), { minute: 1, day: 1 }, 'users are counted apart');
    t.like(await requests.hit('u1', later(60_000)), { allowed: true, minute: 1, day: 3 }, 'a new minute, the same day');
    t.like(await requests.hit('u1', new Date(Date.UTC(2026, 2, 2, 0, 0, 1))), { minute: 1, day: 1 }, 'a new UTC day');
  });

  test(`rate-limiter (${name}): past the per-minute limit a request is refused until the minute ends`, async (t) => {
    const { requests } = make(t, { perMinute: 3, failedTokenLimit: 5 });
    for (let i = 0; i < 3; i++) t.true((await requests.hit('u1', AT)).allowed);
    const refused = await requests.hit('u1', later(500));
    t.false(refused.allowed);
    t.true(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60);
    t.is(refused.retryAfterSeconds, 50, '10.5 s into the minute');
    t.true((await requests.hit('u2', AT)).allowed, 'other users are not affected');
    t.true((await requests.hit('u1', later(50_000))).allowed, 'the next minute');
  });

  test(`rate-limiter (${name}): failed logins block a key after N failures`, async (t) => {
    const { failedLogins } = make(t, { perMinute: 10, failedTokenLimit: 3, failedWindowSeconds: 120 });
    t.is(await failedLogins.blockedFor(['user:alice', 'ip:10.0.0.1']), 0);
    await failedLogins.recordFailure(['user:alice', 'ip:10.0.0.1']);
    await failedLogins.recordFailure(['user:alice', 'ip:10.0.0.2']);
    t.is(await failedLogins.blockedFor(['user:alice']), 0, 'two failures of three');
    await failedLogins.recordFailure(['user:alice', 'ip:10.0.0.3']);
    const wait = await failedLogins.blockedFor(['user:alice']);
    t.true(wait >= 1 && wait <= 120, `blocked for ${wait} s`);
    t.is(await failedLogins.blockedFor(['user:bob', 'ip:10.0.0.2']), 0);
    t.true((await failedLogins.blockedFor(['user:bob', 'user:alice'])) > 0, 'any blocked key blocks');
  });

  test(`rate-limiter (${name}): perMinute 0 is unlimited but still counted, and failed limits are off`, async (t) => {
    const { requests, failedLogins } = make(t, { perMinute: 0, failedTokenLimit: 1 });
    let last: Awaited<ReturnType<typeof requests.hit>> | undefined;
    for (let i = 0; i < 150; i++) last = await requests.hit('u1', AT);
    t.like(last, { allowed: true, minute: 150, day: 150 });
    for (let i = 0; i < 5; i++) await failedLogins.recordFailure(['user:alice']);
    t.is(await failedLogins.blockedFor(['user:alice']), 0);
  });
}

if (implementations.redis) {
  test('rate-limiter (redis): two limiter instances on one prefix share counts', async (t) => {
    const r = testRedis();
    t.teardown(() => r.cleanup());
    const settings = { perMinute: 3, failedTokenLimit: 2 };
    const a = createRedisLimiters(r.client(), r.prefix, settings);
    const b = createRedisLimiters(r.client(), r.prefix, settings);
    t.like(await a.requests.hit('u1', AT), { minute: 1, day: 1 });
    t.like(await b.requests.hit('u1', AT), { minute: 2, day: 2 });
    t.like(await a.requests.hit('u1', AT), { allowed: true, minute: 3 });
    t.false((await b.requests.hit('u1', AT)).allowed);
    await a.failedLogins.recordFailure(['user:alice']);
    await b.failedLogins.recordFailure(['user:alice']);
    t.true((await a.failedLogins.blockedFor(['user:alice'])) > 0);
  });
}
