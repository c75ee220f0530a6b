import test, { type ExecutionContext } from 'ava';
import jwt from 'jsonwebtoken';
import { backends, createStorage, type Backend } from '../../helpers/backends.js';
import { closeDb, migrate, openDb } from '../../../core/db/db.js';
import { ManualClock } from '../../../core/clock.js';
import { createAccountsService } from '../../../core/accounts/accounts.service.js';
import { createTokensService } from '../../../core/auth/tokens.service.js';
import { openTokenSecrets } from '../../../core/auth/token-secrets.js';
import * as settings from '../../../core/settings/settings.repository.js';
import { silentLogger } from '../../../core/logger.js';
import { apiKeyMatches } from '../../../core/secrets.js';
import { createMemoryLimiters } from '../../../core/quota/rate-limiter.memory.js';
import * as users from '../../../core/users/users.repository.js';
import type { UserRecord } from '../../../core/model/user.js';

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
    const admin = await createAccountsService(db, clock).create({
      name: 'A',
      licenses: 1,
      adminUser: 'alice',
      adminApiKey: KEY,
    });
    const checked: string[] = [];
    const tokens = createTokensService({
      db,
      clock,
      secret: 'a-secret-of-at-least-thirty-two-characters',
      ttlSeconds: 3600,
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
    t.not(checked[1], real, "which is not any user's");
    t.is(await tokens.principalForApiKey('nobody', KEY), null);
    t.is(checked.length, 3, 'MQTT logins with an API key do the same');
    t.is(checked[2], checked[1]);
    const issued = await tokens.issue('alice', KEY, '192.0.2.1');
    t.truthy(issued.token);
    t.is(checked.length, 4);
    t.is(admin.userName, 'alice');
  });
}

const SECRET = 'a-secret-of-at-least-thirty-two-characters';

/** A migrated database with account A and its admin alice, and a tokens service on a ManualClock. */
async function setUp(t: ExecutionContext, backend: Backend) {
  const storage = await createStorage(backend);
  const db = openDb({ databaseUrl: storage.env.TRACKGATE_DATABASE_URL, dataDir: storage.env.TRACKGATE_DATA_DIR });
  let open = true;
  t.teardown(async () => {
    if (open) await closeDb(db);
    await storage.cleanup();
  });
  await migrate(db);
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
  const admin = await createAccountsService(db, clock).create({
    name: 'A',
    licenses: 1,
    adminUser: 'alice',
    adminApiKey: KEY,
  });
  const tokens = createTokensService({
    db,
    clock,
    secret: SECRET,
    ttlSeconds: 3600,
    failedLogins: createMemoryLimiters({ perMinute: 0, failedTokenLimit: 10 }).failedLogins,
  });
  const close = async () => {
    open = false;
    await closeDb(db);
  };
  return { db, clock, tokens, userId: admin.userId, close };
}

for (const backend of await backends()) {
  test(`tokens.verify (${backend}): only an HS256 token signed with our secret passes; every other refusal is "invalid" or "missing"`, async (t) => {
    const { tokens, userId } = await setUp(t, backend);
    const { token } = await tokens.issue('alice', KEY, '192.0.2.1');
    const ok = await tokens.verify(token);
    t.true(ok.ok);
    if (ok.ok) {
      t.is(ok.principal.userId, userId);
      t.is(ok.principal.userName, 'alice');
      t.is(ok.claims.sub, userId);
    }
    const claims = jwt.decode(token) as Record<string, unknown>;
    const [h, , sig] = token.split('.');
    const cases: Record<string, string> = {
      'alg none': jwt.sign(claims, '', { algorithm: 'none' as jwt.Algorithm }),
      'HS512 with our secret': jwt.sign(claims, SECRET, { algorithm: 'HS512' }),
      'another secret': jwt.sign(claims, 'another-secret-another-secret-another', { algorithm: 'HS256' }),
      'a payload changed under our signature': [
        h,
        Buffer.from(JSON.stringify({ ...claims, acc: 'other' })).toString('base64url'),
        sig,
      ].join('.'),
      'our signature on claims we never issue': jwt.sign({ sub: userId, exp: claims.exp }, SECRET, {
        algorithm: 'HS256',
        noTimestamp: true,
      }),
      'not a JWT': 'garbage',
    };
    for (const [what, forged] of Object.entries(cases))
      t.deepEqual(await tokens.verify(forged), { ok: false, reason: 'invalid' }, what);
    t.deepEqual(await tokens.verify(''), { ok: false, reason: 'missing' });
    t.true((await tokens.verify(token)).ok, 'the genuine token still passes after the forged ones');
  });

  test(`tokens.verify (${backend}): expiry follows the injected clock, for a token seen before and one never seen`, async (t) => {
    const { tokens, clock } = await setUp(t, backend);
    const { token, expires } = await tokens.issue('alice', KEY, '192.0.2.1');
    t.true((await tokens.verify(token)).ok);
    const claims = jwt.decode(token) as { exp: number };
    const unseen = jwt.sign({ ...claims, exp: claims.exp - 1 }, SECRET, { algorithm: 'HS256', noTimestamp: true });
    const forged = jwt.sign(claims, 'another-secret-another-secret-another', { algorithm: 'HS256', noTimestamp: true });
    clock.set(new Date(expires).getTime() - 1001);
    t.true((await tokens.verify(token)).ok, 'valid up to its last second');
    clock.set(expires);
    t.deepEqual(
      await tokens.verify(token),
      { ok: false, reason: 'expired' },
      'a token verified before expires from the second exp names',
    );
    t.deepEqual(
      await tokens.verify(unseen),
      { ok: false, reason: 'expired' },
      'a token never seen expires the same way',
    );
    t.deepEqual(
      await tokens.verify(forged),
      { ok: false, reason: 'invalid' },
      'an expired token with a bad signature is invalid, not expired',
    );
    t.is(await tokens.principalForToken(token), null, 'MQTT logins with it end too');
  });

  test(`tokens.verify (${backend}): a new key version, a disabled, deleted or not yet valid user revokes the token at once`, async (t) => {
    const { db, tokens, clock, userId } = await setUp(t, backend);
    const fresh = async () => (await tokens.issue('alice', KEY, '192.0.2.1')).token;
    const change = async (patch: Partial<UserRecord>) => {
      const user = await users.findById(db, userId);
      await users.update(db, { ...user!, ...patch });
      tokens.forget(userId);
    };
    const revoked = { ok: false, reason: 'revoked' };

    let token = await fresh();
    t.true((await tokens.verify(token)).ok);
    await change({ keyVersion: 2 });
    t.deepEqual(await tokens.verify(token), revoked, 'a new API key');
    t.is(await tokens.principalForToken(token), null);

    token = await fresh();
    t.true((await tokens.verify(token)).ok, 'a token of the new key passes');
    await change({ disabled: true });
    t.deepEqual(await tokens.verify(token), revoked, 'disabled');
    await change({ disabled: false });
    t.true((await tokens.verify(token)).ok, 'enabled again');

    await change({ fromAt: clock.now().getTime() + 86_400_000 });
    t.deepEqual(await tokens.verify(token), revoked, 'a `from` moved into the future');
    t.is(await tokens.principalForToken(token), null, 'for MQTT token logins');
    t.is(await tokens.principalForApiKey('alice', KEY), null, 'and MQTT API key logins, as for the token endpoint');
    await t.throwsAsync(tokens.issue('alice', KEY, '192.0.2.1'), { message: /Invalid userName or apiKey/ });
    await change({ fromAt: null });

    await users.remove(db, userId);
    tokens.forget(userId);
    t.deepEqual(await tokens.verify(token), revoked, 'deleted');
  });

  test(`tokens.verify (${backend}): a storage failure is thrown, not taken for a bad token, for MQTT token logins too`, async (t) => {
    const { tokens, clock, close } = await setUp(t, backend);
    const { token } = await tokens.issue('alice', KEY, '192.0.2.1');
    t.true((await tokens.verify(token)).ok);
    clock.advance(2000); // past the 1 s user cache: the next check reads the database
    await close();
    await t.throwsAsync(tokens.verify(token));
    await t.throwsAsync(
      tokens.principalForToken(token),
      undefined,
      'an MQTT token login is not refused as bad credentials',
    );
  });
}

test('tokens.verify: a secret another instance stored a moment after this one read its own is learnt, not refused, and a replaced one stays accepted until its tokens expire', async (t) => {
  const storage = await createStorage('sqlite');
  const db = openDb({ dataDir: storage.env.TRACKGATE_DATA_DIR });
  t.teardown(async () => {
    await closeDb(db);
    await storage.cleanup();
  });
  await migrate(db);
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
  await createAccountsService(db, clock).create({ name: 'A', licenses: 1, adminUser: 'alice', adminApiKey: KEY });
  const service = async (configured?: string) =>
    createTokensService({
      db,
      clock,
      ttlSeconds: 3600,
      secret: await openTokenSecrets({ db, clock, logger: silentLogger, configured, ttlSeconds: 3600 }),
      failedLogins: createMemoryLimiters({ perMinute: 0, failedTokenLimit: 10 }).failedLogins,
    });
  // A reads the generated secret; B, at once (within A's one read a second), stores its own
  const a = await service();
  const before = (await a.issue('alice', KEY, '192.0.2.1')).token;
  const b = await service(SECRET);
  const fromB = (await b.issue('alice', KEY, '192.0.2.1')).token;
  t.true((await a.verify(fromB)).ok, "A takes B's token at once");
  t.true((await b.verify(before)).ok, 'B takes the token A signed with the secret B replaced');
  // once every token of the replaced secret has expired, a token signed with it is refused
  const [replaced] = JSON.parse((await settings.get(db, 'jwt_secret_previous'))!) as {
    secret: string;
    until: number;
  }[];
  clock.set(replaced.until);
  const claims = jwt.decode(fromB) as Record<string, number>;
  const resigned = jwt.sign({ ...claims, exp: Math.floor(replaced.until / 1000) + 3600 }, replaced.secret, {
    algorithm: 'HS256',
    noTimestamp: true,
  });
  t.deepEqual(await b.verify(resigned), { ok: false, reason: 'invalid' });
  t.true(
    (
      await b.verify(
        jwt.sign({ ...claims, exp: Math.floor(replaced.until / 1000) + 3600 }, SECRET, {
          algorithm: 'HS256',
          noTimestamp: true,
        }),
      )
    ).ok,
  );
});
