/** One contract for every LicenseStore: in-process and Redis (real server). */
import test from 'ava';
import type { LicenseStore } from '../../../core/licenses/license-store.js';
import { createMemoryLicenseStore } from '../../../core/licenses/license-store.memory.js';
import { createRedisLicenseStore } from '../../../core/licenses/license-store.redis.js';
import { testRedis, useRedis } from '../../helpers/redis.js';
import { startOwnRedis } from '../../helpers/own-services.js';
import { closeRedis, connectRedis } from '../../../core/redis/redis-client.redis.js';

const NOW = Date.UTC(2026, 2, 1, 12);
const HOUR = 3_600_000;

const implementations: Record<string, () => { store: LicenseStore; close(): Promise<void> }> = {
  memory: () => ({ store: createMemoryLicenseStore(), close: async () => {} }),
};
if (await useRedis('license-store (redis)')) {
  implementations.redis = () => {
    const r = testRedis();
    return { store: createRedisLicenseStore(r.client(), r.prefix), close: () => r.cleanup() };
  };
}

for (const [name, make] of Object.entries(implementations)) {
  const storeFor = (t: { teardown(fn: () => Promise<void>): void }) => {
    const fx = make();
    t.teardown(() => fx.close());
    return fx.store;
  };

  test(`license-store (${name}): claims succeed up to the total, then fail and change nothing`, async (t) => {
    const s = storeFor(t);
    t.true(await s.claim('acc', 'd1', null, 2, NOW));
    t.true(await s.claim('acc', 'd2', NOW + HOUR, 2, NOW));
    t.false(await s.claim('acc', 'd3', null, 2, NOW));
    t.is(await s.used('acc', NOW), 2);
    t.true(await s.claim('acc', 'd3', null, 3, NOW), 'the refused claim left no trace');
    t.is(await s.used('acc', NOW), 3);
  });

  test(`license-store (${name}): a holder re-claims with the total reached and gets its new expiry`, async (t) => {
    const s = storeFor(t);
    t.true(await s.claim('acc', 'd1', NOW + HOUR, 1, NOW));
    t.true(await s.claim('acc', 'd1', null, 1, NOW));
    t.is(await s.used('acc', NOW + 1000 * HOUR), 1, 'now never expires');
    t.true(await s.claim('acc', 'd1', NOW + 2 * HOUR, 0, NOW), 'even when the total was lowered');
    t.is(await s.used('acc', NOW + 2 * HOUR), 0);
  });

  test(`license-store (${name}): expiry frees the licence by time alone`, async (t) => {
    const s = storeFor(t);
    t.true(await s.claim('acc', 'd1', NOW + HOUR, 1, NOW));
    t.is(await s.used('acc', NOW + HOUR - 1), 1);
    t.is(await s.used('acc', NOW + HOUR), 0, 'expired at its expiry instant, as model/device isExpired');
    t.false(await s.claim('acc', 'd2', null, 1, NOW + HOUR - 1));
    t.true(await s.claim('acc', 'd2', null, 1, NOW + HOUR));
    t.false(
      await s.claim('acc', 'd1', NOW + 5 * HOUR, 1, NOW + 2 * HOUR),
      'an expired device needs a free licence like a new one',
    );
  });

  test(`license-store (${name}): set records an expiry without checking the total`, async (t) => {
    const s = storeFor(t);
    t.true(await s.claim('acc', 'd1', null, 1, NOW));
    await s.set('acc', 'd2', null);
    t.is(await s.used('acc', NOW), 2);
    await s.set('acc', 'd1', NOW - 1);
    t.is(await s.used('acc', NOW), 1, 'expiry moved into the past');
    await s.set('acc', 'd3', NOW - HOUR);
    t.is(await s.used('acc', NOW), 1, 'an expired device is recorded but holds nothing');
  });

  test(`license-store (${name}): release frees the licence; accounts are independent`, async (t) => {
    const s = storeFor(t);
    t.true(await s.claim('a', 'd1', null, 1, NOW));
    t.true(await s.claim('b', 'd1', null, 1, NOW));
    t.false(await s.claim('a', 'd2', null, 1, NOW));
    await s.release('a', 'd1');
    await s.release('a', 'unknown');
    t.is(await s.used('a', NOW), 0);
    t.is(await s.used('b', NOW), 1);
    t.is(await s.used('nobody', NOW), 0);
    t.true(await s.claim('a', 'd2', null, 1, NOW));
  });

  test(`license-store (${name}): load replaces the account's state`, async (t) => {
    const s = storeFor(t);
    await s.claim('acc', 'stale', null, 5, NOW);
    await s.claim('other', 'd9', null, 5, NOW);
    await s.load('acc', [
      { id: 'd1', expiresAt: null },
      { id: 'd2', expiresAt: NOW + HOUR },
      { id: 'd3', expiresAt: NOW - HOUR },
    ]);
    t.is(await s.used('acc', NOW), 2);
    t.is(await s.used('acc', NOW + HOUR), 1);
    t.true(await s.claim('acc', 'd2', NOW + 2 * HOUR, 2, NOW), 'd2 is a holder after the load');
    t.false(await s.claim('acc', 'stale', null, 2, NOW), 'stale was dropped, so it is a newcomer and none is free');
    await s.load('acc', []);
    t.is(await s.used('acc', NOW), 0);
    t.is(await s.used('other', NOW), 1, 'other accounts untouched');
  });

  test(`license-store (${name}): 20 concurrent claims for one free licence let exactly one through`, async (t) => {
    const s = storeFor(t);
    await s.load('acc', [
      { id: 'held1', expiresAt: null },
      { id: 'held2', expiresAt: NOW + HOUR },
      { id: 'gone', expiresAt: NOW - 1 },
    ]);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.claim('acc', `new${i}`, null, 3, NOW)));
    t.is(results.filter(Boolean).length, 1);
    t.is(await s.used('acc', NOW), 3);
  });
}

if (implementations.redis) {
  test('license-store (redis): 20 concurrent claims across two clients let exactly one through', async (t) => {
    const r = testRedis();
    t.teardown(() => r.cleanup());
    const a = createRedisLicenseStore(r.client(), r.prefix);
    const b = createRedisLicenseStore(r.client(), r.prefix);
    await a.load('acc', [{ id: 'held', expiresAt: null }]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claim('acc', `new${i}`, NOW + HOUR, 2, NOW)),
    );
    t.is(results.filter(Boolean).length, 1);
    t.is(await b.used('acc', NOW), 2);
    t.is(await a.used('acc', NOW + HOUR), 1, 'the winner expires by time alone');
  });

  test('license-store (redis): a claim that timed out on a frozen Redis changes nothing when Redis carries it out later', async (t) => {
    const own = await startOwnRedis();
    t.teardown(() => own.stop());
    // long enough for an answer on a busy machine, short enough to wait out three times
    const client = connectRedis(own.url, { commandTimeout: 3000 });
    client.on('error', () => {});
    t.teardown(() => closeRedis(client));
    const s = createRedisLicenseStore(client, 'tg:');
    await s.load('acc', [
      { id: 'held', expiresAt: NOW + HOUR },
      { id: 'expired', expiresAt: NOW - HOUR },
    ]);
    own.freeze();
    await t.throwsAsync(s.claim('acc', 'new', null, 3, NOW), { message: /timed out/i });
    await t.throwsAsync(s.claim('acc', 'expired', null, 3, NOW), { message: /timed out/i });
    await t.throwsAsync(s.claim('acc', 'held', null, 3, NOW), { message: /timed out/i });
    own.thaw();
    await new Promise((r) => setTimeout(r, 200));
    t.is(await s.used('acc', NOW), 1, 'neither the newcomer nor the expired device holds a licence');
    t.is(await s.used('acc', NOW + 2 * HOUR), 0, 'the holder kept its expiry');
    t.true(await s.claim('acc', 'new', null, 2, NOW));
  });
}
