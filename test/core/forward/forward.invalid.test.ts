/**
 * Forwards whose stored settings the API refuses: stored before its checks existed (an upgraded
 * database) or written in the database directly. The test writes them with knex, as such a
 * database holds them, beside valid forwards with real receivers (HTTP, the Mosquitto and RabbitMQ
 * of this machine with names of the test's own). An invalid forward is not delivered anywhere, says
 * why in its status and once in the log, keeps its messages and delivers them once a PATCH or PUT
 * corrects it; the other forwards, of its account and of another, deliver meanwhile.
 */
import test from 'ava';
import { backends } from '../../helpers/backends.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { capturingLogger } from '../../helpers/capture-logger.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';
import {
  check,
  locationKey,
  startAmqpReceiver,
  startMqttReceiver,
  startWebhookReceiver,
  uniqueName,
  ALLOW_RECEIVERS_ENV,
  MOSQUITTO_URL,
} from '../../helpers/forward-receivers.js';

const T0 = Date.UTC(2026, 2, 1, 8);

async function created(s: TestServer, token: string, path: string, body: Record<string, unknown>): Promise<any> {
  const r = await s.request('POST', path, { token, body });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body;
}

for (const backend of await backends()) {
  test(`forward.invalid (${backend}): forwards stored with settings the API refuses are not delivered, say why once, keep their messages, and deliver them once corrected; other forwards go on`, async (t) => {
    const logger = capturingLogger();
    const s = await startServer(backend, {
      env: { ...ALLOW_RECEIVERS_ENV, TRACKGATE_FORWARD_TIMEOUT_MS: '1000' },
      logger,
    });
    t.teardown(() => s.stop());
    const hook = await startWebhookReceiver();
    t.teardown(() => hook.close());
    const laterHook = await startWebhookReceiver();
    t.teardown(() => laterHook.close());
    const otherHook = await startWebhookReceiver();
    t.teardown(() => otherHook.close());
    const topicRoot = uniqueName('topic');
    const sub = await startMqttReceiver(`${topicRoot}/#`);
    t.teardown(() => sub.close());
    const rabbit = await startAmqpReceiver(uniqueName('exchange'), '#');
    t.teardown(() => rabbit.close());

    const token = s.adminToken;
    await created(s, token, '/api/devices', { id: 'fwd-inv', name: 'fwd-inv' });
    const accountId = (await s.request('GET', '/api/account', { token })).body.account.id as string;
    // as an upgraded database holds them, older than the forwards the API creates below
    const stored = Date.now() - 86_400_000;
    const rows = [
      // "mqtt://" names no server: the MQTT client took it as localhost:1883
      { id: 'inv-no-host', type: 'mqtt', url: 'mqtt://', topic: `${topicRoot}/{deviceId}/{event}`, exchange: null },
      // port 0: the AMQP client took it as its default port 5672
      {
        id: 'inv-amqp-port-0',
        type: 'amqp',
        url: 'amqp://guest:guest@127.0.0.1:0',
        topic: null,
        exchange: rabbit.exchange,
      },
      { id: 'inv-port-0', type: 'webhook', url: 'http://127.0.0.1:0/hook', topic: null, exchange: null },
      // not a URL at all: the webhook adapter threw while the loops were being started
      { id: 'inv-not-a-url', type: 'webhook', url: 'not a url', topic: null, exchange: null },
    ];
    for (const [i, r] of rows.entries()) {
      await s.running.db('forwards').insert({
        ...r,
        account_id: accountId,
        name: r.id,
        events: JSON.stringify(['locations']),
        group_id: null,
        enabled: true,
        secret: null,
        last_event_id: 0,
        created: stored + i,
        modified: stored + i,
      });
    }
    // what the API refuses now but does not change where or how messages go (a blank name, a secret under 16 characters) delivers as before
    const oldHook = await startWebhookReceiver();
    t.teardown(() => oldHook.close());
    await s.running.db('forwards').insert({
      id: 'old-lax',
      type: 'webhook',
      url: oldHook.url,
      topic: null,
      exchange: null,
      account_id: accountId,
      name: '  ',
      events: JSON.stringify(['locations']),
      group_id: null,
      enabled: true,
      secret: 'short',
      last_event_id: 0,
      created: stored + 10,
      modified: stored + 10,
    });
    const valid = (
      await created(s, token, '/api/forwards', { name: 'valid', type: 'webhook', url: hook.url, events: ['locations'] })
    ).forward.id as string;
    await s.running.services.accounts.create({
      name: 'Other',
      licenses: 5,
      adminUser: 'other-admin',
      adminApiKey: 'other-admin-key-0123456789',
    });
    const otherToken = await s.token('other-admin', 'other-admin-key-0123456789');
    await created(s, otherToken, '/api/devices', { id: 'fwd-other', name: 'fwd-other' });
    await created(s, otherToken, '/api/forwards', {
      name: 'theirs',
      type: 'webhook',
      url: otherHook.url,
      events: ['locations'],
    });

    const expected = new Set<string>();
    const post = async (i: number) => {
      const dateTime = new Date(T0 + i * 1000).toISOString();
      await created(s, token, '/api/devices/fwd-inv/locations', {
        location: { dateTime, latitude: 40, longitude: -3.7 },
      });
      expected.add(locationKey('fwd-inv', dateTime));
    };
    for (let i = 0; i < 3; i++) await post(i);
    const theirs = new Date(T0).toISOString();
    await created(s, otherToken, '/api/devices/fwd-other/locations', {
      location: { dateTime: theirs, latitude: 10, longitude: 10 },
    });

    const status = async (id: string) => (await s.request('GET', `/api/forwards/${id}`, { token })).body.forward.status;
    // waits that do not end the test, so that the assertions below say everything that went wrong
    await until(
      'the valid forwards delivered',
      () =>
        check(hook.messages, expected).missing.length === 0 &&
        otherHook.messages.length === 1 &&
        check(oldHook.messages, expected).missing.length === 0,
      PATIENCE_MS,
    ).catch(() => {});
    t.deepEqual(check(hook.messages, expected).missing, [], 'the valid forward of the same account delivered');
    t.deepEqual(
      check(otherHook.messages, [locationKey('fwd-other', theirs)]).missing,
      [],
      "another account's forward delivered",
    );
    await until(
      'the invalid forwards say why',
      async () => {
        for (const r of rows) if ((await status(r.id)).lastError === null) return false;
        return true;
      },
      PATIENCE_MS,
    ).catch(() => {});
    // time for retries and the supervisor's rounds (every second) to repeat what they would
    await new Promise((r) => setTimeout(r, 3000));

    const problems: Record<string, RegExp> = {
      'inv-no-host': /url: "mqtt:\/\/" names no server/,
      'inv-amqp-port-0': /url: port 0: must be 1 to 65535/,
      'inv-port-0': /url: port 0: must be 1 to 65535/,
      'inv-not-a-url': /url: "not a url" is not a URL/,
    };
    for (const r of rows) {
      const st = await status(r.id);
      t.regex(String(st.lastError), problems[r.id], r.id);
      t.regex(String(st.lastError), /PUT or PATCH/, `${r.id}: says what to do`);
      t.is(st.pending, 3, `${r.id}: its messages wait`);
      t.is(st.lastDeliveredAt, null, `${r.id}: nothing delivered`);
      t.is(logger.at('warn').filter((e) => e.forwardId === r.id).length, 1, `${r.id}: logged once`);
      t.regex(String(logger.at('warn').find((e) => e.forwardId === r.id)?.err), problems[r.id]);
    }
    t.deepEqual(sub.messages, [], 'nothing went to the MQTT broker on localhost');
    t.deepEqual(rabbit.messages, [], 'nothing went to the AMQP broker on its default port');
    t.deepEqual(logger.at('warn', /^forwards not looked at/), [], 'the supervisor started every loop');
    t.is((await status(valid)).lastError, null);
    t.deepEqual(
      check(oldHook.messages, expected).missing,
      [],
      'a forward stored with a blank name and a short secret delivered',
    );
    t.is((await status('old-lax')).lastError, null);

    // corrected through the API: its messages are delivered, in order, and its status clears
    const patched = await s.request('PATCH', '/api/forwards/inv-no-host', {
      token,
      body: [{ op: 'replace', path: '/url', value: MOSQUITTO_URL }],
    });
    t.is(patched.status, 200, JSON.stringify(patched.body));
    const shown = (await s.request('GET', '/api/forwards/inv-port-0', { token })).body.forward;
    const put = await s.request('PUT', '/api/forwards/inv-port-0', { token, body: { ...shown, url: laterHook.url } });
    t.is(put.status, 200, JSON.stringify(put.body));
    t.is(
      patched.body.forward.status.lastError,
      null,
      'the problem corrected is no longer shown, before anything is delivered',
    );
    t.is(put.body.forward.status.lastError, null);
    await post(3);
    await until(
      'the corrected forwards delivered their messages',
      () =>
        check(sub.messages, expected).missing.length === 0 &&
        check(laterHook.messages, expected).missing.length === 0 &&
        // the valid forward too: its webhook batch may still be filling when the corrected ones have delivered
        check(hook.messages, expected).missing.length === 0,
    ).catch(() => {});
    for (const [name, got] of [
      ['mqtt', sub.messages],
      ['webhook', laterHook.messages],
      ['valid', hook.messages],
    ] as const) {
      const c = check(got, expected);
      t.deepEqual(c.missing, [], `${name}: none lost`);
      t.deepEqual(c.outOfOrder, [], `${name}: in order`);
    }
    for (const id of ['inv-no-host', 'inv-port-0']) {
      await until(`${id}: its status clears`, async () => {
        const st = await status(id);
        return st.lastError === null && st.pending === 0;
      });
    }
    t.regex((await status('inv-not-a-url')).lastError, /is not a URL/, 'the one not corrected still says why');
    t.is((await status('inv-not-a-url')).pending, 4);
    t.deepEqual(rabbit.messages, []);
    t.is(logger.at('warn').filter((e) => e.forwardId === 'inv-not-a-url').length, 1, 'still logged once');
  });
}
