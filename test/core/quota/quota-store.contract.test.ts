/** One contract for every QuotaStore: in-process and Redis (real server). */
import test from 'ava';
import { ManualClock } from '../../../core/clock.js';
import type { QuotaStore } from '../../../core/quota/quota-store.js';
import { createMemoryQuotaStore } from '../../../core/quota/quota-store.memory.js';
import { createRedisQuotaStore } from '../../../core/quota/quota-store.redis.js';
import { testRedis, useRedis } from '../../helpers/redis.js';
import { startOwnRedis } from '../../helpers/own-services.js';
import { closeRedis, connectRedis } from '../../../core/redis/redis-client.redis.js';
import { until } from '../../helpers/wait.js';

interface Fixture {
  store: QuotaStore;
  nowMs(): number;
  /** lets `ms` pass as the store sees time */
  elapse(ms: number): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const implementations: Record<string, () => Fixture> = {
  memory() {
    const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
    const store = createMemoryQuotaStore({ clock });
    return {
      store,
      nowMs: () => clock.now().getTime(),
      elapse: async (ms) => clock.advance(ms),
      close: async () => store.close(),
    };
  },
};
if (await useRedis('quota-store (redis)')) {
  implementations.redis = () => {
    const r = testRedis();
    return {
      store: createRedisQuotaStore(r.client(), r.prefix),
      nowMs: () => Date.now(),
      elapse: sleep,
      close: () => r.cleanup(),
    };
  };
}

const endOfDay = (fx: Fixture) => new Date(fx.nowMs() + 86_400_000);

for (const [name, make] of Object.entries(implementations)) {
  const fixture = (t: { teardown(fn: () => Promise<void>): void }) => {
    const fx = make();
    t.teardown(() => fx.close());
    return fx;
  };

  test(`quota-store (${name}): 200 concurrent reserves with limit 10 let exactly 10 through`, async (t) => {
    const fx = fixture(t);
    const results = await Promise.all(
      Array.from({ length: 200 }, () => fx.store.reserve('sent:email:d1:2026-03-01', 10, endOfDay(fx))),
    );
    t.is(results.filter((r) => r.ok).length, 10);
    t.deepEqual(
      results
        .filter((r) => r.ok)
        .map((r) => r.count)
        .sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    t.true(results.filter((r) => !r.ok).every((r) => r.count === 10));
    t.deepEqual(await fx.store.get(['sent:email:d1:2026-03-01']), [10]);
  });

  test(`quota-store (${name}): raising the limit mid-day allows more today, lowering it allows none`, async (t) => {
    const fx = fixture(t);
    const key = 'sent:sms:d1:2026-03-01';
    t.like(await fx.store.reserve(key, 1, endOfDay(fx)), { ok: true, count: 1 });
    t.like(await fx.store.reserve(key, 1, endOfDay(fx)), { ok: false, count: 1 });
    t.like(await fx.store.reserve(key, 3, endOfDay(fx)), { ok: true, count: 2 });
    t.like(await fx.store.reserve(key, 0, endOfDay(fx)), { ok: false, count: 2 });
  });

  test(`quota-store (${name}): release frees one place and never goes below 0`, async (t) => {
    const fx = fixture(t);
    const key = 'sent:email:d2:2026-03-01';
    await fx.store.reserve(key, 2, endOfDay(fx));
    await fx.store.reserve(key, 2, endOfDay(fx));
    t.false((await fx.store.reserve(key, 2, endOfDay(fx))).ok);
    await fx.store.release(key);
    t.deepEqual(await fx.store.get([key]), [1]);
    t.like(await fx.store.reserve(key, 2, endOfDay(fx)), { ok: true, count: 2 });
    await fx.store.release(key);
    await fx.store.release(key);
    await fx.store.release(key);
    await fx.store.release('sent:email:never-used:2026-03-01');
    t.deepEqual(await fx.store.get([key, 'sent:email:never-used:2026-03-01']), [0, 0]);
    t.like(await fx.store.reserve(key, 2, endOfDay(fx)), { ok: true, count: 1 });
  });

  test(`quota-store (${name}): get answers 0 for missing keys, in the order asked`, async (t) => {
    const fx = fixture(t);
    await fx.store.reserve('a', 5, endOfDay(fx));
    await fx.store.reserve('b', 5, endOfDay(fx));
    await fx.store.reserve('b', 5, endOfDay(fx));
    t.deepEqual(await fx.store.get(['b', 'missing', 'a']), [2, 0, 1]);
    t.deepEqual(await fx.store.get([]), []);
  });

  test(`quota-store (${name}): a counter it does not hold starts from initial(), asked once`, async (t) => {
    const fx = fixture(t);
    const key = 'sent:email:d4:2026-03-01';
    let asked = 0;
    const initial = async () => {
      asked++;
      await sleep(20);
      return 3;
    };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => fx.store.reserve(key, 5, endOfDay(fx), initial)),
    );
    t.is(results.filter((r) => r.ok).length, 2, 'three already sent today, limit five');
    t.deepEqual(await fx.store.get([key]), [5]);
    t.is(asked, 1, 'concurrent reserves of one missing counter ask once');
    await fx.store.reserve(key, 5, endOfDay(fx), initial);
    t.is(asked, 1, 'not asked again once the counter is held');
    let zeroAsked = 0;
    for (let i = 0; i < 3; i++)
      t.false((await fx.store.reserve('sent:sms:d4:2026-03-01', 0, endOfDay(fx), async () => (zeroAsked++, 0))).ok);
    t.is(zeroAsked, 1, 'a counter started at 0 is held too (a limit of 0 asks once)');
  });

  test(`quota-store (${name}): a counter resets once its expiry has passed`, async (t) => {
    const fx = fixture(t);
    const key = 'sent:email:d3:2026-03-01';
    // Redis keeps real time: an expiry a busy machine does not reach between two calls (300 ms did)
    const soon = () => new Date(fx.nowMs() + 5000);
    t.true((await fx.store.reserve(key, 1, soon())).ok);
    t.false((await fx.store.reserve(key, 1, soon())).ok);
    await until('the counter expired', async () => {
      await fx.elapse(200);
      return (await fx.store.get([key]))[0] === 0;
    });
    t.like(await fx.store.reserve(key, 1, soon()), { ok: true, count: 1 });
  });
}

test('quota-store (memory): the sweep drops expired counters, later ones stay', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
  const store = createMemoryQuotaStore({ clock });
  t.teardown(() => store.close());
  await store.reserve('old', 5, new Date(clock.now().getTime() + 1000));
  await store.reserve('new', 5, new Date(clock.now().getTime() + 86_400_000));
  clock.advance(2000);
  t.is(store.sweep(), 1);
  t.deepEqual(await store.get(['old', 'new']), [0, 1]);
});

if (implementations.redis) {
  test('quota-store (redis): two clients on one prefix share the count exactly', async (t) => {
    const r = testRedis();
    t.teardown(() => r.cleanup());
    const a = createRedisQuotaStore(r.client(), r.prefix);
    const b = createRedisQuotaStore(r.client(), r.prefix);
    const expiresAt = new Date(Date.now() + 60_000);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).reserve('sent:sms:shared:2026-03-01', 10, expiresAt)),
    );
    t.is(results.filter((x) => x.ok).length, 10);
    t.deepEqual(await a.get(['sent:sms:shared:2026-03-01']), [10]);
    await b.release('sent:sms:shared:2026-03-01');
    t.deepEqual(await a.get(['sent:sms:shared:2026-03-01']), [9]);
  });

  test('quota-store (redis): the key carries the end of day it was given', async (t) => {
    const r = testRedis();
    t.teardown(() => r.cleanup());
    const client = r.client();
    const store = createRedisQuotaStore(client, r.prefix);
    const expiresAt = new Date(Date.now() + 3_600_000);
    await store.reserve('sent:email:ttl:2026-03-01', 5, expiresAt);
    const keys = await client.keys(`${r.prefix}quota:*`);
    t.is(keys.length, 1);
    t.is(await client.pexpiretime(keys[0]), expiresAt.getTime());
  });
}

if (implementations.redis) {
  test('quota-store (redis): a reservation that timed out on a frozen Redis takes no place when Redis carries it out later', async (t) => {
    const own = await startOwnRedis();
    t.teardown(() => own.stop());
    // long enough for an answer on a busy machine, short enough to wait out twice
    const client = connectRedis(own.url, { commandTimeout: 3000 });
    client.on('error', () => {});
    t.teardown(() => closeRedis(client));
    const store = createRedisQuotaStore(client, 'tg:');
    const key = 'sent:email:frozen:2026-03-01';
    const end = new Date(Date.now() + 3_600_000);
    t.like(await store.reserve(key, 3, end), { ok: true, count: 1 });
    own.freeze();
    await t.throwsAsync(store.reserve(key, 3, end), { message: /timed out/i });
    await t.throwsAsync(
      store.reserve(key, 3, end, async () => 0),
      { message: /timed out/i },
    );
    own.thaw();
    await new Promise((r) => setTimeout(r, 200));
    t.deepEqual(await store.get([key]), [1], 'only the reservation that was answered counts');
    t.like(await store.reserve(key, 3, end), { ok: true, count: 2 });
  });
}
