import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer } from '../helpers/server.js';
import * as devicesRepo from '../../core/devices/devices.repository.js';

for (const backend of await backends()) {
  test(`api.groups (${backend}): CRUD, PUT, JSON Patch and DELETE, returned flattened`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    for (const id of ['d1', 'd2']) await s.request('POST', '/api/devices', { token, body: { id, name: id } });
    const created = await s.request('POST', '/api/groups', {
      token,
      body: { name: 'North', description: 'North fleet', devices: ['d1'] },
    });
    t.is(created.status, 201);
    t.like(created.body, { success: true, name: 'North', description: 'North fleet', devices: ['d1'] });
    const id = created.body.id as string;
    t.truthy(created.body.creation && created.body.lastModified);
    t.is((await s.request('POST', '/api/groups', { token, body: { name: '' } })).status, 400);
    t.is((await s.request('POST', '/api/groups', { token, body: { name: 'X', devices: ['ghost'] } })).status, 400);
    t.deepEqual(
      (await s.request('GET', '/api/groups', { token })).body.groups.map((g: { id: string }) => g.id),
      [id],
    );
    t.like((await s.request('GET', `/api/groups/${id}`, { token })).body, { id, name: 'North' });
    const put = await s.request('PUT', `/api/groups/${id}`, { token, body: { name: 'South', devices: ['d1', 'd2'] } });
    t.like(put.body, { name: 'South', description: null, devices: ['d1', 'd2'] });
    const patch = await s.request('PATCH', `/api/groups/${id}`, {
      token,
      body: [
        { op: 'remove', path: '/devices/0' },
        { op: 'replace', path: '/description', value: 'patched' },
      ],
    });
    t.is(patch.status, 200);
    t.like(patch.body, { devices: ['d2'], description: 'patched' });
    t.deepEqual((await s.request('GET', '/api/devices/d2', { token })).body.device.groups, [id]);
    const bad = await s.request('PATCH', `/api/groups/${id}`, {
      token,
      body: [{ op: 'replace', path: '/name', value: '' }],
    });
    t.is(bad.status, 400);
    t.is(
      (await s.request('PATCH', `/api/groups/${id}`, { token, body: { op: 'replace' } })).status,
      400,
      'a patch must be an array',
    );
    t.deepEqual((await s.request('DELETE', `/api/groups/${id}`, { token })).body.success, true);
    t.is((await s.request('GET', `/api/groups/${id}`, { token })).status, 404);
  });

  test(`api.groups (${backend}): a group a user is restricted to cannot be deleted, by a writer or an admin, until an admin lifts the restriction`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const admin = s.adminToken;
    for (const id of ['d1', 'd2']) await s.request('POST', '/api/devices', { token: admin, body: { id, name: id } });
    const group = (
      await s.request('POST', '/api/groups', { token: admin, body: { name: 'Restricted', devices: ['d2'] } })
    ).body.id as string;
    const mk = async (email: string, privileges: string[], g?: string) => {
      const r = await s.request('POST', '/api/users', {
        token: admin,
        body: { name: email, email, country: 'ES', timeZone: 'UTC', privileges, group: g },
      });
      t.is(r.status, 201, JSON.stringify(r.body));
      return { id: r.body.id as string, token: await s.token(email, r.body.apiKey) };
    };
    const reader = await mk('reader@example.com', ['read'], group);
    const writer = await mk('writer@example.com', ['write']);
    const seen = async () =>
      ((await s.request('GET', '/api/devices', { token: reader.token })).body.devices as { id: string }[]).map(
        (d) => d.id,
      );
    t.deepEqual(await seen(), ['d2']);
    for (const token of [writer.token, admin]) {
      const refused = await s.request('DELETE', `/api/groups/${group}`, { token });
      t.is(refused.status, 409);
      t.is(refused.body.code, 'GROUP_IN_USE');
      t.deepEqual(refused.body.details, { users: [reader.id] });
      t.regex(refused.body.error as string, /reader@example\.com/);
    }
    // nothing changed: the group, and the user's restriction
    t.is((await s.request('GET', `/api/groups/${group}`, { token: admin })).status, 200);
    t.is((await s.request('GET', `/api/users/${reader.id}`, { token: admin })).body.group, group);
    t.deepEqual(await seen(), ['d2']);
    t.is((await s.request('GET', '/api/devices/d1', { token: reader.token })).status, 404);
    // an admin moves the user out of the group: now the writer may delete it
    t.is(
      (
        await s.request('PATCH', `/api/users/${reader.id}`, {
          token: admin,
          body: [{ op: 'replace', path: '/group', value: null }],
        })
      ).status,
      200,
    );
    t.is((await s.request('DELETE', `/api/groups/${group}`, { token: writer.token })).status, 200);
    t.is((await s.request('GET', `/api/groups/${group}`, { token: admin })).status, 404);
  });

  test(`api.groups (${backend}): a group of 600 devices is stored whole (more rows than one insert statement takes)`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_LICENSES: '1000' } });
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const accountId = (await s.request('GET', '/api/account', { token })).body.account.id as string;
    const ids = Array.from({ length: 600 }, (_, i) => `fleet-${i}`);
    // stored directly: 600 REST requests would meet the per-minute request limit
    const now = Date.now();
    await s.running.db.transaction(async (trx) => {
      for (const id of ids) {
        await devicesRepo.insert(trx, {
          id,
          accountId,
          name: id,
          description: null,
          min: null,
          tags: {},
          expiresAt: null,
          dailyEmailLimit: 10,
          dailySmsLimit: 10,
          alertEmails: [],
          alertPhones: [],
          protocol: null,
          lastConnection: null,
          model: null,
          protocolOptions: {},
          mqttPasswordHash: null,
          creation: now,
          modification: now,
        });
      }
    });
    const created = await s.request('POST', '/api/groups', { token, body: { name: 'Everyone', devices: ids } });
    t.is(created.status, 201, JSON.stringify(created.body).slice(0, 300));
    const got = await s.request('GET', `/api/groups/${created.body.id}`, { token });
    t.is(got.body.devices.length, 600);
  });

  test(`api.users (${backend}): CRUD with JSON Patch, password write-only, countries and time zones`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const missing = await s.request('POST', '/api/users', {
      token,
      body: { name: 'No mail', country: 'ES', timeZone: 'Europe/Madrid' },
    });
    t.is(missing.status, 400);
    t.regex(missing.body.error, /email/);
    t.is(
      (
        await s.request('POST', '/api/users', {
          token,
          body: { name: 'A', email: 'a@example.com', country: 'XX', timeZone: 'Europe/Madrid' },
        })
      ).body.details.field,
      'country',
    );
    t.is(
      (
        await s.request('POST', '/api/users', {
          token,
          body: { name: 'A', email: 'a@example.com', country: 'ES', timeZone: 'Mars/Base' },
        })
      ).body.details.field,
      'timeZone',
    );
    const created = await s.request('POST', '/api/users', {
      token,
      body: {
        name: 'Ana',
        email: 'ana@example.com',
        country: 'ES',
        timeZone: 'Europe/Madrid',
        password: 'pa55word!',
        tags: { team: 'a' },
      },
    });
    t.is(created.status, 201);
    t.like(created.body, {
      success: true,
      name: 'Ana',
      userName: 'ana@example.com',
      password: null,
      privileges: ['read'],
      group: null,
      disabled: false,
    });
    t.truthy(created.body.apiKey);
    const id = created.body.id as string;
    const got = await s.request('GET', `/api/users/${id}`, { token });
    t.false('apiKey' in got.body, 'the key is shown once');
    t.is(got.body.password, null);
    t.is(
      (
        await s.request('POST', '/api/users', {
          token,
          body: { name: 'Dup', email: 'ana@example.com', country: 'ES', timeZone: 'UTC' },
        })
      ).status,
      409,
    );
    const put = await s.request('PUT', `/api/users/${id}`, {
      token,
      body: {
        name: 'Ana B',
        email: 'ana@example.com',
        country: 'PT',
        timeZone: 'Europe/Lisbon',
        privileges: ['write'],
      },
    });
    t.like(put.body, { name: 'Ana B', country: 'PT', privileges: ['write'] });
    const patch = await s.request('PATCH', `/api/users/${id}`, {
      token,
      body: [
        { op: 'replace', path: '/disabled', value: true },
        { op: 'add', path: '/tags/x', value: 'y' },
      ],
    });
    t.like(patch.body, { disabled: true, tags: { x: 'y' } });
    t.is(
      (
        await s.request('POST', '/api/Auth/Token', {
          body: { userName: 'ana@example.com', apiKey: created.body.apiKey },
        })
      ).status,
      401,
      'a disabled user gets no token',
    );
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

for (const backend of await backends()) {
  test(`api.users (${backend}): the first admin, with its generated admin@localhost address, survives a GET→PUT round trip and a PATCH`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const me = (await s.request('GET', '/api/users', { token })).body.users[0];
    t.is(me.email, 'admin@localhost');
    const { id, ...asShown } = me;
    const put = await s.request('PUT', `/api/users/${id}`, { token, body: asShown });
    t.is(put.status, 200, JSON.stringify(put.body));
    t.like(put.body, { email: 'admin@localhost', userName: 'admin', privileges: me.privileges, country: me.country });
    const patch = await s.request('PATCH', `/api/users/${id}`, {
      token,
      body: [{ op: 'replace', path: '/name', value: 'Operator' }],
    });
    t.is(patch.status, 200, JSON.stringify(patch.body));
    t.like(patch.body, { name: 'Operator', email: 'admin@localhost' });
    t.is(
      (
        await s.request('PATCH', `/api/users/${id}`, {
          token,
          body: [{ op: 'replace', path: '/email', value: 'ops@mail-host' }],
        })
      ).status,
      200,
      'a host without a dot is an address too',
    );
    t.is(
      (
        await s.request('PATCH', `/api/users/${id}`, {
          token,
          body: [{ op: 'replace', path: '/email', value: 'not an address' }],
        })
      ).status,
      400,
    );
    const device = await s.request('POST', '/api/devices', {
      token,
      body: { id: 'd1', name: 'd1', alertEmails: ['ops@localhost'] },
    });
    t.is(device.status, 201, 'device alert addresses follow the same rule');
  });

  test(`api.users (${backend}): the platform's own user-creation example is accepted: alpha-3 country, group by name, privileges as a string`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const marketing = (await s.request('POST', '/api/groups', { token, body: { name: 'Marketing' } })).body
      .id as string;
    // POST /api/users as the platform documents it, verbatim (read-only and unknown fields included).
    const example = {
      name: 'Jane Doe',
      email: 'jane.doe@example.com',
      country: 'USA',
      timeZone: 'America/Los_Angeles',
      description: 'New user for the marketing department',
      tags: { role: 'user', department: 'marketing' },
      privileges: ['read', 'write'],
      group: 'Marketing',
      deviceId: 'dev-12345',
      adminDevices: 2,
      from: '2023-01-01T00:00:00Z',
      expires: '2024-01-01T00:00:00Z',
      password: 'P@ssw0rd123',
      creation: '2023-01-01T00:00:00Z',
      modification: '2023-06-01T00:00:00Z',
      lastLogin: '2024-05-01T00:00:00Z',
    };
    const created = await s.request('POST', '/api/users', { token, body: example });
    t.is(created.status, 201, JSON.stringify(created.body));
    t.like(created.body, {
      country: 'US',
      group: marketing,
      privileges: ['read', 'write'],
      password: null,
      lastLogin: null,
    });
    const forms: [unknown, string[]][] = [
      ['read', ['read']],
      ['read,write', ['read', 'write']],
      [' Write , read ,write', ['write', 'read']],
      [['admin'], ['admin']],
    ];
    for (const [i, [privileges, expected]] of forms.entries()) {
      const r = await s.request('POST', '/api/users', {
        token,
        body: { name: 'P', email: `p${i}@example.com`, country: 'colombia', timeZone: 'UTC', privileges },
      });
      t.is(r.status, 201, JSON.stringify(r.body));
      t.deepEqual(r.body.privileges, expected, JSON.stringify(privileges));
      t.is(r.body.country, 'CO', 'an English name is taken too');
    }
    for (const bad of [
      { privileges: 'read,root' },
      { privileges: 7 },
      { country: 'XYZ' },
      { country: 'Atlantis' },
      { group: 'Sales' },
    ]) {
      const r = await s.request('POST', '/api/users', {
        token,
        body: { name: 'B', email: 'b@example.com', country: 'ES', timeZone: 'UTC', ...bad },
      });
      t.is(r.status, 400, JSON.stringify(bad));
      t.is(String(r.body.details.field).split('.')[0], Object.keys(bad)[0]);
    }
    const countries = (await s.request('GET', '/api/users/countries', { token })).body.countries;
    t.like(
      countries,
      {
        US: 'United States',
        GB: 'United Kingdom',
        CA: 'Canada',
        AR: 'Argentina',
        BR: 'Brazil',
        CO: 'Colombia',
        RU: 'Russia',
        CN: 'China',
      },
      "the platform's names",
    );
  });
}
