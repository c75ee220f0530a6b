import test from 'ava';
import { backends } from '../helpers/backends.js';
import { ADMIN_KEY, startServer } from '../helpers/server.js';
import { ManualClock } from '../../core/clock.js';

for (const backend of await backends()) {
  test(`api.devices (${backend}): decoder settings (protocolOptions) are kept as text, replaced by PUT, patched, and checked`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const path = '/api/devices/352848025471234';
    const created = await s.request('POST', '/api/devices', {
      token,
      body: {
        id: '352848025471234',
        name: 'AX7',
        protocolOptions: { custom: true, form: '%AT%BV%MV', flexDataSize: 73 },
      },
    });
    t.is(created.status, 201);
    t.deepEqual(created.body.device.protocolOptions, { custom: 'true', form: '%AT%BV%MV', flexDataSize: '73' });
    t.deepEqual(
      (await s.request('GET', path, { token })).body.device.protocolOptions,
      created.body.device.protocolOptions,
    );
    const patched = await s.request('PATCH', path, {
      token,
      body: [
        { op: 'replace', path: '/protocolOptions/custom', value: 'false' },
        { op: 'remove', path: '/protocolOptions/flexDataSize' },
      ],
    });
    t.is(patched.status, 200, JSON.stringify(patched.body));
    t.deepEqual(patched.body.device.protocolOptions, { custom: 'false', form: '%AT%BV%MV' });
    const put = await s.request('PUT', path, { token, body: { name: 'AX7' } });
    t.deepEqual(put.body.device.protocolOptions, {}, 'PUT without them: none');
    for (const bad of [
      { 'no-dash': '1' },
      { Upper: '1' },
      { form: 'x'.repeat(1001) },
      { nested: { a: 1 } },
      ['custom'],
    ])
      t.is(
        (await s.request('PUT', path, { token, body: { name: 'AX7', protocolOptions: bad } })).status,
        400,
        JSON.stringify(bad).slice(0, 40),
      );
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`o${i}`, '1']));
    t.is(
      (await s.request('PUT', path, { token, body: { name: 'AX7', protocolOptions: many } })).status,
      400,
      '33 settings',
    );
    t.deepEqual(
      (await s.request('GET', path, { token })).body.device.protocolOptions,
      {},
      'a refused write changes nothing',
    );
  });

  test(`api.devices (${backend}): create, get, list, PUT, JSON Patch and delete`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const created = await s.request('POST', '/api/devices', {
      token,
      body: {
        id: '356307042441013',
        name: 'Truck 1',
        tags: { plate: 'AB-123' },
        alertEmails: ['ops@example.com'],
        alertPhones: ['+34600111222'],
        mqttPassword: 'secret-pass',
      },
    });
    t.is(created.status, 201);
    const d = created.body.device;
    t.like(d, {
      id: '356307042441013',
      name: 'Truck 1',
      expires: null,
      expired: false,
      dailyEmailLimit: 10,
      dailySmsLimit: 10,
      emailsSentToday: 0,
      smsSentToday: 0,
      groups: [],
    });
    t.false('mqttPassword' in d, 'write-only');
    t.is(typeof created.body.apiUsage, 'number');
    t.is(typeof created.body.apiDailyUsage, 'number');
    t.is(
      (await s.request('POST', '/api/devices', { token, body: { id: '356307042441013', name: 'Again' } })).body.code,
      'DEVICE_EXISTS',
    );

    const got = await s.request('GET', '/api/devices/356307042441013', { token });
    t.deepEqual(got.body.device, d);
    const list = await s.request('GET', '/api/devices', { token });
    t.deepEqual(
      list.body.devices.map((x: { id: string }) => x.id),
      ['356307042441013'],
    );

    const put = await s.request('PUT', '/api/devices/356307042441013', {
      token,
      body: { name: 'Truck One', dailyEmailLimit: 3, dailySmsLimit: 0 },
    });
    t.is(put.status, 200);
    t.like(put.body.device, { name: 'Truck One', dailyEmailLimit: 3, dailySmsLimit: 0, tags: {} });

    const patch = await s.request('PATCH', '/api/devices/356307042441013', {
      token,
      body: [
        { op: 'replace', path: '/name', value: 'Patched' },
        { op: 'add', path: '/tags/color', value: 'red' },
      ],
    });
    t.is(patch.status, 200);
    t.like(patch.body.device, { name: 'Patched', tags: { color: 'red' }, dailyEmailLimit: 3 });
    const failedTest = await s.request('PATCH', '/api/devices/356307042441013', {
      token,
      body: [
        { op: 'test', path: '/name', value: 'Other' },
        { op: 'replace', path: '/name', value: 'X' },
      ],
    });
    t.is(failedTest.status, 409);
    const readOnly = await s.request('PATCH', '/api/devices/356307042441013', {
      token,
      body: [{ op: 'replace', path: '/emailsSentToday', value: 0 }],
    });
    t.is(readOnly.status, 400);
    t.is(
      (await s.request('GET', '/api/devices/356307042441013', { token })).body.device.name,
      'Patched',
      'failed patches changed nothing',
    );

    t.is((await s.request('DELETE', '/api/devices/356307042441013', { token })).status, 200);
    t.is((await s.request('GET', '/api/devices/356307042441013', { token })).status, 404);
  });

  test(`api.devices (${backend}): licences gate creation and reactivation, expiry frees one without anything running`, async (t) => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const s = await startServer(backend, { clock, env: { TRACKGATE_LICENSES: '2' } });
    t.teardown(() => s.stop());
    let token = s.adminToken;
    t.is((await s.request('POST', '/api/devices', { token, body: { id: 'A', name: 'A' } })).status, 201);
    t.is(
      (
        await s.request('POST', '/api/devices', {
          token,
          body: { id: 'B', name: 'B', expires: '2026-03-02T00:00:00Z' },
        })
      ).status,
      201,
    );
    const third = await s.request('POST', '/api/devices', { token, body: { id: 'C', name: 'C' } });
    t.is(third.status, 409);
    t.is(third.body.code, 'NO_LICENSE_AVAILABLE');
    t.is((await s.request('GET', '/api/devices/C', { token })).status, 404, 'nothing was created');
    t.is(
      (
        await s.request('POST', '/api/devices', {
          token,
          body: { id: 'X', name: 'born expired', expires: '2026-01-01T00:00:00Z' },
        })
      ).status,
      201,
      'an expired device needs no licence',
    );
    t.like((await s.request('GET', '/api/account', { token })).body.account.licenses, { total: 2, used: 2, free: 0 });

    clock.set('2026-03-02T00:00:01Z');
    token = await s.token('admin', ADMIN_KEY);
    t.like((await s.request('GET', '/api/account', { token })).body.account.licenses, { total: 2, used: 1, free: 1 });
    t.true((await s.request('GET', '/api/devices/B', { token })).body.device.expired);
    t.deepEqual(
      (await s.request('GET', '/api/devices', { token })).body.devices.map((d: { id: string }) => d.id),
      ['A'],
    );
    t.deepEqual(
      (await s.request('GET', '/api/devices?status=expired', { token })).body.devices.map((d: { id: string }) => d.id),
      ['B', 'X'],
    );
    t.is((await s.request('GET', '/api/devices?status=all', { token })).body.devices.length, 3);

    t.is(
      (await s.request('POST', '/api/devices', { token, body: { id: 'C', name: 'C' } })).status,
      201,
      'the freed licence is used',
    );
    const reactivate = await s.request('PATCH', '/api/devices/B', {
      token,
      body: [{ op: 'replace', path: '/expires', value: null }],
    });
    t.is(reactivate.status, 409);
    t.is(reactivate.body.code, 'NO_LICENSE_AVAILABLE');
    t.true((await s.request('GET', '/api/devices/B', { token })).body.device.expired, 'nothing changed');
    const limits = await s.request('PATCH', '/api/devices/B', {
      token,
      body: [{ op: 'replace', path: '/dailySmsLimit', value: 99 }],
    });
    t.is(limits.status, 200, 'limits of an expired device may change at any time');

    t.is((await s.request('DELETE', '/api/devices/C', { token })).status, 200);
    const again = await s.request('PUT', '/api/devices/B', {
      token,
      body: { name: 'B', expires: '2027-01-01T00:00:00Z' },
    });
    t.is(again.status, 200, 'reactivation succeeds while a licence is free');
    t.false(again.body.device.expired);
  });
}
