/** Daily counters in Redis, shared by every gateway process on the same prefix. */
import type { Redis } from 'ioredis';
import type { QuotaStore } from './quota-store.js';

// GET, compare and INCR in one script: two processes can never both take the last place.
// PEXPIREAT on every success keeps the key's end of day even if an older key was left without one.
const RESERVE = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return {0, n} end
n = redis.call('INCR', KEYS[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return {1, n}
`;

// DECR keeps the key's expiry; the check keeps the counter from going below 0.
const RELEASE = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0
`;

interface QuotaCommands {
  tgQuotaReserve(key: string, limit: string, expiresAtMs: string): Promise<[number, number]>;
  tgQuotaRelease(key: string): Promise<number>;
}

/** `prefix` namespaces every key (e.g. `trackgate:`); the client stays the caller's to close. */
export function createRedisQuotaStore(redis: Redis, prefix: string): QuotaStore {
  // defineCommand sends EVALSHA and falls back to EVAL once per connection.
  redis.defineCommand('tgQuotaReserve', { numberOfKeys: 1, lua: RESERVE });
  redis.defineCommand('tgQuotaRelease', { numberOfKeys: 1, lua: RELEASE });
  const r = redis as Redis & QuotaCommands;
  const k = (key: string) => `${prefix}quota:${key}`;

  return {
    async reserve(key, limit, expiresAt) {
      const [ok, count] = await r.tgQuotaReserve(k(key), String(limit), String(expiresAt.getTime()));
      return { ok: ok === 1, count };
    },
    async release(key) {
      await r.tgQuotaRelease(k(key));
    },
    async get(keys) {
      if (keys.length === 0) return [];
      const values = await redis.mget(keys.map(k));
      return values.map((v) => (v === null ? 0 : Number(v)));
    },
  };
}
