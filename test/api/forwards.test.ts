import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ALLOW_RECEIVERS_ENV } from '../helpers/forward-receivers.js';

async function userToken(s: TestServer, email: string, extra: Record<string, unknown>): Promise<string> {
  const r = await s.request('POST', '/api/users', {
    token: s.adminToken,
    body: { name: email, email, country: 'ES', timeZone: 'UTC', ...extra },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return s.token(email, r.body.apiKey);
}

const hook = {
  name: 'ERP',
  type: 'webhook',
  url: 'https://erp:s3cret-pass@erp.example.com/in?x=1',
  secret: 'a-secret-of-16-chars+',
};

for (const backend of await backends()) {
  test(`api.forwards (${backend}): create, list, get, PUT, JSON Patch and DELETE, credentials write-only`, async (t) => {
    // the brokers named below are on loopback, which forwards reach only when allowed
    const s = await startServer(backend, { env: ALLOW_RECEIVERS_ENV });
    t.teardown(() => s.stop());
    const token = s.adminToken;

    const created = await s.request('POST', '/api/forwards', { token, body: hook });
    t.is(created.status, 201, JSON.stringify(created.body));
    const id = created.body.forward.id as string;
    t.deepEqual(created.body.forward, {
      id,
      name: 'ERP',
      type: 'webhook',
      url: 'https://erp:***@erp.example.com/in?x=1',
      events: ['locations', 'alerts'],
      enabled: true,
      secret: '***',
      status: { pending: 0, lastDeliveredAt: null, lastError: null, dropped: 0 },
    });
    const stored = await s.running.db('forwards').where({ id }).first();
    t.is(stored.url, 'https://erp:s3cret-pass@erp.example.com/in?x=1', 'the password is stored');
    t.is(stored.secret, hook.secret);

    const mq = await s.request('POST', '/api/forwards', {
      token,
      body: { name: 'Broker', type: 'mqtt', url: 'mqtt://127.0.0.1:1883', events: ['alerts'], enabled: false },
    });
    t.is(mq.status, 201, JSON.stringify(mq.body));
    t.like(mq.body.forward, {
      type: 'mqtt',
      topic: 'trackgate/{deviceId}/{event}',
      events: ['alerts'],
      enabled: false,
    });
    const rabbit = await s.request('POST', '/api/forwards', {
      token,
      body: { name: 'Rabbit', type: 'amqp', url: 'amqp://guest:guest@127.0.0.1:5672' },
    });
    t.like(rabbit.body.forward, {
      url: 'amqp://guest:***@127.0.0.1:5672',
      topic: 'trackgate.{deviceId}.{event}',
      exchange: 'amq.topic',
    });

    t.deepEqual(
      (await s.request('GET', '/api/forwards', { token })).body.forwards.map((f: { id: string }) => f.id),
      [id, mq.body.forward.id, rabbit.body.forward.id],
    );
    t.deepEqual((await s.request('GET', `/api/forwards/${id}`, { token })).body.forward, created.body.forward);

    // PUT of what GET showed keeps the password and the secret
    const shown = created.body.forward;
    const put = await s.request('PUT', `/api/forwards/${id}`, { token, body: { ...shown, name: 'ERP 2' } });
    t.is(put.status, 200, JSON.stringify(put.body));
    t.like(put.body.forward, { name: 'ERP 2', url: 'https://erp:***@erp.example.com/in?x=1', secret: '***' });
    const after = await s.running.db('forwards').where({ id }).first();
    t.is(after.url, 'https://erp:s3cret-pass@erp.example.com/in?x=1');
    t.is(after.secret, hook.secret);

    // "***" does not carry the password to another server
    const elsewhere = await s.request('PATCH', `/api/forwards/${id}`, {
      token,
      body: [{ op: 'replace', path: '/url', value: 'https://erp:***@evil.example.com/in' }],
    });
    t.is(elsewhere.status, 400);
    t.is(elsewhere.body.details.field, 'url');
    const patched = await s.request('PATCH', `/api/forwards/${id}`, {
      token,
      body: [
        { op: 'replace', path: '/events', value: ['alerts'] },
        { op: 'remove', path: '/secret' },
      ],
    });
    t.is(patched.status, 200, JSON.stringify(patched.body));
    t.deepEqual(patched.body.forward.events, ['alerts']);
    t.is(patched.body.forward.secret, undefined, 'removed');
    t.is((await s.running.db('forwards').where({ id }).first()).url, 'https://erp:s3cret-pass@erp.example.com/in?x=1');
    t.is(
      (
        await s.request('PATCH', `/api/forwards/${id}`, {
          token,
          body: [{ op: 'replace', path: '/status/pending', value: 3 }],
        })
      ).status,
      400,
      'status is read-only',
    );
    t.is(
      (await s.request('PATCH', `/api/forwards/${id}`, { token, body: [{ op: 'test', path: '/name', value: 'nope' }] }))
        .status,
      409,
    );

    t.is((await s.request('DELETE', `/api/forwards/${id}`, { token })).status, 200);
    const gone = await s.request('GET', `/api/forwards/${id}`, { token });
    t.is(gone.status, 404);
    t.is(gone.body.code, 'FORWARD_NOT_FOUND');
  });

  test(`api.forwards (${backend}): every field is checked, naming it`, async (t) => {
    const s = await startServer(backend, { env: ALLOW_RECEIVERS_ENV });
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const refused = async (body: unknown, field: string) => {
      const r = await s.request('POST', '/api/forwards', { token, body });
      t.is(r.status, 400, JSON.stringify(body));
      t.is(r.body.details?.field, field, JSON.stringify(r.body));
    };
    await refused({ ...hook, url: 'mqtt://broker:1883' }, 'url');
    await refused({ ...hook, url: 'not a url' }, 'url');
    await refused({ name: 'x', type: 'mqtt', url: 'https://x.example.com' }, 'url');
    // no server (the MQTT and AMQP clients went to localhost), or port 0
    const badServers: [string, string][] = [
      ['mqtt', 'mqtt://'],
      ['mqtt', 'mqtts:///trackgate'],
      ['mqtt', 'mqtt://:1883'],
      ['amqp', 'amqp:'],
      ['amqp', 'amqp://'],
      ['amqp', 'amqps://guest:guest@/vhost'],
      ['amqp', 'amqp://127.0.0.1:0'],
      ['mqtt', 'mqtt://127.0.0.1:0'],
      ['webhook', 'http://127.0.0.1:0/in'],
      ['webhook', 'http://127.0.0.1:99999/in'],
    ];
    for (const [type, url] of badServers) await refused({ name: 'x', type, url }, 'url');
    const noHost = await s.request('POST', '/api/forwards', {
      token,
      body: { name: 'x', type: 'mqtt', url: 'mqtt://' },
    });
    t.regex(noHost.body.error, /names no server/);
    t.regex(
      (
        await s.request('POST', '/api/forwards', {
          token,
          body: { name: 'x', type: 'amqp', url: 'amqp://127.0.0.1:0' },
        })
      ).body.error,
      /port 0: must be 1 to 65535/,
    );
    await refused({ name: 'x', type: 'mqtt', url: 'mqtt://b', topic: 'a/+/b' }, 'topic');
    await refused({ ...hook, topic: 'a/b' }, 'topic');
    await refused({ ...hook, secret: 'short' }, 'secret');
    await refused({ ...hook, secret: '***' }, 'secret');
    await refused({ name: 'x', type: 'mqtt', url: 'mqtt://b', secret: 'a-secret-of-16-chars+' }, 'secret');
    await refused({ ...hook, exchange: 'x' }, 'exchange');
    // an AMQP routing key holds 255 bytes: the template, with a device id of 64 characters and the event "location", must fit
    const rabbit = { name: 'x', type: 'amqp', url: 'amqp://guest:guest@127.0.0.1:5672', enabled: false };
    const fits = `${'k'.repeat(181)}.{deviceId}.{event}`;
    const atLimit = await s.request('POST', '/api/forwards', { token, body: { ...rabbit, topic: fits } });
    t.is(atLimit.status, 201, `181 + 1 + 64 + 1 + 8 = 255 bytes: ${JSON.stringify(atLimit.body)}`);
    await refused({ ...rabbit, topic: `k${fits}` }, 'topic');
    await refused({ ...rabbit, topic: 'hfwd.' + 'segment.'.repeat(33) + '{deviceId}.{event}' }, 'topic');
    await refused({ ...rabbit, topic: 'ä'.repeat(128) }, 'topic');
    t.regex(
      (await s.request('POST', '/api/forwards', { token, body: { ...rabbit, topic: 'ä'.repeat(128) } })).body.error,
      /at most 255 bytes.+256 bytes/,
    );
    const patched = await s.request('PATCH', `/api/forwards/${atLimit.body.forward.id}`, {
      token,
      body: [{ op: 'replace', path: '/topic', value: `k${fits}` }],
    });
    t.is(patched.status, 400, 'a change is checked as a new forward is');
    t.is(patched.body.details?.field, 'topic');
    t.is(
      (await s.request('POST', '/api/forwards', { token, body: { ...rabbit, exchange: 'ä'.repeat(127) } })).status,
      201,
      '254 bytes',
    );
    await refused({ ...rabbit, exchange: 'ä'.repeat(128) }, 'exchange');
    t.is(
      (
        await s.request('POST', '/api/forwards', {
          token,
          body: { name: 'x', type: 'mqtt', url: 'mqtt://b', topic: `${'t'.repeat(480)}/{deviceId}`, enabled: false },
        })
      ).status,
      201,
      'an MQTT topic has no such limit',
    );
    await refused({ ...hook, events: [] }, 'events');
    await refused({ ...hook, events: ['positions'] }, 'events.0');
    await refused({ ...hook, group: 'no-such-group' }, 'group');
    await refused({ ...hook, type: 'kafka' }, 'type');

    const other = await s.running.services.accounts.create({
      name: 'Other',
      licenses: 5,
      adminUser: 'other-admin',
      adminApiKey: 'other-admin-key-0123456789',
    });
    const otherToken = await s.token('other-admin', 'other-admin-key-0123456789');
    const theirGroup = await s.request('POST', '/api/groups', { token: otherToken, body: { name: 'theirs' } });
    t.is(theirGroup.status, 201, JSON.stringify(theirGroup.body));
    await refused({ ...hook, group: theirGroup.body.id }, 'group');
    const mine = await s.request('POST', '/api/forwards', { token, body: hook });
    t.is(
      (await s.request('GET', `/api/forwards/${mine.body.forward.id}`, { token: otherToken })).body.code,
      'FORWARD_NOT_FOUND',
      "another account's forward is not found",
    );
    t.deepEqual((await s.request('GET', '/api/forwards', { token: otherToken })).body.forwards, []);
    t.truthy(other.accountId);
  });

  test(`api.forwards (${backend}): admin of the whole account only; a group a forward uses cannot be deleted`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const writer = await userToken(s, 'w@example.com', { privileges: ['write'] });
    t.is((await s.request('GET', '/api/forwards', { token: writer })).status, 403);
    t.is((await s.request('POST', '/api/forwards', { token: writer, body: hook })).status, 403);
    const group = await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'fleet' } });
    const groupAdmin = await userToken(s, 'g@example.com', { privileges: ['admin'], group: group.body.id });
    t.is((await s.request('GET', '/api/forwards', { token: groupAdmin })).status, 403);

    const f = await s.request('POST', '/api/forwards', {
      token: s.adminToken,
      body: { ...hook, group: group.body.id },
    });
    t.is(f.status, 201, JSON.stringify(f.body));
    t.is(f.body.forward.group, group.body.id);
    const del = await s.request('DELETE', `/api/groups/${group.body.id}`, { token: s.adminToken });
    t.is(del.status, 409, JSON.stringify(del.body));
    t.is(del.body.code, 'GROUP_IN_USE');
    t.deepEqual(del.body.details.forwards, ['ERP']);
    t.is(del.body.details.users.length, 1, 'every use is named at once: the group admin restricted to it, too');
  });
}

test('api.forwards: the OpenAPI document describes the forwards', async (t) => {
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  const doc = (await s.request('GET', '/api/openapi.json')).body;
  t.truthy(doc.paths['/api/forwards'].post);
  t.truthy(doc.paths['/api/forwards/{forwardId}'].patch);
  t.truthy(doc.components.schemas.Forward.properties.status);
  t.regex(doc.paths['/api/forwards'].post.description, /X-Trackgate-Signature/);
  // as the delivery loop batches: it reads 2,000 at a time, a webhook POSTs at most 500 of them at a time
  t.regex(
    doc.paths['/api/forwards'].post.description,
    /arrays of up to 500 messages.+batch goes once 2,000 messages wait .+ or 200 ms after the first/,
  );
  t.notRegex(doc.paths['/api/forwards'].post.description, /once 500 are waiting/);
});
