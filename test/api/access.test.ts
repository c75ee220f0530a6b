import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer } from '../helpers/server.js';

const loc = { location: { dateTime: '2026-03-01T10:00:00Z', latitude: 1, longitude: 1 } };
const range = { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' };
const alert = { alert: { alertName: 'SOSButton' } };
const userBody = { name: 'U', email: 'u@example.com', country: 'ES', timeZone: 'UTC' };

for (const backend of await backends()) {
  test(`api.access (${backend}): every endpoint with another account's admin, a read-only user and a group-restricted user`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const admin = s.adminToken;
    for (const id of ['d1', 'd2']) await s.request('POST', '/api/devices', { token: admin, body: { id, name: id } });
    await s.request('POST', '/api/devices/d1/locations', { token: admin, body: loc });
    await s.request('POST', '/api/devices/d2/locations', { token: admin, body: loc });
    const group = (await s.request('POST', '/api/groups', { token: admin, body: { name: 'G', devices: ['d1'] } })).body
      .id as string;
    const other = (await s.request('POST', '/api/groups', { token: admin, body: { name: 'H', devices: ['d2'] } })).body
      .id as string;
    const mk = async (email: string, privileges: string[], g?: string) => {
      const r = await s.request('POST', '/api/users', {
        token: admin,
        body: { name: email, email, country: 'ES', timeZone: 'UTC', privileges, group: g },
      });
      t.is(r.status, 201, JSON.stringify(r.body));
      return { id: r.body.id as string, token: await s.token(email, r.body.apiKey) };
    };
    const reader = await mk('reader@example.com', ['read']);
    const restricted = await mk('restricted@example.com', ['write'], group);
    const b = await s.running.services.accounts.create({
      name: 'B',
      licenses: 5,
      adminUser: 'b-admin',
      adminApiKey: 'b-admin-key-0123456789',
    });
    const foreign = await s.token('b-admin', b.apiKey);

    type Row = [method: string, path: string, body: unknown, foreign: number, reader: number, restricted: number];
    const rows: Row[] = [
      ['GET', '/api/devices/d1', undefined, 404, 200, 200],
      ['GET', '/api/devices/d2', undefined, 404, 200, 404],
      ['GET', '/api/devices/d1/lastLocation', undefined, 404, 200, 200],
      ['GET', '/api/devices/d2/lastLocation', undefined, 404, 200, 404],
      ['POST', '/api/devices/d1/locations', range, 404, 200, 200],
      ['POST', '/api/devices/d2/locations', range, 404, 200, 404],
      [
        'POST',
        '/api/devices/d1/locations',
        { location: { ...loc.location, dateTime: '2026-03-01T11:00:00Z' } },
        404,
        403,
        201,
      ],
      ['POST', '/api/devices/d2/locations', loc, 404, 403, 404],
      ['POST', '/api/devices/d1/alerts', range, 404, 200, 200],
      ['POST', '/api/devices/d1/alerts', alert, 404, 403, 201],
      ['POST', '/api/devices/d2/alerts', alert, 404, 403, 404],
      ['PUT', '/api/devices/d1', { name: 'x' }, 404, 403, 403],
      ['PATCH', '/api/devices/d1', [{ op: 'replace', path: '/name', value: 'x' }], 404, 403, 403],
      ['DELETE', '/api/devices/d2', undefined, 404, 403, 404],
      ['POST', '/api/devices', { id: 'd9', name: 'd9' }, 201, 403, 403],
      ['GET', `/api/groups/${group}`, undefined, 404, 200, 200],
      ['GET', `/api/groups/${other}`, undefined, 404, 200, 404],
      ['PUT', `/api/groups/${group}`, { name: 'G', devices: ['d1'] }, 404, 403, 200],
      ['PATCH', `/api/groups/${group}`, [{ op: 'replace', path: '/description', value: 'x' }], 404, 403, 200],
      ['DELETE', `/api/groups/${other}`, undefined, 404, 403, 404],
      ['POST', '/api/groups', { name: 'new' }, 201, 403, 403],
      ['GET', `/api/users/${reader.id}`, undefined, 404, 200, 404],
      ['PUT', `/api/users/${reader.id}`, userBody, 404, 403, 404],
      ['PATCH', `/api/users/${reader.id}`, [{ op: 'replace', path: '/name', value: 'x' }], 404, 403, 404],
      ['DELETE', `/api/users/${reader.id}`, undefined, 404, 403, 404],
      ['POST', `/api/users/${reader.id}/apiKey`, undefined, 404, 200, 404],
      ['POST', '/api/users', { ...userBody, email: 'new@example.com' }, 201, 403, 403],
      ['GET', '/api/users/countries', undefined, 200, 200, 200],
      ['GET', '/api/users/timeZones', undefined, 200, 200, 200],
      ['GET', '/api/account', undefined, 200, 200, 200],
    ];
    // Rows run in order: the reader's own key reissue comes last for the reader, so run it separately.
    const readerToken = reader.token;
    for (const [method, path, body, f, r, g] of rows) {
      const opts = (token: string) => ({ token, body: body as object | undefined });
      t.is((await s.request(method, path, opts(foreign))).status, f, `another account: ${method} ${path}`);
      if (!path.endsWith('/apiKey'))
        t.is((await s.request(method, path, opts(readerToken))).status, r, `read-only: ${method} ${path}`);
      t.is((await s.request(method, path, opts(restricted.token))).status, g, `group-restricted: ${method} ${path}`);
    }
    const ids = (r: { body: { devices: { id: string }[] } }) => r.body.devices.map((d) => d.id);
    t.deepEqual(
      ids(await s.request('GET', '/api/devices', { token: foreign })),
      ['d9'],
      'another account sees only its own devices',
    );
    t.deepEqual(ids(await s.request('GET', '/api/devices', { token: readerToken })), ['d1', 'd2']);
    t.deepEqual(ids(await s.request('GET', '/api/devices', { token: restricted.token })), ['d1']);
    t.deepEqual(
      (await s.request('GET', '/api/groups', { token: restricted.token })).body.groups.map((x: { id: string }) => x.id),
      [group],
    );
    t.false(
      (await s.request('GET', '/api/groups', { token: foreign })).body.groups.some(
        (x: { id: string }) => x.id === group || x.id === other,
      ),
    );
    t.deepEqual(
      (await s.request('GET', '/api/users', { token: readerToken })).body.users.map((u: { id: string }) => u.id),
      [reader.id],
      'a non-admin sees itself',
    );
    t.is(
      (await s.request('POST', `/api/users/${reader.id}/apiKey`, { token: readerToken })).status,
      200,
      'anyone may reissue their own key',
    );
    t.is(
      (await s.request('GET', '/api/devices/d1', { token: admin })).body.device.name,
      'd1',
      'nothing was changed by refused requests',
    );
    t.is((await s.request('GET', '/api/devices/d2', { token: admin })).status, 200);
  });
}
