/**
 * Licence holders in Redis: one sorted set per account, member = device id, score = expiry in
 * epoch ms (+inf: never). Holders at `now` are ZCOUNT (now +inf, so expiry needs no timer.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LicenseStore } from './license-store.js';

// ARGV: deviceId, score, nowMs, total. Check and add in one script so concurrent claims from any
// number of processes cannot both take the last licence. ZSCORE answers "inf" for +inf. The
// device's score before the claim ('' for none) is noted under KEYS[2] for a minute, so a caller
// that gave up waiting for the answer can undo the claim (CANCEL below).
const CLAIM = `
local now = tonumber(ARGV[3])
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
local holds = score and (score == 'inf' or tonumber(score) > now)
if not holds and redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[3], '+inf') >= tonumber(ARGV[4]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('SET', KEYS[2], score or '', 'PX', 60000)
return 1
`;

// Puts the device's score back as it was before a claim whose answer never came, if the claim
// was carried out. Sent on the same connection right after giving up, so a Redis that was frozen
// (SIGSTOP) runs it right after the claim.
const CANCEL = `
local before = redis.call('GET', KEYS[2])
if not before then return 0 end
redis.call('DEL', KEYS[2])
if before == '' then redis.call('ZREM', KEYS[1], ARGV[1])
elseif before == 'inf' then redis.call('ZADD', KEYS[1], '+inf', ARGV[1])
else redis.call('ZADD', KEYS[1], before, ARGV[1]) end
return 1
`;

interface LicenseCommands {
  tgLicenseClaim(
    key: string,
    token: string,
    deviceId: string,
    score: string,
    nowMs: string,
    total: string,
  ): Promise<number>;
  tgLicenseCancel(key: string, token: string, deviceId: string): Promise<number>;
}

const score = (expiresAtMs: number | null): string => (expiresAtMs === null ? '+inf' : String(expiresAtMs));

/** `prefix` namespaces every key (e.g. `trackgate:`); the client stays the caller's to close. */
export function createRedisLicenseStore(redis: Redis, prefix: string): LicenseStore {
  redis.defineCommand('tgLicenseClaim', { numberOfKeys: 2, lua: CLAIM });
  redis.defineCommand('tgLicenseCancel', { numberOfKeys: 2, lua: CANCEL });
  const r = redis as Redis & LicenseCommands;
  const k = (accountId: string) => `${prefix}licenses:${accountId}`;

  return {
    async claim(accountId, deviceId, expiresAtMs, total, nowMs) {
      const token = `${prefix}license-token:${randomUUID()}`;
      try {
        return (
          (await r.tgLicenseClaim(k(accountId), token, deviceId, score(expiresAtMs), String(nowMs), String(total))) ===
          1
        );
      } catch (e) {
        // Not sent at all (no connection): nothing to undo. Otherwise it may still run: undo it.
        if (!/isn't writeable/i.test((e as Error).message))
          r.tgLicenseCancel(k(accountId), token, deviceId).catch(() => {});
        throw e;
      }
    },
    async set(accountId, deviceId, expiresAtMs) {
      await redis.zadd(k(accountId), score(expiresAtMs), deviceId);
    },
    async release(accountId, deviceId) {
      await redis.zrem(k(accountId), deviceId);
    },
    async used(accountId, nowMs) {
      return redis.zcount(k(accountId), `(${nowMs}`, '+inf');
    },
    async load(accountId, devices) {
      const tx = redis.multi().del(k(accountId));
      if (devices.length > 0) tx.zadd(k(accountId), ...devices.flatMap((d) => [score(d.expiresAt), d.id]));
      // exec() reports a failed command in its reply instead of rejecting.
      const failed = (await tx.exec())?.find(([err]) => err);
      if (failed) throw failed[0];
    },
  };
}
