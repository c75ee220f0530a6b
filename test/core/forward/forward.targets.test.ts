/**
 * Where forwards may connect (TRACKGATE_FORWARD_ALLOW; docs/forwards.md). By default a forward may
 * not aim at the services beside trackgate: this machine's Redis in any spelling of its address,
 * private and loopback ranges, a name that resolves to loopback, or trackgate's own listeners.
 * No DNS server answers here, so "a name that later resolves to a refused address" uses
 * `localhost`: forwards are created while 127.0.0.1 is allowed, then trackgate restarts on the
 * same database without it, and the connect-time check must refuse them.
 */
import test from 'ava';
import os from 'node:os';
import { loadConfig, ConfigError } from '../../../config/config.js';
import { createStorage } from '../../helpers/backends.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';
import { redisUrl } from '../../helpers/redis.js';
import {
  check,
  locationKey,
  startAmqpReceiver,
  startMqttReceiver,
  startWebhookReceiver,
  uniqueName,
  ALLOW_RECEIVERS_ENV,
  MOSQUITTO_URL,
  RABBITMQ_URL,
} from '../../helpers/forward-receivers.js';

const T0 = Date.UTC(2026, 2, 1, 8);
const REDIS_PORT = Number(new URL(redisUrl).port || 6379);

async function post(s: TestServer, path: string, body: unknown): Promise<any> {
  const r = await s.request('POST', path, { token: s.adminToken, body });
  if (r.status !== 201) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const status = async (s: TestServer, id: string) =>
  (await s.request('GET', `/api/forwards/${id}`, { token: s.adminToken })).body.forward.status;

test('forward.targets: TRACKGATE_FORWARD_ALLOW is empty by default and takes host names, addresses in any spelling and CIDR ranges, normalized; anything else names the variable', (t) => {
  t.deepEqual(loadConfig({}).forwardAllow, []);
  t.deepEqual(
    loadConfig({ TRACKGATE_FORWARD_ALLOW: ' Rabbit.Internal. , 2130706433,[::1], fd00::/8 ,10.0.0.0/8,my_broker,' })
      .forwardAllow,
    ['rabbit.internal', '127.0.0.1', '::1', 'fd00::/8', '10.0.0.0/8', 'my_broker'],
  );
  for (const bad of ['10.0.0.0/33', '::1/129', 'http://x', 'a b', 'name/8', '999.1.1.1', 'g::1', 'user@host']) {
    const e = t.throws(
      () => loadConfig({ TRACKGATE_FORWARD_ALLOW: `127.0.0.1,${bad}` }),
      { instanceOf: ConfigError },
      bad,
    );
    t.is(e?.variable, 'TRACKGATE_FORWARD_ALLOW');
    t.true(e?.message.includes(`"${bad}"`), e?.message);
  }
});

test('forward.targets: by default forwards to loopback, link-local and private addresses, in every spelling, and to names that resolve there are refused with 400 naming url and TRACKGATE_FORWARD_ALLOW', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const refused = async (type: string, url: string, why: RegExp) => {
    const r = await s.request('POST', '/api/forwards', { token: s.adminToken, body: { name: 'scan', type, url } });
    t.is(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
    t.is(r.body.details?.field, 'url', url);
    t.regex(String(r.body.error), /^url: /, url);
    t.regex(String(r.body.error), /TRACKGATE_FORWARD_ALLOW/, url);
    t.regex(String(r.body.error), why, url);
  };
  const loopback = /127\.0\.0\.1 is a loopback address/;
  // the real Redis of this machine, as its address and in the spellings an IPv4 parser takes
  for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '0177.0.0.1', '127.1', '[::ffff:127.0.0.1]'])
    await refused('webhook', `http://${host}:${REDIS_PORT}/`, loopback);
  await refused('webhook', `http://[::1]:${REDIS_PORT}/`, /::1 is the loopback address/);
  await refused('webhook', `http://0.0.0.0:${REDIS_PORT}/`, /0\.0\.0\.0 is an unspecified address/);
  // resolved by the system's resolver (/etc/hosts)
  await refused(
    'webhook',
    `http://localhost:${REDIS_PORT}/`,
    /localhost resolves to 127\.0\.0\.1, which is a loopback address/,
  );
  // the service's own REST port
  await refused('webhook', `http://127.0.0.1:${s.running.ports.http}/api/devices`, /127\.0\.0\.1/);
  for (const [host, kind] of [
    ['169.254.169.254', /link-local/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.254', /private/],
    ['192.168.1.1', /private/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['[fd00::1]', /unique-local/],
    ['[fc00::1]', /unique-local/],
    ['[fe80::1]', /link-local/],
  ] as const)
    await refused('webhook', `http://${host}/`, kind);
  // every type: MQTT and AMQP URLs are not normalized by the URL parser, and are read as addresses all the same
  await refused('mqtt', 'mqtt://2130706433:1883', loopback);
  await refused('mqtt', 'mqtts://[::1]', /::1 is the loopback address/);
  await refused('mqtt', MOSQUITTO_URL.replace('127.0.0.1', 'LocalHost'), /LocalHost resolves to 127\.0\.0\.1/);
  await refused('amqp', RABBITMQ_URL, loopback);
  await refused('amqp', 'amqp://guest:guest@0x7f000001:5672', loopback);

  // PUT and PATCH are checked as creation is (a public address, which a host on the Internet would have, is taken)
  const id = (
    await post(s, '/api/forwards', { name: 'public', type: 'webhook', url: 'http://203.0.113.10/in', enabled: false })
  ).forward.id as string;
  const put = await s.request('PUT', `/api/forwards/${id}`, {
    token: s.adminToken,
    body: { name: 'public', type: 'webhook', url: `http://127.0.0.1:${REDIS_PORT}/`, enabled: false },
  });
  t.is(put.status, 400);
  t.like(put.body, { code: 'VALIDATION_FAILED', details: { field: 'url' } });
  const patch = await s.request('PATCH', `/api/forwards/${id}`, {
    token: s.adminToken,
    body: [{ op: 'replace', path: '/url', value: 'http://[::1]:5432/' }],
  });
  t.is(patch.status, 400);
  t.regex(String(patch.body.error), /^url: ::1 is the loopback address.+TRACKGATE_FORWARD_ALLOW/);
  t.is(
    (await s.request('GET', `/api/forwards/${id}`, { token: s.adminToken })).body.forward.url,
    'http://203.0.113.10/in',
    'nothing changed',
  );
  // and the OpenAPI document says so
  const doc = (await s.request('GET', '/api/openapi.json')).body;
  for (const [path, method] of [
    ['/api/forwards', 'post'],
    ['/api/forwards/{forwardId}', 'put'],
    ['/api/forwards/{forwardId}', 'patch'],
  ]) {
    t.regex(
      doc.paths[path][method].responses['400'].description,
      /`url`.+TRACKGATE_FORWARD_ALLOW/,
      `${method} ${path}`,
    );
  }
});

test("forward.targets: TRACKGATE_FORWARD_ALLOW lets forwards reach what it names; the service's own listeners stay refused on every address of this machine", async (t) => {
  // everything allowed: only the own listeners are left to refuse
  const s = await startServer('sqlite', {
    env: { TRACKGATE_FORWARD_ALLOW: '0.0.0.0/0,::/0', TRACKGATE_MQTT_PORT: '0' },
  });
  t.teardown(() => s.stop());
  const redis = await post(s, '/api/forwards', {
    name: 'redis',
    type: 'webhook',
    url: `http://127.0.0.1:${REDIS_PORT}/`,
    events: ['locations'],
  });
  t.is(redis.forward.status.lastError, null);
  const own = async (type: string, url: string) => {
    const r = await s.request('POST', '/api/forwards', { token: s.adminToken, body: { name: 'self', type, url } });
    t.is(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
    t.is(r.body.details?.field, 'url', url);
    t.regex(
      String(r.body.error),
      /this service's own listener, which forwards never reach, whatever TRACKGATE_FORWARD_ALLOW names/,
      url,
    );
  };
  const { http: httpPort, mqtt: mqttPort } = s.running.ports;
  const addresses = Object.values(os.networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((i) => (i.family === 'IPv6' ? `[${i.address}]` : i.address));
  t.true(addresses.length >= 2, 'loopback at least, in both families');
  for (const a of [...addresses, '0.0.0.0', '[::]', '2130706433', 'localhost', os.hostname()])
    await own('webhook', `http://${a}:${httpPort}/api/devices`);
  await own('mqtt', `mqtt://127.0.0.1:${mqttPort}`);
  await own('amqp', `amqp://localhost:${mqttPort}`);

  // allowed, Redis is connected to; what it answers to a POST is not shown
  await post(s, '/api/devices', { id: 'fwd-redis', name: 'fwd-redis' });
  await post(s, '/api/devices/fwd-redis/locations', {
    location: { dateTime: new Date(T0).toISOString(), latitude: 40, longitude: -3 },
  });
  await until('the POST to Redis failed', async () => (await status(s, redis.forward.id)).lastError !== null, 15_000);
  const lastError = String((await status(s, redis.forward.id)).lastError);
  t.regex(lastError, new RegExp(`^http://127\\.0\\.0\\.1:${REDIS_PORT}: `));
  t.notRegex(lastError, /ERR|unknown command|refused/i, 'nothing Redis wrote');
});

test("forward.targets: a receiver answering 500 with a body leaves only the status and its standard name in lastError; a broker's close keeps its code, not its text", async (t) => {
  const s = await startServer('sqlite', { env: { ...ALLOW_RECEIVERS_ENV, TRACKGATE_FORWARD_TIMEOUT_MS: '2000' } });
  t.teardown(() => s.stop());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  hook.mode = 'error';
  const webhook = (
    await post(s, '/api/forwards', { name: 'down', type: 'webhook', url: hook.url, events: ['locations'] })
  ).forward.id as string;
  const missing = uniqueName('no-such-exchange');
  const noExchange = (
    await post(s, '/api/forwards', {
      name: 'no exchange',
      type: 'amqp',
      url: RABBITMQ_URL,
      exchange: missing,
      events: ['locations'],
    })
  ).forward.id as string;
  const badLogin = (
    await post(s, '/api/forwards', {
      name: 'bad login',
      type: 'amqp',
      url: RABBITMQ_URL.replace(/:[^:@/]*@/, ':not-the-password@'),
      events: ['locations'],
    })
  ).forward.id as string;
  await post(s, '/api/devices', { id: 'fwd-500', name: 'fwd-500' });
  await post(s, '/api/devices/fwd-500/locations', {
    location: { dateTime: new Date(T0).toISOString(), latitude: 40, longitude: -3 },
  });
  await until(
    'every forward failed',
    async () => {
      for (const id of [webhook, noExchange, badLogin]) if ((await status(s, id)).lastError === null) return false;
      return hook.requests.length > 0;
    },
    20_000,
  );
  t.is((await status(s, webhook)).lastError, `${hook.url} answered 500 Internal Server Error`);
  t.notRegex(String((await status(s, webhook)).lastError), /maintenance/, 'not the body the receiver wrote');
  const exchange = String((await status(s, noExchange)).lastError);
  t.regex(exchange, /404 \(NOT-FOUND\)/);
  t.false(exchange.includes(missing), `the broker's text (which names the exchange) is left out: ${exchange}`);
  const login = String((await status(s, badLogin)).lastError);
  t.regex(login, /403 \(ACCESS-REFUSED\)/);
  t.notRegex(login, /Login was refused|broker logfile|not-the-password/);
});

test('forward.targets: a stored forward to a name that now resolves to a refused address fails at the connect, one to an address refused now is not delivered; their messages wait and go once allowed again', async (t) => {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  const literalHook = await startWebhookReceiver();
  t.teardown(() => literalHook.close());
  const topicRoot = uniqueName('topic');
  const sub = await startMqttReceiver(`${topicRoot}/#`);
  t.teardown(() => sub.close());
  const rabbit = await startAmqpReceiver(uniqueName('exchange'), '#');
  t.teardown(() => rabbit.close());
  const byName = (url: string) => url.replace('127.0.0.1', 'localhost');
  const env = (allow: string) => ({ TRACKGATE_FORWARD_ALLOW: allow, TRACKGATE_FORWARD_TIMEOUT_MS: '2000' });

  const running: { s?: TestServer } = {};
  t.teardown(() => running.s?.stop());
  const start = async (allow: string) =>
    (running.s = await startServer('sqlite', { storageEnv: storage.env, env: env(allow) }));
  const stop = async () => {
    await running.s?.stop();
    running.s = undefined;
  };

  // allowed: created, and they deliver
  let s = await start(ALLOW_RECEIVERS_ENV.TRACKGATE_FORWARD_ALLOW);
  await post(s, '/api/devices', { id: 'fwd-later', name: 'fwd-later' });
  const ids = {
    webhook: (
      await post(s, '/api/forwards', { name: 'hook', type: 'webhook', url: byName(hook.url), events: ['locations'] })
    ).forward.id as string,
    mqtt: (
      await post(s, '/api/forwards', {
        name: 'mqtt',
        type: 'mqtt',
        url: byName(MOSQUITTO_URL),
        topic: `${topicRoot}/{deviceId}/{event}`,
        events: ['locations'],
      })
    ).forward.id as string,
    amqp: (
      await post(s, '/api/forwards', {
        name: 'amqp',
        type: 'amqp',
        url: byName(RABBITMQ_URL),
        exchange: rabbit.exchange,
        events: ['locations'],
      })
    ).forward.id as string,
    literal: (
      await post(s, '/api/forwards', { name: 'literal', type: 'webhook', url: literalHook.url, events: ['locations'] })
    ).forward.id as string,
  };
  const expected = new Set<string>();
  const store = async (i: number) => {
    const dateTime = new Date(T0 + i * 1000).toISOString();
    await post(s, '/api/devices/fwd-later/locations', { location: { dateTime, latitude: 40, longitude: -3 } });
    expected.add(locationKey('fwd-later', dateTime));
  };
  const everywhere = () =>
    [hook.messages, sub.messages, rabbit.messages, literalHook.messages].every(
      (got) => check(got, expected).missing.length === 0,
    );
  await store(0);
  await until('delivered while allowed', everywhere, 20_000);
  // a receiver has a message before its forward marks it sent: stop only once nothing waits,
  // or the restart below counts the first message again (at least once)
  await until(
    'nothing waits while allowed',
    async () => {
      for (const id of Object.values(ids)) if ((await status(s, id)).pending !== 0) return false;
      return true;
    },
    20_000,
  );
  await stop();

  // started again without the allow list: the names resolve to loopback at the connect
  s = await start('');
  const delivered = [hook.messages.length, sub.messages.length, rabbit.messages.length, literalHook.messages.length];
  for (let i = 1; i <= 3; i++) await store(i);
  await until(
    'each forward says why it does not deliver',
    async () => {
      for (const id of Object.values(ids)) if ((await status(s, id)).lastError === null) return false;
      return true;
    },
    20_000,
  ).catch(() => {}); // the assertions below say what went wrong
  for (const type of ['webhook', 'mqtt', 'amqp'] as const) {
    const st = await status(s, ids[type]);
    t.regex(
      String(st.lastError),
      /: refused: localhost resolves to 127\.0\.0\.1, which is a loopback address: forwards reach it only when TRACKGATE_FORWARD_ALLOW names it/,
      type,
    );
    t.is(st.pending, 3, `${type}: its messages wait`);
  }
  const literal = await status(s, ids.literal);
  t.regex(
    String(literal.lastError),
    /^not delivered: .+url: 127\.0\.0\.1 is a loopback address: forwards reach it only when TRACKGATE_FORWARD_ALLOW names it/,
  );
  t.is(literal.pending, 3);
  t.deepEqual(
    [hook.messages.length, sub.messages.length, rabbit.messages.length, literalHook.messages.length],
    delivered,
    'nothing went out',
  );
  await stop();

  // allowed again: what waited is delivered
  s = await start(ALLOW_RECEIVERS_ENV.TRACKGATE_FORWARD_ALLOW);
  await until('what waited is delivered', everywhere, 30_000);
  for (const id of Object.values(ids))
    await until(
      `${id}: its status clears`,
      async () => (await status(s, id)).lastError === null && (await status(s, id)).pending === 0,
      15_000,
    );
  t.pass();
});

test('forward.targets: a host name in TRACKGATE_FORWARD_ALLOW lets forwards to that name reach what it resolves to, and only them', async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_FORWARD_ALLOW: 'LocalHost' } });
  t.teardown(() => s.stop());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  const byName = await s.request('POST', '/api/forwards', {
    token: s.adminToken,
    body: { name: 'named', type: 'webhook', url: hook.url.replace('127.0.0.1', 'localhost'), events: ['locations'] },
  });
  t.is(byName.status, 201, JSON.stringify(byName.body));
  const byAddress = await s.request('POST', '/api/forwards', {
    token: s.adminToken,
    body: { name: 'address', type: 'webhook', url: hook.url },
  });
  t.is(byAddress.status, 400);
  t.regex(String(byAddress.body.error), /^url: 127\.0\.0\.1 is a loopback address/);
  await post(s, '/api/devices', { id: 'fwd-named', name: 'fwd-named' });
  const dateTime = new Date(T0).toISOString();
  await post(s, '/api/devices/fwd-named/locations', { location: { dateTime, latitude: 40, longitude: -3 } });
  await until(
    'delivered to the name allowed',
    () => check(hook.messages, [locationKey('fwd-named', dateTime)]).missing.length === 0,
    15_000,
  );
  t.is((await status(s, byName.body.forward.id)).lastError, null);
});
