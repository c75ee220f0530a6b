import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer } from '../helpers/server.js';

for (const backend of await backends()) {
  test(`api.groups (${backend}): CRUD, PUT, JSON Patch and DELETE, returned flattened`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    for (const id of ['d1', 'd2']) await s.request('POST', '/api/devices', { token, body: { id, name: id } });
    const created = await s.request('POST', '/api/groups', { token, body: { name: 'North', description: 'North fleet', devices: ['d1'] } });
    t.is(created.status, 201);
    t.like(created.body, { success: true, name: 'North', description: 'North fleet', devices: ['d1'] });
    const id = created.body.id as string;
    t.truthy(created.body.creation && created.body.lastModified);
    t.is((await s.request('POST', '/api/groups', { token, body: { name: '' } })).status, 400);
    t.is((await s.request('POST', '/api/groups', { token, body: { name: 'X', devices: ['ghost'] } })).status, 400);
    t.deepEqual((await s.request('GET', '/api/groups', { token })).body.groups.map((g: { id: string }) => g.id), [id]);
    t.like((await s.request('GET', `/api/groups/${id}`, { token })).body, { id, name: 'North' });
    const put = await s.request('PUT', `/api/groups/${id}`, { token, body: { name: 'South', devices: ['d1', 'd2'] } });
    t.like(put.body, { name: 'South', description: null, devices: ['d1', 'd2'] });
    const patch = await s.request('PATCH', `/api/groups/${id}`, { token, body: [{ op: 'remove', path: '/devices/0' }, { op: 'replace', path: '/description', value: 'patched' }] });
    t.is(patch.status, 200);
    t.like(patch.body, { devices: ['d2'], description: 'patched' });
    t.deepEqual((await s.request('GET', '/api/devices/d2', { token })).body.device.groups, [id]);
    const bad = await s.request('PATCH', `/api/groups/${id}`, { token, body: [{ op: 'replace', path: '/name', value: '' }] });
    t.is(bad.status, 400);
    t.is((await s.request('PATCH', `/api/groups/${id}`, { token, body: { op: 'replace' } })).status, 400, 'a patch must be an array');
    t.deepEqual((await s.request('DELETE', `/api/groups/${id}`, { token })).body.success, true);
    t.is((await s.request('GET', `/api/groups/${id}`, { token })).status, 404);
  });

  test(`api.users (${backend}): CRUD with JSON Patch, password write-only, countries and time zones`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const missing = await s.request('POST', '/api/users', { token, body: { name: 'No mail', country: 'ES', timeZone: 'Europe/Madrid' } });
    t.is(missing.status, 400);
    t.regex(missing.body.error, /email/);
    t.is((await s.request('POST', '/api/users', { token, body: { name: 'A', email: 'a@example.com', country: 'XX', timeZone: 'Europe/Madrid' } })).body.details.field, 'country');
    t.is((await s.request('POST', '/api/users', { token, body: { name: 'A', email: 'a@example.com', country: 'ES', timeZone: 'Mars/Base' } })).body.details.field, 'timeZone');
    const created = await s.request('POST', '/api/users', { token, body: { name: 'Ana', email: 'ana@example.com', country: 'ES', timeZone: 'Europe/Madrid', password: 'pa55word!', tags: { team: 'a' } } });
    t.is(created.status, 201);
    t.like(created.body, { success: true, name: 'Ana', userName: 'ana@example.com', password: null, privileges: ['read'], group: null, disabled: false });
    t.truthy(created.body.apiKey);
    const id = created.body.id as string;
    const got = await s.request('GET', `/api/users/${id}`, { token });
    t.false('apiKey' in got.body, 'the key is shown once');
    t.is(got.body.password, null);
    t.is((await s.request('POST', '/api/users', { token, body: { name: 'Dup', email: 'ana@example.com', country: 'ES', timeZone: 'UTC' } })).status, 409);
    const put = await s.request('PUT', `/api/users/${id}`, { token, body: { name: 'Ana B', email: 'ana@example.com', country: 'PT', timeZone: 'Europe/Lisbon', privileges: ['write'] } });
    t.like(put.body, { name: 'Ana B', country: 'PT', privileges: ['write'] });
    const patch = await s.request('PATCH', `/api/users/${id}`, { token, body: [{ op: 'replace', path: '/disabled', value: true }, { op: 'add', path: '/tags/x', value: 'y' }] });
    t.like(patch.body, { disabled: true, tags: { x: 'y' } });
    t.is((await s.request('POST', '/api/Auth/Token', { body: { userName: 'ana@example.com', apiKey: created.body.apiKey } })).status, 401, 'a disabled user gets no token');
    t.is((await s.request('GET', '/api/users', { token })).body.users.length, 2);
    t.is((await s.request('DELETE', `/api/users/${id}`, { token })).status, 200);
    t.is((await s.request('GET', `/api/users/${id}`, { token })).status, 404);

    const countries = await s.request('GET', '/api/users/countries', { token });
    t.is(countries.body.countries.ES, 'Spain');
    t.true(Object.keys(countries.body.countries).length >= 240);
    const zones = await s.request('GET', '/api/users/timeZones', { token });
    t.regex(zones.body.timeZones['Europe/Madrid'], /^\(UTC\+0[12]:00\) Europe\/Madrid$/);
    t.regex(zones.body.timeZones.UTC, /^\(UTC\+00:00\)/);
    t.true(Object.keys(zones.body.timeZones).length > 300);
  });
}
