import test from 'ava';
import http from 'node:http';
import jwt from 'jsonwebtoken';
import { backends } from '../helpers/backends.js';
import { ADMIN_KEY, startServer } from '../helpers/server.js';
import { ManualClock } from '../../core/clock.js';
import { failedLoginKeys } from '../../core/auth/tokens.service.js';
import { TOKEN_FAILURE_MESSAGES } from '../../api/app.js';
import { closed, connackCode, sleep, startHarness } from '../gateway/mqtt/mqtt-harness.js';
import { startOnOwnPostgres } from '../helpers/instances.js';

for (const backend of await backends()) {
  test(`api.token (${backend}): valid credentials give a token whose exp equals expires`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const r = await s.request('POST', '/api/Auth/Token', { body: { userName: 'admin', apiKey: ADMIN_KEY } });
    t.is(r.status, 200);
    t.true(r.body.success);
    t.false('error' in r.body);
    t.regex(r.body.expires, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
    const claims = jwt.decode(r.body.token) as { exp: number };
    t.is(new Date(r.body.expires).getTime(), claims.exp * 1000);
    t.true(claims.exp * 1000 - Date.now() > 3500_000, 'default lifetime is TRACKGATE_TOKEN_TTL = 3600 s');
    const me = await s.request('GET', '/api/devices', { token: r.body.token });
    t.is(me.status, 200);
  });

  test(`api.token (${backend}): invalid credentials are one indistinguishable 401 without a token`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const wrongKey = await s.request('POST', '/api/Auth/Token', { body: { userName: 'admin', apiKey: 'nope' } });
    const unknownUser = await s.request('POST', '/api/Auth/Token', { body: { userName: 'ghost', apiKey: ADMIN_KEY } });
    for (const r of [wrongKey, unknownUser]) {
      t.is(r.status, 401);
      t.false(r.body.success);
      t.false('token' in r.body);
      t.is(typeof r.body.error, 'string');
    }
    t.is(wrongKey.body.error, unknownUser.body.error);
  });

  test(`api.token (${backend}): bad requests get 400 or 415 and the path is case-insensitive`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    for (const body of [
      {},
      { userName: 'admin' },
      { userName: '', apiKey: 'x' },
      { userName: 'admin', apiKey: 42 },
      [1, 2],
    ]) {
      const r = await s.request('POST', '/api/Auth/Token', { body });
      t.is(r.status, 400, JSON.stringify(body));
      t.false(r.body.success);
      t.false('token' in r.body);
    }
    t.is(
      (
        await s.request('POST', '/api/Auth/Token', {
          raw: '{"userName":',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
      400,
    );
    t.is(
      (
        await s.request('POST', '/api/Auth/Token', {
          raw: 'userName=admin',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      ).status,
      415,
    );
    const lower = await s.request('POST', '/api/auth/token', { body: { userName: 'ADMIN', apiKey: ADMIN_KEY } });
    t.is(lower.status, 200, 'lower-case path and user name work');
  });

  test(`api.token (${backend}): expired, forged, wrongly signed and alg none tokens get 401 with WWW-Authenticate`, async (t) => {
    const clock = new ManualClock(Date.now());
    const s = await startServer(backend, { clock });
    t.teardown(() => s.stop());
    const claims = jwt.decode(s.adminToken) as Record<string, unknown>;
    const none = jwt.sign(claims, '', { algorithm: 'none' as jwt.Algorithm });
    const wrongSecret = jwt.sign(claims, 'another-secret-another-secret-another', { algorithm: 'HS256' });
    const [h, , sig] = s.adminToken.split('.');
    const forged = [h, Buffer.from(JSON.stringify({ ...claims, acc: 'other' })).toString('base64url'), sig].join('.');
    for (const token of [none, wrongSecret, forged, 'garbage']) {
      const r = await s.request('GET', '/api/devices', { token });
      t.is(r.status, 401);
      t.is(r.body.code, 'INVALID_TOKEN');
      t.regex(r.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
    t.is((await s.request('GET', '/api/devices')).status, 401, 'no token');
    clock.advance(3601_000);
    const expired = await s.request('GET', '/api/devices', { token: s.adminToken });
    t.is(expired.status, 401);
    t.regex(expired.body.error, /expired/);
  });

  test(`api.token (${backend}): a new API key invalidates the old key and every token made with it`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const created = await s.request('POST', '/api/users', {
      token: s.adminToken,
      body: { name: 'Ops', email: 'ops@example.com', country: 'ES', timeZone: 'Europe/Madrid', privileges: ['read'] },
    });
    t.is(created.status, 201);
    const oldKey = created.body.apiKey as string;
    t.regex(oldKey, /^tg_[A-Za-z0-9_-]{40,}$/);
    const oldToken = await s.token('ops@example.com', oldKey);
    t.is((await s.request('GET', '/api/devices', { token: oldToken })).status, 200);
    const reissued = await s.request('POST', `/api/users/${created.body.id}/apiKey`, { token: s.adminToken });
    t.is(reissued.status, 200);
    t.not(reissued.body.apiKey, oldKey);
    t.is((await s.request('GET', '/api/devices', { token: oldToken })).status, 401, 'old token stops at once');
    t.is(
      (await s.request('POST', '/api/Auth/Token', { body: { userName: 'ops@example.com', apiKey: oldKey } })).status,
      401,
      'old key stops',
    );
    const fresh = await s.token('ops@example.com', reissued.body.apiKey);
    t.is((await s.request('GET', '/api/devices', { token: fresh })).status, 200);
  });

  test(`api.token (${backend}): repeated failures from one address are rate limited`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_FAILED_TOKEN_LIMIT: '3' } });
    t.teardown(() => s.stop());
    for (let i = 0; i < 3; i++)
      t.is((await s.request('POST', '/api/Auth/Token', { body: { userName: 'admin', apiKey: 'wrong' } })).status, 401);
    const blocked = await s.request('POST', '/api/Auth/Token', { body: { userName: 'admin', apiKey: ADMIN_KEY } });
    t.is(blocked.status, 429);
    t.false('token' in blocked.body);
    t.true(Number(blocked.headers.get('retry-after')) > 0);
  });
}

/** A token request sent from a chosen loopback address (the whole 127.0.0.0/8 is this machine's). */
function tokenFrom(base: string, localAddress: string, body: unknown): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}/api/Auth/Token`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

for (const backend of await backends()) {
  test(`api.token (${backend}): failures in a user's name from one address do not keep it out from another`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_FAILED_TOKEN_LIMIT: '3' } });
    t.teardown(() => s.stop());
    for (let i = 0; i < 6; i++) await tokenFrom(s.base, '127.0.0.2', { userName: 'admin', apiKey: 'wrong' });
    const attacker = await tokenFrom(s.base, '127.0.0.2', { userName: 'admin', apiKey: ADMIN_KEY });
    t.is(attacker.status, 429, 'the failing address is held back');
    const other = await tokenFrom(s.base, '127.0.0.2', { userName: 'someone-else', apiKey: 'x' });
    t.is(other.status, 429, 'for every user name it tries');
    const owner = await tokenFrom(s.base, '127.0.0.3', { userName: 'admin', apiKey: ADMIN_KEY });
    t.is(owner.status, 200, 'the user logs in from its own address');
    t.true(owner.body.success);
  });

  test(`api.token (${backend}): over-long user names are refused with 400 and leave nothing of their size behind`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const long = await s.request('POST', '/api/Auth/Token', {
      body: { userName: 'x'.repeat(300_000), apiKey: 'wrong' },
    });
    t.is(long.status, 400);
    t.is(long.body.details.field, 'userName');
    t.is(
      (await s.request('POST', '/api/Auth/Token', { body: { userName: 'x'.repeat(321), apiKey: 'wrong' } })).status,
      400,
    );
    t.is(
      (await s.request('POST', '/api/Auth/Token', { body: { userName: 'x'.repeat(320), apiKey: 'wrong' } })).status,
      401,
      'an e-mail-long name is still a user name',
    );
    for (const key of failedLoginKeys('y'.repeat(1_000_000), '2001:db8::1'))
      t.true(key.length < 100, 'failure counters are keyed by a digest of the name');
    t.not(failedLoginKeys('Alice', '192.0.2.1')[1], failedLoginKeys('Bob', '192.0.2.1')[1]);
    t.is(
      failedLoginKeys('Alice', '192.0.2.1')[1],
      failedLoginKeys('alice', '192.0.2.1')[1],
      'user names match without regard to case',
    );
  });
}

for (const backend of await backends()) {
  test(`api.token (${backend}): REST and MQTT refuse a token revoked or expired in core alike, each worded from the verifier's reason`, async (t) => {
    const clock = new ManualClock(Date.now());
    const s = await startServer(backend, { clock, env: { TRACKGATE_MQTT_PORT: '0' } });
    t.teardown(() => s.stop());
    const tokens = s.running.services.tokens;
    const created = await s.request('POST', '/api/users', {
      token: s.adminToken,
      body: { name: 'Ops', email: 'ops@example.com', country: 'ES', timeZone: 'UTC', privileges: ['read'] },
    });
    t.is(created.status, 201);
    let n = 0;
    const mqttLogin = (token: string) =>
      connackCode(`mqtt://127.0.0.1:${s.running.ports.mqtt}`, {
        username: 'ops@example.com',
        password: token,
        clientId: `ops@example.com-${++n}`,
      });
    const refusedAlike = async (token: string, reason: string) => {
      t.deepEqual(await tokens.verify(token), { ok: false, reason }, `core: ${reason}`);
      const r = await s.request('GET', '/api/devices', { token });
      t.is(r.status, 401, `REST: ${reason}`);
      t.is(r.body.code, 'INVALID_TOKEN');
      t.is(r.body.error, TOKEN_FAILURE_MESSAGES[reason as keyof typeof TOKEN_FAILURE_MESSAGES]);
      t.deepEqual(r.body.details, { reason });
      t.is(r.headers.get('www-authenticate'), 'Bearer realm="trackgate", error="invalid_token"');
      t.is(await mqttLogin(token), 4, `MQTT: ${reason} is bad credentials`);
    };

    const oldToken = await s.token('ops@example.com', created.body.apiKey);
    t.is((await s.request('GET', '/api/devices', { token: oldToken })).status, 200);
    t.is(await mqttLogin(oldToken), 0);
    // Revoked through core, not through the REST API: a new API key from the users service.
    const admin = await tokens.verify(s.adminToken);
    if (!admin.ok) return t.fail('the admin token verifies');
    const { apiKey } = await s.running.services.users.newApiKey(admin.principal, created.body.id);
    await refusedAlike(oldToken, 'revoked');

    const token = await s.token('ops@example.com', apiKey);
    t.is((await s.request('GET', '/api/devices', { token })).status, 200);
    t.is(await mqttLogin(token), 0);
    clock.advance(3600_000);
    await refusedAlike(token, 'expired');
  });

  test(`api.token (${backend}): no token gets the bare Bearer challenge; a header that holds no bearer token is an invalid token`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const none = await s.request('GET', '/api/devices');
    t.is(none.status, 401);
    t.is(none.body.error, TOKEN_FAILURE_MESSAGES.missing);
    t.deepEqual(none.body.details, { reason: 'missing' });
    t.is(
      none.headers.get('www-authenticate'),
      'Bearer realm="trackgate"',
      'RFC 6750 §3.1: no error code without credentials',
    );
    for (const authorization of [
      `Basic ${Buffer.from('admin:x').toString('base64')}`,
      'Bearer',
      'Bearer   ',
      s.adminToken,
    ]) {
      const r = await s.request('GET', '/api/devices', { headers: { authorization } });
      t.is(r.status, 401, authorization);
      t.deepEqual(r.body.details, { reason: 'invalid' }, authorization);
      t.is(r.headers.get('www-authenticate'), 'Bearer realm="trackgate", error="invalid_token"');
    }
    const lower = await s.request('GET', '/api/devices', { headers: { authorization: `bearer ${s.adminToken}` } });
    t.is(lower.status, 200, 'the scheme is case-insensitive (RFC 7235 §2.1)');
  });
}

test('api.token: during a storage outage a token check answers 503 over REST and "server unavailable" over MQTT, never a bad token', async (t) => {
  const clock = new ManualClock(Date.now());
  const { s, pg } = await startOnOwnPostgres(t, { clock, env: { TRACKGATE_MQTT_PORT: '0' } });
  const url = `mqtt://127.0.0.1:${s.running.ports.mqtt}`;
  t.is(await connackCode(url, { username: 'admin', password: s.adminToken, clientId: 'admin-1' }), 0);
  await pg.kill();
  clock.advance(2000); // past the 1 s user cache: the token's user is read from the database
  const rest = await s.request('GET', '/api/devices', { token: s.adminToken });
  t.is(rest.status, 503);
  t.is(rest.body.code, 'STORAGE_UNAVAILABLE');
  t.is(
    await connackCode(url, { username: 'admin', password: s.adminToken, clientId: 'admin-2' }),
    3,
    'MQTT 3.1.1 §3.2.2.3: server unavailable',
  );
  await pg.start();
  t.is(
    (await s.request('GET', '/api/devices', { token: s.adminToken })).status,
    200,
    'the same token works once storage is back',
  );
});

test('api.token: an MQTT subscriber logged in with a token keeps its connection while its user cannot be read, and loses it once the token is revoked', async (t) => {
  const h = await startHarness(t, { recheckUsersMs: 100 });
  const r = await h.s.request('POST', '/api/users', {
    token: h.s.adminToken,
    body: { name: 'W', email: 'w@example.com', country: 'ES', timeZone: 'UTC', privileges: ['read'] },
  });
  const token = await h.s.token('w@example.com', r.body.apiKey);
  const c = await h.connect({ username: 'w@example.com', password: token, clientId: 'w@example.com-1' });
  await c.subscribeAsync('live/#');
  let gone = false;
  c.on('close', () => (gone = true));
  // A storage failure under the recheck (past the 1 s user cache): the token is not taken for revoked.
  await h.s.running.db.schema.renameTable('users', 'users_away');
  try {
    await sleep(1500);
  } finally {
    await h.s.running.db.schema.renameTable('users_away', 'users');
  }
  t.false(gone, 'still connected');
  const dropped = closed(c);
  t.is((await h.s.request('POST', `/api/users/${r.body.id}/apiKey`, { token: h.s.adminToken })).status, 200);
  await dropped;
  t.true(gone, 'a new API key ends the token login');
});
