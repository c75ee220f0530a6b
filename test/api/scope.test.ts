import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ManualClock } from '../../core/clock.js';

async function user(
  t: { is(a: unknown, b: unknown, m?: string): void },
  s: TestServer,
  email: string,
  extra: Record<string, unknown>,
) {
  const r = await s.request('POST', '/api/users', {
    token: s.adminToken,
    body: { name: email, email, country: 'ES', timeZone: 'UTC', ...extra },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  return { id: r.body.id as string, token: await s.token(email, r.body.apiKey) };
}

for (const backend of await backends()) {
  test(`api.groups (${backend}): a group-restricted writer names only devices it already sees; unknown and out-of-sight ids get one answer`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const admin = s.adminToken;
    for (const id of ['mine', 'hidden'])
      await s.request('POST', '/api/devices', { token: admin, body: { id, name: id } });
    const group = (await s.request('POST', '/api/groups', { token: admin, body: { name: 'G', devices: ['mine'] } }))
      .body.id as string;
    const writer = await user(t, s, 'writer@example.com', { privileges: ['write'], group });

    const hidden = await s.request('PUT', `/api/groups/${group}`, {
      token: writer.token,
      body: { name: 'G', devices: ['mine', 'hidden'] },
    });
    const ghost = await s.request('PUT', `/api/groups/${group}`, {
      token: writer.token,
      body: { name: 'G', devices: ['mine', 'ghost'] },
    });
    t.is(hidden.status, 400, 'a device of the account outside the group is refused');
    t.is(ghost.status, 400);
    t.is(hidden.body.details.field, 'devices[1]');
    t.is(
      hidden.body.error.replace('hidden', 'ID'),
      ghost.body.error.replace('ghost', 'ID'),
      'the answer does not tell which ids exist',
    );
    const patched = await s.request('PATCH', `/api/groups/${group}`, {
      token: writer.token,
      body: [{ op: 'add', path: '/devices/-', value: 'hidden' }],
    });
    t.is(patched.status, 400, 'nor through JSON Patch');
    const replaced = await s.request('PATCH', `/api/groups/${group}`, {
      token: writer.token,
      body: [{ op: 'replace', path: '', value: { name: 'G', devices: ['mine', 'hidden'] } }],
    });
    t.is(replaced.status, 400, 'nor through a whole-document replace');

    t.is(
      (await s.request('GET', '/api/devices/hidden', { token: writer.token })).status,
      404,
      'the device stays out of sight',
    );
    t.deepEqual(
      (await s.request('GET', `/api/groups/${group}`, { token: admin })).body.devices,
      ['mine'],
      'the group did not change',
    );
    const kept = await s.request('PUT', `/api/groups/${group}`, {
      token: writer.token,
      body: { name: 'G2', devices: ['mine'] },
    });
    t.is(kept.status, 200, 'naming the devices it sees still works');
    t.like(kept.body, { name: 'G2', devices: ['mine'] });
    const all = await s.request('PUT', `/api/groups/${group}`, {
      token: admin,
      body: { name: 'G', devices: ['mine', 'hidden'] },
    });
    t.is(all.status, 200, 'an unrestricted user may name any device of the account');
  });

  test(`api.access (${backend}): a user without privileges is refused everywhere, over REST and MQTT credentials`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'd1', name: 'd1' } });
    const created = await s.request('POST', '/api/users', {
      token: s.adminToken,
      body: { name: 'N', email: 'none@example.com', country: 'ES', timeZone: 'UTC', privileges: [] },
    });
    t.is(created.status, 201);
    t.deepEqual(created.body.privileges, []);
    const token = await s.token('none@example.com', created.body.apiKey);
    const paths: [string, string, unknown?][] = [
      ['GET', '/api/devices'],
      ['GET', '/api/devices/d1'],
      ['GET', '/api/devices/d1/lastLocation'],
      ['POST', '/api/devices/d1/locations', { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }],
      ['POST', '/api/devices/d1/alerts', { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }],
      ['GET', '/api/groups'],
      ['GET', '/api/users'],
      ['GET', `/api/users/${created.body.id}`],
      ['GET', '/api/account'],
      ['GET', '/api/users/countries'],
      ['POST', `/api/users/${created.body.id}/apiKey`],
    ];
    for (const [method, path, body] of paths) {
      const r = await s.request(method, path, { token, body });
      t.is(r.status, 403, `${method} ${path}`);
      t.is(r.body.code, 'FORBIDDEN');
      t.is(typeof r.body.apiUsage, 'number');
    }
    const tokens = s.running.services.tokens;
    t.is(
      await tokens.principalForApiKey('none@example.com', created.body.apiKey),
      null,
      'no MQTT login with the API key',
    );
    t.is(await tokens.principalForToken(token), null, 'nor with the token');
    t.not(await tokens.principalForToken(s.adminToken), null);
  });

  test(`api.patch (${backend}): a whole-document replace cannot change read-only fields of a device, a group or a user`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    await s.request('POST', '/api/devices', { token, body: { id: 'd1', name: 'd1' } });
    const device = (await s.request('GET', '/api/devices/d1', { token })).body.device;
    const group = (await s.request('POST', '/api/groups', { token, body: { name: 'G' } })).body;
    const u = await s.request('POST', '/api/users', {
      token,
      body: { name: 'U', email: 'u@example.com', country: 'ES', timeZone: 'UTC' },
    });
    const { success: _gs, apiUsage: _ga, apiDailyUsage: _gd, ...groupDoc } = group;
    const { success: _us, apiUsage: _ua, apiDailyUsage: _ud, apiKey: _k, ...userDoc } = u.body;
    const cases: [string, Record<string, unknown>, string][] = [
      [`/api/devices/d1`, { ...device, emailsSentToday: 99 }, 'emailsSentToday'],
      [`/api/devices/d1`, { ...device, creation: '2000-01-01T00:00:00.000Z' }, 'creation'],
      [`/api/devices/d1`, { ...device, groups: [group.id] }, 'groups'],
      [`/api/groups/${group.id}`, { ...groupDoc, creation: '2000-01-01T00:00:00.000Z' }, 'creation'],
      [`/api/groups/${group.id}`, { ...groupDoc, id: 'other' }, 'id'],
      [`/api/users/${u.body.id}`, { ...userDoc, lastLogin: '2000-01-01T00:00:00.000Z' }, 'lastLogin'],
      [`/api/users/${u.body.id}`, { ...userDoc, creation: '2000-01-01T00:00:00.000Z' }, 'creation'],
    ];
    for (const [path, value, field] of cases) {
      const r = await s.request('PATCH', path, { token, body: [{ op: 'replace', path: '', value }] });
      t.is(r.status, 400, `${path} ${field}`);
      t.is(r.body.details?.field, field);
    }
    const moved = await s.request('PATCH', '/api/devices/d1', {
      token,
      body: [{ op: 'copy', from: '/name', path: '' }],
    });
    t.is(moved.status, 400, 'the document stays an object');
    t.is(
      (await s.request('GET', '/api/devices/d1', { token })).body.device.creation,
      device.creation,
      'nothing changed',
    );
    const ok = await s.request('PATCH', '/api/devices/d1', {
      token,
      body: [{ op: 'replace', path: '', value: { ...device, name: 'renamed' } }],
    });
    t.is(ok.status, 200, 'a whole-document replace that keeps read-only fields works');
    t.is(ok.body.device.name, 'renamed');
    const short = await s.request('PATCH', `/api/groups/${group.id}`, {
      token,
      body: [{ op: 'replace', path: '', value: { name: 'H' } }],
    });
    t.is(short.status, 200, 'read-only fields left out keep their values');
    t.like(short.body, { id: group.id, name: 'H', creation: group.creation });
  });

  test(`api.unknownDevices (${backend}): an admin sees only its own account's refused devices; identifiers of no device are for the operator`, async (t) => {
    const clock = new ManualClock(Date.now());
    const s = await startServer(backend, { clock });
    t.teardown(() => s.stop());
    const b = await s.running.services.accounts.create({
      name: 'B',
      licenses: 5,
      adminUser: 'b-admin',
      adminApiKey: 'b-admin-key-0123456789',
    });
    const bToken = await s.token('b-admin', b.apiKey);
    const old = { name: 'old', expires: '2020-01-01T00:00:00Z' };
    t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'a-old', ...old } })).status, 201);
    t.is((await s.request('POST', '/api/devices', { token: bToken, body: { id: 'b-old', ...old } })).status, 201);
    const directory = s.running.services.directory;
    for (const id of ['a-old', 'b-old', 'nobody'])
      t.not((await directory.resolve(id, 'gt06', '192.0.2.7')).status, 'ok');

    const listed = async (token: string) =>
      ((await s.request('GET', '/api/unknownDevices', { token })).body.unknownDevices as { identifier: string }[]).map(
        (u) => u.identifier,
      );
    t.deepEqual(await listed(s.adminToken), ['a-old']);
    t.deepEqual(await listed(bToken), ['b-old']);
    t.deepEqual(
      (await directory.recentUnknown(100)).map((u) => u.identifier).sort(),
      ['a-old', 'b-old', 'nobody'],
      'the operator sees all',
    );

    // A deleted id created again by another account does not show its former owner's sightings.
    t.is((await s.request('DELETE', '/api/devices/b-old', { token: bToken })).status, 200);
    clock.advance(1000);
    t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: 'b-old', ...old } })).status, 201);
    t.deepEqual(await listed(s.adminToken), ['a-old']);
    t.deepEqual(await listed(bToken), []);
  });
}
