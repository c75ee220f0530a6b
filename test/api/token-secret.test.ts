import test from 'ava';
import { backends, createStorage } from '../helpers/backends.js';
import { ADMIN_KEY, startServer, type TestServer } from '../helpers/server.js';
import { capturingLogger } from '../helpers/capture-logger.js';

const SECRET = 'an-operator-chosen-secret-of-32-characters-or-more';

/** Each instance answers the other's tokens (an authenticated read), and tokens it issues now. */
async function acceptEachOther(
  t: { is(a: unknown, b: unknown, m?: string): void },
  a: TestServer,
  b: TestServer,
  label: string,
): Promise<void> {
  const devices = (s: TestServer, token: string) => s.request('GET', '/api/devices', { token }).then((r) => r.status);
  t.is(await devices(b, a.adminToken), 200, `${label}: B takes A's token`);
  t.is(await devices(a, b.adminToken), 200, `${label}: A takes B's token`);
  t.is(await devices(b, await a.token('admin', ADMIN_KEY)), 200, `${label}: B takes a token A issues now`);
  t.is(await devices(a, await b.token('admin', ADMIN_KEY)), 200, `${label}: A takes a token B issues now`);
}

if ((await backends()).includes('postgres')) {
  test("token secret (postgres): an instance started with TRACKGATE_JWT_SECRET after one without: they take each other's tokens, earlier ones included, and the change is logged", async (t) => {
    const a = await startServer('postgres');
    t.teardown(() => a.stop());
    const log = capturingLogger();
    const b = await startServer('postgres', {
      storageEnv: a.storageEnv,
      env: { TRACKGATE_JWT_SECRET: SECRET },
      logger: log,
    });
    t.teardown(() => b.running.stop());
    await acceptEachOther(t, a, b, 'B with the variable');
    const said = log.at('warn', /^TRACKGATE_JWT_SECRET differs from the token secret stored/);
    t.is(said.length, 1);
    t.false(JSON.stringify(said[0]).includes(SECRET), 'never the secret itself');
  });

  test("token secret (postgres): an instance started without TRACKGATE_JWT_SECRET after one with it: they take each other's tokens", async (t) => {
    const a = await startServer('postgres', { env: { TRACKGATE_JWT_SECRET: SECRET } });
    t.teardown(() => a.stop());
    const b = await startServer('postgres', { storageEnv: a.storageEnv });
    t.teardown(() => b.running.stop());
    await acceptEachOther(t, a, b, 'A with the variable');
  });
}

test('token secret (sqlite): tokens stay valid across restarts that set TRACKGATE_JWT_SECRET and then leave it unset', async (t) => {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const running: TestServer[] = [];
  t.teardown(async () => {
    for (const s of running) await s.running.stop().catch(() => {});
  });
  const start = async (env: Record<string, string> = {}) => {
    const s = await startServer('sqlite', { storageEnv: storage.env, env });
    running.push(s);
    return s;
  };
  const stop = async (s: TestServer) => {
    running.splice(running.indexOf(s), 1);
    await s.running.stop();
  };
  const first = await start();
  const before = first.adminToken;
  await stop(first);

  const withVariable = await start({ TRACKGATE_JWT_SECRET: SECRET });
  t.is(
    (await withVariable.request('GET', '/api/devices', { token: before })).status,
    200,
    'a token of the generated secret, until it expires',
  );
  const during = withVariable.adminToken;
  await stop(withVariable);

  const without = await start();
  t.is(
    (await without.request('GET', '/api/devices', { token: during })).status,
    200,
    "the variable's secret stays the stored one",
  );
  t.is((await without.request('GET', '/api/devices', { token: before })).status, 200);
});
