/**
 * Forwards on real servers: an HTTP receiver that answers 500 for a while, then hangs, then 200;
 * the Mosquitto and RabbitMQ of this machine with a topic, an exchange and a queue of the test's
 * own. Every stored location and alert must arrive, per device in order, none lost, repeats
 * counted and few; another account's data never.
 */
import test from 'ava';
import { backends } from '../../helpers/backends.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';
import {
  alertKey,
  check,
  locationKey,
  signature,
  startAmqpReceiver,
  startMqttReceiver,
  startWebhookReceiver,
  uniqueName,
  ALLOW_RECEIVERS_ENV,
  MOSQUITTO_URL,
  RABBITMQ_URL,
  type ForwardedMessage,
} from '../../helpers/forward-receivers.js';

const SECRET = 'the-webhook-secret-0123';
const T0 = Date.UTC(2026, 2, 1, 8);

async function device(s: TestServer, token: string, id: string): Promise<void> {
  const r = await s.request('POST', '/api/devices', { token, body: { id, name: id } });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
}

async function forward(s: TestServer, token: string, body: Record<string, unknown>): Promise<string> {
  const r = await s.request('POST', '/api/forwards', { token, body });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.forward.id as string;
}

/** Per device, the location times of the first arrival of each message are increasing (the test stores them in time order; a correction, stored later, is left out). */
function timesInOrder(arrived: readonly ForwardedMessage[], except: string): string[] {
  const seen = new Set<number>();
  const last = new Map<string, number>();
  const bad = new Set<string>();
  for (const m of arrived) {
    if (seen.has(m.id) || m.event !== 'location' || m.location!.dateTime === except) continue;
    seen.add(m.id);
    const t = Date.parse(m.location!.dateTime);
    if (t < (last.get(m.deviceId) ?? -Infinity)) bad.add(m.deviceId);
    last.set(m.deviceId, t);
  }
  return [...bad];
}

for (const backend of await backends()) {
  test(`forward.delivery (${backend}): webhook through 500s, a hang and recovery, MQTT and AMQP: everything stored arrives, in order, only the account's`, async (t) => {
    const logger = capturingLogger();
    const s = await startServer(backend, {
      env: { ...ALLOW_RECEIVERS_ENV, TRACKGATE_FORWARD_TIMEOUT_MS: '1000' },
      logger,
    });
    t.teardown(() => s.stop());
    const hook = await startWebhookReceiver();
    t.teardown(() => hook.close());
    const otherHook = await startWebhookReceiver();
    t.teardown(() => otherHook.close());
    const topicRoot = uniqueName('topic');
    const sub = await startMqttReceiver(`${topicRoot}/#`);
    t.teardown(() => sub.close());
    const rabbit = await startAmqpReceiver(uniqueName('exchange'), 'fwd.#');
    t.teardown(() => rabbit.close());

    const token = s.adminToken;
    const devices = ['fwd-a', 'fwd-b', 'fwd-c'];
    for (const d of devices) await device(s, token, d);
    await s.running.services.accounts.create({
      name: 'Other',
      licenses: 5,
      adminUser: 'other-admin',
      adminApiKey: 'other-admin-key-0123456789',
    });
    const otherToken = await s.token('other-admin', 'other-admin-key-0123456789');
    await device(s, otherToken, 'other-1');

    hook.mode = 'error';
    const hookId = await forward(s, token, { name: 'ERP', type: 'webhook', url: hook.url, secret: SECRET });
    await forward(s, token, {
      name: 'Broker',
      type: 'mqtt',
      url: MOSQUITTO_URL,
      topic: `${topicRoot}/{deviceId}/{event}`,
    });
    await forward(s, token, {
      name: 'Rabbit',
      type: 'amqp',
      url: RABBITMQ_URL,
      exchange: rabbit.exchange,
      topic: 'fwd.{deviceId}.{event}',
    });
    await forward(s, otherToken, { name: 'Theirs', type: 'webhook', url: otherHook.url });

    const expected = new Set<string>();
    const expectedOther = new Set<string>();
    const post = async (tk: string, id: string, i: number, lat: number) => {
      const dateTime = new Date(T0 + i * 1000).toISOString();
      const r = await s.request('POST', `/api/devices/${id}/locations`, {
        token: tk,
        body: { location: { dateTime, latitude: lat, longitude: -3.7, speed: i % 90 } },
      });
      if (r.status !== 201) throw new Error(JSON.stringify(r.body));
      (tk === token ? expected : expectedOther).add(locationKey(id, dateTime));
    };
    const raise = async (tk: string, id: string, i: number) => {
      const r = await s.request('POST', `/api/devices/${id}/alerts`, {
        token: tk,
        body: {
          alert: {
            alertName: 'SOSButton',
            dateTime: new Date(T0 + i * 1000).toISOString(),
            latitude: 40,
            longitude: -3,
          },
        },
      });
      if (r.status !== 201) throw new Error(JSON.stringify(r.body));
      (tk === token ? expected : expectedOther).add(alertKey(id, r.body.alerts[0].id));
    };

    // 500s for a while: the status says why, messages wait
    const phase = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        await Promise.all(devices.map((d, k) => post(token, d, i, 40 + k + i / 1e4)));
        if (i % 10 === 0) {
          await raise(token, devices[i % devices.length], i);
          await post(otherToken, 'other-1', i, 10);
          await raise(otherToken, 'other-1', i);
        }
      }
    };
    await phase(0, 40);
    await until('the webhook failed', () => hook.requests.length >= 2);
    const failing = (await s.request('GET', `/api/forwards/${hookId}`, { token })).body.forward;
    t.regex(failing.status.lastError ?? '', /answered 500/);
    t.true(failing.status.pending > 0);
    t.is(
      logger.at('warn', /^forward failing/).filter((e) => e.forwardId === hookId).length,
      1,
      'one log line when it starts failing',
    );
    // a correction is a new message; an identical resend is not
    const corrected = new Date(T0 + 5 * 1000).toISOString();
    await s.request('POST', `/api/devices/fwd-a/locations`, {
      token,
      body: { location: { dateTime: corrected, latitude: 41.5, longitude: -3.7, speed: 5 } },
    });
    await s.request('POST', `/api/devices/fwd-a/locations`, {
      token,
      body: { location: { dateTime: corrected, latitude: 41.5, longitude: -3.7, speed: 5 } },
    });

    // then it hangs (past the 1 s timeout)
    hook.mode = 'hang';
    await phase(40, 70);
    await until('the webhook hung', () => hook.requests.some((r) => r.answered === 'hang'));
    await until(
      'the hang counted as a failure',
      async () =>
        /no answer within 1000 ms/.test(
          (await s.request('GET', `/api/forwards/${hookId}`, { token })).body.forward.status.lastError ?? '',
        ),
      PATIENCE_MS,
      200,
    );
    t.pass('the status says why');

    // then it answers 200
    hook.mode = 'ok';
    await phase(70, 100);
    const all = (got: readonly ForwardedMessage[]) => check(got, expected).missing.length === 0;
    await until(
      'every receiver has everything',
      () =>
        all(hook.messages) &&
        all(sub.messages) &&
        all(rabbit.messages) &&
        check(otherHook.messages, expectedOther).missing.length === 0,
      // the webhook's backoff reaches its 60 s ceiling when the failing phases last a minute (a busy machine)
      PATIENCE_MS,
    ).catch(() => {});

    for (const [name, got] of [
      ['webhook', hook.messages],
      ['mqtt', sub.messages],
      ['amqp', rabbit.messages],
    ] as const) {
      const c = check(got, expected);
      t.deepEqual(c.missing, [], `${name}: none lost`);
      t.deepEqual(c.unexpected, [], `${name}: nothing of another account`);
      t.deepEqual(c.outOfOrder, [], `${name}: per device in stream order`);
      t.deepEqual(timesInOrder(got, corrected), [], `${name}: per device in time order`);
      t.true(c.repeats <= expected.size, `${name}: ${c.repeats} repeats of ${got.length} messages`);
      t.log(`${name}: ${got.length} messages, ${expected.size} expected, ${c.repeats} repeats`);
      // the correction arrived after the original, with its values
      const fixes = got.filter(
        (m, i) =>
          m.event === 'location' &&
          m.deviceId === 'fwd-a' &&
          m.location!.dateTime === corrected &&
          got.findIndex((x) => x.id === m.id) === i,
      );
      t.is(fixes.length, 2, `${name}: the original and the correction, the identical resend not`);
      t.is(fixes[1].location!.latitude, 41.5);
    }
    const theirs = check(otherHook.messages, expectedOther);
    t.deepEqual(theirs.missing, []);
    t.deepEqual(theirs.unexpected, [], "the other account's forward carries only its own");

    // the webhook's requests: signed, a User-Agent, JSON arrays
    const ok = hook.requests.filter((r) => r.answered === 'ok');
    t.true(ok.length >= 1);
    for (const r of ok) {
      t.is(r.headers['x-trackgate-signature'], signature(SECRET, r.body));
      t.regex(r.headers['user-agent'] ?? '', /^trackgate\/\d+\.\d+\.\d+$/);
      t.is(r.headers['content-type'], 'application/json');
      t.true(Array.isArray(JSON.parse(r.body)));
    }
    t.true(ok.length < hook.messages.length / 5, `batches: ${ok.length} requests for ${hook.messages.length} messages`);
    t.is(otherHook.requests[0].headers['x-trackgate-signature'], undefined, 'no secret, no signature');
    // MQTT topics and AMQP routing keys from the templates
    t.true(
      sub.keys.every((k) => new RegExp(`^${topicRoot}/(fwd-[abc])/(location|alert)$`).test(k)),
      sub.keys[0],
    );
    t.true(
      rabbit.keys.every((k) => /^fwd\.fwd-[abc]\.(location|alert)$/.test(k)),
      rabbit.keys[0],
    );
    const props = (
      rabbit as unknown as { props: { deliveryMode?: number; contentType?: string; messageId?: string }[] }
    ).props;
    t.true(
      props.every(
        (p) => p.deliveryMode === 2 && p.contentType === 'application/json' && typeof p.messageId === 'string',
      ),
      'persistent JSON messages with their ids',
    );

    await until(
      'the status says delivered',
      async () => (await s.request('GET', `/api/forwards/${hookId}`, { token })).body.forward.status.pending === 0,
    );
    const status = (await s.request('GET', `/api/forwards/${hookId}`, { token })).body.forward.status;
    t.is(status.lastError, null);
    t.truthy(status.lastDeliveredAt);
    t.is(
      logger.at('info', 'forward recovered').filter((e) => e.forwardId === hookId).length,
      1,
      'one log line when it recovers',
    );
  });
}

test('forward.delivery: webhook bodies stay within 1 MiB counted in bytes: Japanese text (3 bytes a character) reaches a receiver that refuses more', async (t) => {
  const s = await startServer('sqlite', { env: { ...ALLOW_RECEIVERS_ENV, TRACKGATE_FORWARD_TIMEOUT_MS: '5000' } });
  t.teardown(() => s.stop());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  hook.maxBodyBytes = 1024 * 1024;
  const token = s.adminToken;
  await device(s, token, 'fwd-jp');
  const id = await forward(s, token, { name: 'ERP', type: 'webhook', url: hook.url, events: ['locations'] });

  // 300 locations, each with a driver's note of 3,000 characters (9,000 bytes of UTF-8): about 2.7 MB, under 1 M characters
  const note = '運転手メモ'.repeat(600);
  const expected = new Set<string>();
  for (let k = 0; k < 3; k++) {
    const locations = Array.from({ length: 100 }, (_, i) => ({
      dateTime: new Date(T0 + (k * 100 + i) * 1000).toISOString(),
      latitude: 35.68,
      longitude: 139.76,
      attributes: { note },
    }));
    const r = await s.request('POST', '/api/devices/fwd-jp/locations', { token, body: { locations } });
    t.is(r.status, 201, JSON.stringify(r.body).slice(0, 300));
    for (const l of locations) expected.add(locationKey('fwd-jp', l.dateTime));
  }
  await until(
    'everything arrived, or a body was refused',
    () => check(hook.messages, expected).missing.length === 0 || hook.requests.some((r) => r.answered === 'too large'),
    30_000,
  );

  t.deepEqual(
    hook.requests.filter((r) => r.answered === 'too large').map((r) => r.bytes),
    [],
    'no body over 1 MiB',
  );
  t.true(hook.requests.every((r) => r.bytes <= 1024 * 1024 && Number(r.headers['content-length']) === r.bytes));
  t.deepEqual(check(hook.messages, expected).missing, []);
  t.true(hook.requests.length >= 3, `${hook.requests.length} requests for about 2.7 MB`);
  t.is((hook.messages[0].location!.attributes as { note?: string } | undefined)?.note, note, 'the text arrives whole');
  await until(
    'delivered',
    async () => (await s.request('GET', `/api/forwards/${id}`, { token })).body.forward.status.pending === 0,
  );
});

test('forward.delivery: an amqp forward stored with a routing key past 255 bytes (before the API refused it) fails saying so, others go on, and a shorter topic delivers its messages', async (t) => {
  const logger = capturingLogger();
  const s = await startServer('sqlite', {
    env: { ...ALLOW_RECEIVERS_ENV, TRACKGATE_FORWARD_TIMEOUT_MS: '2000' },
    logger,
  });
  t.teardown(() => s.stop());
  const rabbit = await startAmqpReceiver(uniqueName('exchange'), '#');
  t.teardown(() => rabbit.close());
  const token = s.adminToken;
  await device(s, token, 'fwd-long');
  await forward(s, token, {
    name: 'Short key',
    type: 'amqp',
    url: RABBITMQ_URL,
    exchange: rabbit.exchange,
    topic: 'short.{deviceId}.{event}',
    events: ['locations'],
  });
  const longId = await forward(s, token, {
    name: 'Long key',
    type: 'amqp',
    url: RABBITMQ_URL,
    exchange: rabbit.exchange,
    topic: 'long.{deviceId}.{event}',
    events: ['locations'],
    enabled: false,
  });
  // the template as a forward created before the check could have it (263 characters; 262 bytes for this device's locations), enabled from the start
  await s.running
    .db('forwards')
    .where({ id: longId })
    .update({ topic: 'long.' + 'segment.'.repeat(30) + '{deviceId}.{event}', enabled: true });

  const expected = new Set<string>();
  for (let i = 0; i < 3; i++) {
    const dateTime = new Date(T0 + i * 1000).toISOString();
    const r = await s.request('POST', '/api/devices/fwd-long/locations', {
      token,
      body: { location: { dateTime, latitude: 40, longitude: -3.7 } },
    });
    t.is(r.status, 201);
    expected.add(locationKey('fwd-long', dateTime));
  }
  const byKey = (prefix: string) => rabbit.messages.filter((_, i) => rabbit.keys[i].startsWith(prefix));
  await until('the other forward delivered', () => check(byKey('short.'), expected).missing.length === 0);
  await until(
    'the long one says why it fails',
    async () => (await s.request('GET', `/api/forwards/${longId}`, { token })).body.forward.status.lastError !== null,
  );
  const failing = (await s.request('GET', `/api/forwards/${longId}`, { token })).body.forward.status;
  // a stored template is not refused for device ids no device has: the adapter refuses a batch holding a key too long
  t.regex(
    failing.lastError,
    /routing key of device "fwd-long" is 262 bytes, more than the 255 AMQP allows: shorten the forward's topic/,
  );
  t.is(failing.pending, 3);
  t.deepEqual(byKey('long.'), [], 'nothing of the batch was published');
  t.regex(String(logger.at('warn', /^forward failing/).find((e) => e.forwardId === longId)?.err), /262 bytes/);

  const fixed = await s.request('PATCH', `/api/forwards/${longId}`, {
    token,
    body: [{ op: 'replace', path: '/topic', value: 'long.{deviceId}.{event}' }],
  });
  t.is(fixed.status, 200, JSON.stringify(fixed.body));
  await until(
    'the long one delivered once its topic is shorter',
    () => check(byKey('long.'), expected).missing.length === 0,
  );
  await until(
    'its status is clear',
    async () => (await s.request('GET', `/api/forwards/${longId}`, { token })).body.forward.status.lastError === null,
  );
});

test('forward.delivery: a batch delivered whose progress the database refuses to save (a full disk) is not sent again while only that write is retried; once it is saved, delivery goes on', async (t) => {
  const log = capturingLogger();
  const s = await startServer('sqlite', { env: ALLOW_RECEIVERS_ENV, logger: log });
  t.teardown(() => s.stop());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  const token = s.adminToken;
  await device(s, token, 'fwd-full');
  const id = await forward(s, token, { name: 'ERP', type: 'webhook', url: hook.url, events: ['locations'] });
  const post = async (i: number) => {
    const r = await s.request('POST', '/api/devices/fwd-full/locations', {
      token,
      body: { location: { dateTime: new Date(T0 + i * 1000).toISOString(), latitude: 40, longitude: -3 } },
    });
    t.is(r.status, 201);
  };
  await post(0);
  await until(
    'the first location delivered and its progress saved',
    async () =>
      hook.messages.length === 1 &&
      (await s.request('GET', `/api/forwards/${id}`, { token })).body.forward.status.pending === 0,
  );

  // the database refuses the one write that records the forward's progress, as a full disk refuses every write
  await s.running.db.raw(
    "create trigger refuse_progress before update of last_event_id on forwards begin select raise(abort, 'database or disk is full'); end",
  );
  await post(1);
  await until('the second location delivered', () => hook.messages.length === 2);
  await until('its progress could not be saved', () => log.at('warn', /forward progress not saved/).length === 1);
  await new Promise((r) => setTimeout(r, 3000));
  t.is(hook.requests.length, 2, 'the delivered batch is not sent again while its progress waits to be saved');

  await s.running.db.raw('drop trigger refuse_progress');
  await until('its progress saved', () => log.at('info', 'forward progress saved').length === 1);
  await post(2);
  await until('the third location delivered', () => hook.messages.length === 3);
  t.deepEqual(
    hook.messages.map((m) => m.location!.dateTime),
    [0, 1, 2].map((i) => new Date(T0 + i * 1000).toISOString()),
  );
  t.is(log.at('warn', /forward progress not saved/).length, 1, 'said once');
});

test('forward.delivery: a stop lets the batch being sent be answered and saves its progress: the next start does not send it again', async (t) => {
  const log = capturingLogger();
  const s = await startServer('sqlite', { env: ALLOW_RECEIVERS_ENV, logger: log });
  t.teardown(() => s.stop());
  const hook = await startWebhookReceiver();
  t.teardown(() => hook.close());
  const token = s.adminToken;
  await device(s, token, 'fwd-stop');
  const id = await forward(s, token, { name: 'ERP', type: 'webhook', url: hook.url, events: ['locations'] });
  hook.mode = 'hang';
  const r = await s.request('POST', '/api/devices/fwd-stop/locations', {
    token,
    body: { location: { dateTime: new Date(T0).toISOString(), latitude: 40, longitude: -3 } },
  });
  t.is(r.status, 201);
  await until('the batch is with the receiver, unanswered', () => hook.requests.length === 1);

  // the stop begins; the receiver answers only then (cut off before the fix, its answer never arrived)
  const stopping = s.running.forwarding.stop();
  await until(
    'the stop waits for the answer, or cut the request off',
    () =>
      log.at('info', /^forward stopping once the batch being sent is answered/).length === 1 || hook.holding() === 0,
  );
  t.is(hook.release(), 1, 'the request was still open when the stop began');
  await stopping;
  t.is(hook.messages.length, 1);
  t.is(
    (await s.request('GET', `/api/forwards/${id}`, { token })).body.forward.status.pending,
    0,
    'its progress was saved before the stop ended: nothing is sent again',
  );
});
