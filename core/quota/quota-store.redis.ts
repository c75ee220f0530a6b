/** Daily counters in Redis, shared by every gateway process on the same prefix. */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { QuotaStore } from './quota-store.js';

// GET, compare and INCR in one script: two processes can never both take the last place.
// PEXPIREAT on every success keeps the key's end of day even if an older key was left without one.
// ARGV[3] = 1: a missing counter is not created but reported ({-1, 0}) so the caller starts it
// from its records first. A place taken is noted under KEYS[2] for a minute, so a caller that
// gave up waiting for the answer can take it back (CANCEL below).
const RESERVE = `
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return {0, n} end
n = redis.call('INCR', KEYS[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], '1', 'PX', 60000)
return {1, n}
`;

// Starts a missing counter (never overwrites one another process started meanwhile).
const START = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
`;

// DECR keeps the key's expiry; the check keeps the counter from going below 0.
const RELEASE = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0
`;

// Takes back the place of a reservation whose answer never came, if it was taken at all. Sent on
// the same connection right after giving up, so Redis runs it after the reservation even when it
// was frozen (SIGSTOP) and carries both out later.
const CANCEL = `
if redis.call('DEL', KEYS[2]) == 1 then
  local n = tonumber(redis.call('GET', KEYS[1]) or '0')
  if n > 0 then redis.call('DECR', KEYS[1]) end
end
return 0
`;

interface QuotaCommands {
  tgQuotaReserve(
    key: string,
    token: string,
    limit: string,
    expiresAtMs: string,
    reportMissing: string,
  ): Promise<[number, number]>;
  tgQuotaStart(key: string, count: string, expiresAtMs: string): Promise<number>;
  tgQuotaRelease(key: string): Promise<number>;
  tgQuotaCancel(key: string, token: string): Promise<number>;
}

/** Cancellations that could not be sent (connection down) wait for the next connection, up to this many. */
const MAX_PENDING_CANCELS = 10_000;

/** ioredis refused to send the command at all (no connection, no offline queue): it never ran. */
const neverSent = (e: Error) => /isn't writeable/i.test(e.message);
/** the connection dropped with the command in flight: it may or may not have run */
const dropped = (e: Error) => /Connection is closed/i.test(e.message);

/** `prefix` namespaces every key (e.g. `trackgate:`); the client stays the caller's to close. */
export function createRedisQuotaStore(redis: Redis, prefix: string): QuotaStore {
  // defineCommand sends EVALSHA and falls back to EVAL once per connection.
  redis.defineCommand('tgQuotaReserve', { numberOfKeys: 2, lua: RESERVE });
  redis.defineCommand('tgQuotaStart', { numberOfKeys: 1, lua: START });
  redis.defineCommand('tgQuotaRelease', { numberOfKeys: 1, lua: RELEASE });
  redis.defineCommand('tgQuotaCancel', { numberOfKeys: 2, lua: CANCEL });
  const r = redis as Redis & QuotaCommands;
  const k = (key: string) => `${prefix}quota:${key}`;

  const pending = new Map<string, string>();
  function cancel(key: string, token: string): void {
    r.tgQuotaCancel(key, token).then(
      () => pending.delete(token),
      (e: Error) => {
        // A timed-out cancel was still written and runs when Redis does; one never written waits.
        if ((neverSent(e) || dropped(e)) && pending.size < MAX_PENDING_CANCELS) pending.set(token, key);
      },
    );
  }
  redis.on('ready', () => {
    for (const [token, key] of [...pending]) {
      pending.delete(token);
      cancel(key, token);
    }
  });

  async function attempt(
    key: string,
    limit: number,
    expiresAt: Date,
    reportMissing: boolean,
  ): Promise<[number, number]> {
    const token = `${prefix}quota-token:${randomUUID()}`;
    try {
      return await r.tgQuotaReserve(key, token, String(limit), String(expiresAt.getTime()), reportMissing ? '1' : '0');
    } catch (e) {
      if (!neverSent(e as Error)) cancel(key, token);
      throw e;
    }
  }

  // Reserves of this process that find the same counter missing wait for one start, not one each.
  const starting = new Map<string, Promise<unknown>>();
  function start(key: string, expiresAt: Date, initial: () => Promise<number>): Promise<unknown> {
    let started = starting.get(key);
    if (!started) {
      started = initial()
        .then((n) => r.tgQuotaStart(key, String(n), String(expiresAt.getTime())))
        .finally(() => starting.delete(key));
      starting.set(key, started);
    }
    return started;
  }

  return {
    async reserve(name, limit, expiresAt, initial) {
      const key = k(name);
      let [ok, count] = await attempt(key, limit, expiresAt, initial !== undefined);
      if (ok === -1 && initial) {
        await start(key, expiresAt, initial);
        [ok, count] = await attempt(key, limit, expiresAt, false);
      }
      return { ok: ok === 1, count };
    },
    async release(name) {
      await r.tgQuotaRelease(k(name));
    },
    async get(keys) {
      if (keys.length === 0) return [];
      const values = await redis.mget(keys.map(k));
      return values.map((v) => (v === null ? 0 : Number(v)));
    },
  };
}
