import test from 'ava';
import { backends, createStorage } from '../../helpers/backends.js';
import { closeDb, migrate, openDb } from '../../../core/db/db.js';
import { ManualClock } from '../../../core/clock.js';
import { createAccountsService } from '../../../core/accounts/accounts.service.js';
import { createTokensService } from '../../../core/auth/tokens.service.js';
import { apiKeyMatches } from '../../../core/auth/secrets.js';
import { createMemoryLimiters } from '../../../core/quota/rate-limiter.memory.js';

const KEY = 'tokens-test-key-0123456789abcdef';

for (const backend of await backends()) {
  test(`tokens.service (${backend}): an unknown user name costs the same key check as a wrong key, against a dummy digest`, async (t) => {
    const storage = await createStorage(backend);
    const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
    t.teardown(async () => {
      await closeDb(db);
      await storage.cleanup();
    });
    await migrate(db);
    const clock = new ManualClock(Date.now());
    const admin = await createAccountsService(db, clock).create({ name: 'A', licenses: 1, adminUser: 'alice', adminApiKey: KEY });
    const checked: string[] = [];
    const tokens = createTokensService({
      db, clock, secret: 'a-secret-of-at-least-thirty-two-characters', ttlSeconds: 3600,
      failedLogins: createMemoryLimiters({ perMinute: 0, failedTokenLimit: 10 }).failedLogins,
      // The real check, counted: each call is one digest and one constant-time comparison.
      keyMatches: (key, storedHash) => {
        checked.push(storedHash);
        return apiKeyMatches(key, storedHash);
      },
    });
    await t.throwsAsync(tokens.issue('alice', 'wrong-key', '192.0.2.1'), { message: /Invalid userName or apiKey/ });
    t.is(checked.length, 1, 'a wrong key: one check');
    const real = checked[0];
    await t.throwsAsync(tokens.issue('nobody', KEY, '192.0.2.1'), { message: /Invalid userName or apiKey/ });
    t.is(checked.length, 2, 'an unknown user: one check as well');
    t.regex(checked[1], /^[0-9a-f]{64}$/, 'against a digest of the same shape');
    t.not(checked[1], real, 'which is not any user\'s');
    t.is(await tokens.principalForApiKey('nobody', KEY), null);
    t.is(checked.length, 3, 'MQTT logins with an API key do the same');
    t.is(checked[2], checked[1]);
    const issued = await tokens.issue('alice', KEY, '192.0.2.1');
    t.truthy(issued.token);
    t.is(checked.length, 4);
    t.is(admin.userName, 'alice');
  });
}
