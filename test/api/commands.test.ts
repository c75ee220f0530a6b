import test from 'ava';
import { ManualClock } from '../../core/clock.js';
import { backends } from '../helpers/backends.js';
import { createDevice, startServer, type TestServer } from '../helpers/server.js';
import { startSmsReceiver } from '../helpers/receivers.js';

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

/** What a tracker's connection leaves on its record: the protocol (as the gateway's touch writes it). */
async function connectedWith(s: TestServer, id: string, protocol: string): Promise<void> {
  await s.running.db('devices').where({ id }).update({ protocol });
  s.running.services.events.deviceChanged(id);
}

for (const backend of await backends()) {
  test(`api.commands (${backend}): a device never connected queues the command; the list shows it newest first; cancel ends it`, async (t) => {
    const clock = new ManualClock(T0);
    const s = await startServer(backend, { clock });
    t.teardown(() => s.stop());
    await createDevice(s, 'd1');
    const a = await s.request('POST', '/api/devices/d1/sendCommand', {
      token: s.adminToken,
      body: { command: 'getinfo' },
    });
    t.is(a.status, 200, JSON.stringify(a.body));
    t.true(a.body.success);
    t.regex(a.body.result, /^Queued/);
    t.like(a.body.command, {
      status: 'queued',
      command: 'getinfo',
      format: 'Text',
      sms: false,
      created: '2026-03-01T10:00:00.000Z',
      expires: '2026-03-02T10:00:00.000Z',
      attempts: 0,
      sent: null,
      result: null,
    });
    t.is(typeof a.body.apiUsage, 'number');
    clock.advance(1000);
    const b = await s.request('POST', '/api/devices/d1/sendCommand', {
      token: s.adminToken,
      body: { command: '01 02-0a FF', format: 'Hex', ttl: 60 },
    });
    t.like(b.body.command, { status: 'queued', format: 'Hex', expires: '2026-03-01T10:01:01.000Z' });
    const list = await s.request('GET', '/api/devices/d1/commands', { token: s.adminToken });
    t.deepEqual(
      list.body.commands.map((c: { id: number }) => c.id),
      [b.body.command.id, a.body.command.id],
      'newest first',
    );
    const cancelled = await s.request('DELETE', `/api/devices/d1/commands/${a.body.command.id}`, {
      token: s.adminToken,
    });
    t.is(cancelled.status, 200);
    t.is(cancelled.body.command.status, 'cancelled');
    const again = await s.request('DELETE', `/api/devices/d1/commands/${a.body.command.id}`, { token: s.adminToken });
    t.is(again.status, 409);
    t.is(again.body.code, 'COMMAND_NOT_QUEUED');
    t.is(
      (await s.request('DELETE', '/api/devices/d1/commands/999999', { token: s.adminToken })).body.code,
      'COMMAND_NOT_FOUND',
    );
    t.is((await s.request('DELETE', '/api/devices/d1/commands/abc', { token: s.adminToken })).status, 404);

    // expiry: the ttl of 60 s runs out while queued
    clock.advance(60_000);
    const after = await s.request('GET', '/api/devices/d1/commands', { token: s.adminToken });
    t.deepEqual(
      after.body.commands.map((c: { status: string }) => c.status),
      ['expired', 'cancelled'],
    );
    t.is(
      (await s.request('DELETE', `/api/devices/d1/commands/${b.body.command.id}`, { token: s.adminToken })).body.code,
      'COMMAND_NOT_QUEUED',
      'an expired command cannot be cancelled',
    );
  });

  test(`api.commands (${backend}): execute or admin may send; read and write users 403; another account 404`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await createDevice(s, 'd1');
    const mk = async (email: string, privileges: string[]) => {
      const r = await s.request('POST', '/api/users', {
        token: s.adminToken,
        body: { name: email, email, country: 'ES', timeZone: 'UTC', privileges },
      });
      t.is(r.status, 201, JSON.stringify(r.body));
      t.deepEqual(r.body.privileges, privileges);
      return s.token(email, r.body.apiKey);
    };
    const reader = await mk('reader@example.com', ['read']);
    const writer = await mk('writer@example.com', ['write']);
    const executor = await mk('exec@example.com', ['execute']);
    const b = await s.running.services.accounts.create({
      name: 'B',
      licenses: 5,
      adminUser: 'b-admin',
      adminApiKey: 'b-admin-key-0123456789',
    });
    const foreign = await s.token('b-admin', b.apiKey);
    const body = { command: 'getinfo' };
    t.is((await s.request('POST', '/api/devices/d1/sendCommand', { token: reader, body })).status, 403);
    t.is((await s.request('POST', '/api/devices/d1/sendCommand', { token: writer, body })).status, 403);
    const foreignAnswer = await s.request('POST', '/api/devices/d1/sendCommand', { token: foreign, body });
    t.is(foreignAnswer.status, 404);
    t.is(foreignAnswer.body.code, 'DEVICE_NOT_FOUND');
    t.is((await s.request('GET', '/api/devices/d1/commands', { token: foreign })).status, 404);
    const sent = await s.request('POST', '/api/devices/d1/sendCommand', { token: executor, body });
    t.is(sent.status, 200, JSON.stringify(sent.body));
    t.is(
      (await s.request('DELETE', `/api/devices/d1/commands/${sent.body.command.id}`, { token: reader })).status,
      403,
    );
    t.is(
      (await s.request('DELETE', `/api/devices/d1/commands/${sent.body.command.id}`, { token: foreign })).status,
      404,
    );
    t.is(
      (await s.request('GET', '/api/devices/d1/commands', { token: reader })).body.commands.length,
      1,
      'a read user sees the commands',
    );
    t.is((await s.request('GET', '/api/devices/d1', { token: executor })).status, 200, 'execute reads too');
  });

  test(`api.commands (${backend}): bad input is a 400 naming the problem; OsmAnd and an expired device are 409; a deleted device's commands go with it`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await createDevice(s, 'd1');
    await createDevice(s, '356307042441013');
    await createDevice(s, 'phone');
    await connectedWith(s, '356307042441013', 'gps103');
    await connectedWith(s, 'phone', 'osmand');
    const send = (id: string, body: unknown) =>
      s.request('POST', `/api/devices/${id}/sendCommand`, { token: s.adminToken, body });
    const cases: [string, unknown, string][] = [
      ['d1', { command: '0g', format: 'Hex' }, 'Hex'],
      ['d1', { command: '012', format: 'Hex' }, 'Hex'],
      ['d1', { command: 'a$b', format: 'Base64' }, 'Base64'],
      ['d1', { command: '' }, 'command'],
      ['d1', { command: 'x', format: 'Binary' }, 'format'],
      ['d1', { command: 'x', ttl: 2_592_001 }, 'ttl'],
      ['d1', { command: 'x', ttl: 0 }, 'ttl'],
      ['356307042441013', { command: 'a;b' }, 'DELIMITER'],
    ];
    for (const [id, body, mention] of cases) {
      const r = await send(id, body);
      t.is(r.status, 400, JSON.stringify(body));
      t.true(r.body.error.includes(mention), `${JSON.stringify(body)}: ${r.body.error}`);
    }
    const delimiter = await send('356307042441013', { command: 'a;b' });
    t.is(delimiter.body.details.reason, 'DELIMITER');
    const osmand = await send('phone', { command: 'getinfo' });
    t.is(osmand.status, 409);
    t.is(osmand.body.code, 'COMMAND_UNSUPPORTED');
    t.is(
      (await send('phone', { command: 'AA', format: 'Hex' })).body.code,
      'COMMAND_UNSUPPORTED',
      'no bytes at all reach an HTTP device',
    );
    t.is(
      (await s.request('GET', '/api/devices/phone/commands', { token: s.adminToken })).body.commands.length,
      0,
      'nothing refused is stored',
    );
    t.is((await send('d1', { command: 'AQID', format: 'Base64' })).status, 200);
    await createDevice(s, 'old', { expires: '2020-01-01T00:00:00Z' });
    t.is(
      (await send('old', { command: 'getinfo' })).body.code,
      'DEVICE_EXPIRED',
      'an expired device never connects: nothing would be sent',
    );
    // a deleted device takes its commands with it: a new device of the same id starts without any
    t.is((await s.request('DELETE', '/api/devices/d1', { token: s.adminToken })).status, 200);
    await createDevice(s, 'd1');
    t.deepEqual((await s.request('GET', '/api/devices/d1/commands', { token: s.adminToken })).body.commands, []);
    const doc = (await s.request('GET', '/api/openapi.json')).body;
    t.truthy(doc.paths['/api/devices/{deviceId}/sendCommand']?.post, 'sendCommand is in the OpenAPI document');
    t.truthy(doc.paths['/api/devices/{deviceId}/commands']?.get);
    t.truthy(doc.paths['/api/devices/{deviceId}/commands/{commandId}']?.delete);
  });
}

test('api.commands: sms needs TRACKGATE_SMS_URL and the device min (409 saying which); with both, the SMS gateway gets the text and the command is sent', async (t) => {
  const without = await startServer('sqlite');
  t.teardown(() => without.stop());
  await createDevice(without, 'd1', { min: '+34600111222' });
  const r1 = await without.request('POST', '/api/devices/d1/sendCommand', {
    token: without.adminToken,
    body: { command: 'getinfo', sms: true },
  });
  t.is(r1.status, 409);
  t.is(r1.body.code, 'SMS_UNAVAILABLE');
  t.regex(r1.body.error, /TRACKGATE_SMS_URL/);

  const sms = await startSmsReceiver();
  t.teardown(() => sms.close());
  const s = await startServer('sqlite', { env: { TRACKGATE_SMS_URL: sms.url } });
  t.teardown(() => s.stop());
  await createDevice(s, 'd1', { min: '+34600111222' });
  await createDevice(s, 'd2');
  const noMin = await s.request('POST', '/api/devices/d2/sendCommand', {
    token: s.adminToken,
    body: { command: 'getinfo', sms: true },
  });
  t.is(noMin.status, 409);
  t.regex(noMin.body.error, /min/);
  const ok = await s.request('POST', '/api/devices/d1/sendCommand', {
    token: s.adminToken,
    body: { command: 'getinfo', sms: true },
  });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.like(ok.body.command, { status: 'sent', sms: true, attempts: 1 });
  t.is(sms.requests.length, 1);
  t.like(sms.requests[0].body as object, { to: '+34600111222', text: 'getinfo', deviceId: 'd1' });
});

test('api.commands: an SMS gateway that refuses the command is 502 SMS_FAILED and the command has failed', async (t) => {
  const sms = await startSmsReceiver({ status: 500, body: 'no credit' });
  t.teardown(() => sms.close());
  const s = await startServer('sqlite', { env: { TRACKGATE_SMS_URL: sms.url } });
  t.teardown(() => s.stop());
  await createDevice(s, 'd1', { min: '+34600111222' });
  const r = await s.request('POST', '/api/devices/d1/sendCommand', {
    token: s.adminToken,
    body: { command: 'getinfo', sms: true },
  });
  t.is(r.status, 502);
  t.is(r.body.code, 'SMS_FAILED');
  t.regex(r.body.error, /500/);
  const [c] = (await s.request('GET', '/api/devices/d1/commands', { token: s.adminToken })).body.commands;
  t.is(c.status, 'failed');
  t.regex(c.result, /no credit/);
});
