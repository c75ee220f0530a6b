import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

async function user(s: TestServer, email: string, extra: Record<string, unknown>): Promise<string> {
  const r = await s.request('POST', '/api/users', {
    token: s.adminToken,
    body: { name: email, email, country: 'ES', timeZone: 'UTC', ...extra },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return s.token(email, r.body.apiKey);
}

const csv = (s: TestServer, text: string, token = s.adminToken) =>
  s.request('POST', '/api/devices/import', { token, raw: text, headers: { 'content-type': 'text/csv' } });

for (const backend of await backends()) {
  test(`api.devices.import (${backend}): a JSON array; refused rows say why, the others are created`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_LICENSES: '4' } });
    t.teardown(() => s.stop());
    const token = s.adminToken;
    t.is((await s.request('POST', '/api/devices', { token, body: { id: 'taken', name: 'Taken' } })).status, 201);
    const group = (await s.request('POST', '/api/groups', { token, body: { name: 'G' } })).body.id as string;
    const r = await s.request('POST', '/api/devices/import', {
      token,
      body: [
        { id: 'a1', name: 'A 1', groups: [group], dailyEmailLimit: 3, tags: { plate: 'X-1' } },
        { id: 'a2', name: 'A 2', expires: '2020-01-01T00:00:00Z' },
        { id: 'taken', name: 'Again' },
        { id: 'a1', name: 'Twice' },
        { id: 'bad id!', name: 'Bad' },
        { id: 'a3', name: 'A 3', dailySmsLimit: -1 },
        { id: 'a4', name: 'A 4', groups: ['no-such-group'] },
        'not an object',
        { id: 'a5', name: 'A 5' },
        { id: 'a6', name: 'A 6' },
        { id: 'a7', name: 'A 7' },
      ],
    });
    t.is(r.status, 200, JSON.stringify(r.body));
    t.deepEqual(r.body.created, ['a1', 'a2', 'a5', 'a6'], 'an expired row needs no licence; 3 were free');
    t.deepEqual(
      r.body.refused.map((x: { row: number; id: string | null; code: string }) => [x.row, x.id, x.code]),
      [
        [3, 'taken', 'DEVICE_EXISTS'],
        [4, 'a1', 'DEVICE_EXISTS'],
        [5, 'bad id!', 'VALIDATION_FAILED'],
        [6, 'a3', 'VALIDATION_FAILED'],
        [7, 'a4', 'GROUP_NOT_FOUND'],
        [8, null, 'VALIDATION_FAILED'],
        [11, 'a7', 'NO_LICENSE_AVAILABLE'],
      ],
    );
    t.regex(r.body.refused[1].error, /row 1/);
    t.regex(r.body.refused[3].error, /^dailySmsLimit: /);
    const a1 = (await s.request('GET', '/api/devices/a1', { token })).body.device;
    t.like(a1, { name: 'A 1', dailyEmailLimit: 3, dailySmsLimit: 10, tags: { plate: 'X-1' }, groups: [group] });
    t.is((await s.request('GET', '/api/devices/a2', { token })).body.device.expired, true);
    t.deepEqual((await s.request('GET', `/api/groups/${group}`, { token })).body.devices, ['a1']);
    t.is((await s.request('GET', '/api/devices/a7', { token })).status, 404);
    // the licence store agrees with the database: none is free now
    const more = await s.request('POST', '/api/devices', { token, body: { id: 'one-more', name: 'x' } });
    t.is(more.body.code, 'NO_LICENSE_AVAILABLE');
  });

  test(`api.devices.import (${backend}): CSV with quotes, lists and CRLF`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const g1 = (await s.request('POST', '/api/groups', { token, body: { name: 'G1' } })).body.id as string;
    const g2 = (await s.request('POST', '/api/groups', { token, body: { name: 'G2' } })).body.id as string;
    const r = await csv(
      s,
      [
        'id,name,description,groups,alertEmails,dailySmsLimit,tags',
        `c1,"Truck, the ""big"" one","two\r\nlines",${g1};${g2},ops@example.com;boss@example.com,2,plate=AB-1;colour=red`,
        'c2,Van,,,,,',
        'c3,Short',
        'c4,Limit,,,,lots,',
        'c2,Again,,,,,',
        '',
      ].join('\r\n'),
    );
    t.is(r.status, 200, JSON.stringify(r.body));
    t.deepEqual(r.body.created, ['c1', 'c2']);
    t.deepEqual(
      r.body.refused.map((x: { row: number; id: string; code: string }) => [x.row, x.id, x.code]),
      [
        [3, 'c3', 'VALIDATION_FAILED'],
        [4, 'c4', 'VALIDATION_FAILED'],
        [5, 'c2', 'DEVICE_EXISTS'],
      ],
    );
    const c1 = (await s.request('GET', '/api/devices/c1', { token })).body.device;
    t.like(c1, {
      name: 'Truck, the "big" one',
      description: 'two\r\nlines',
      alertEmails: ['ops@example.com', 'boss@example.com'],
      dailySmsLimit: 2,
      tags: { plate: 'AB-1', colour: 'red' },
    });
    t.deepEqual([...c1.groups].sort(), [g1, g2].sort());
    t.like((await s.request('GET', '/api/devices/c2', { token })).body.device, { description: null, groups: [] });
  });

  test(`api.devices.import (${backend}): malformed bodies, sizes and access`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const post = (body: unknown, tk = token) => s.request('POST', '/api/devices/import', { token: tk, body });
    t.is((await post({ id: 'x', name: 'x' })).body.code, 'VALIDATION_FAILED', 'not an array');
    t.is((await post([])).status, 400, 'no rows');
    t.is(
      (
        await s.request('POST', '/api/devices/import', {
          token,
          raw: '[{',
          headers: { 'content-type': 'application/json' },
        })
      ).body.code,
      'INVALID_JSON',
    );
    t.is((await csv(s, 'id,name\n"open,x\n')).status, 400, 'a quoted field left open');
    t.is((await csv(s, 'name\nx\n')).status, 400, 'no id column');
    t.regex((await csv(s, 'id,colour\nx,red\n')).body.error, /colour/);
    const xml = await s.request('POST', '/api/devices/import', {
      token,
      raw: '<x/>',
      headers: { 'content-type': 'application/xml' },
    });
    t.is(xml.status, 415);
    const many = await post(Array.from({ length: 10_001 }, (_, i) => ({ id: `d${i}`, name: 'n' })));
    t.is(many.status, 413, JSON.stringify(many.body).slice(0, 200));
    const huge = await csv(s, `id,name\n${'x,y\n'.repeat(1_500_000)}`);
    t.is(huge.status, 413);
    const reader = await user(s, 'reader@example.com', { privileges: ['read'] });
    const writer = await user(s, 'writer@example.com', { privileges: ['write'] });
    for (const tk of [reader, writer]) {
      const r = await post([{ id: 'r1', name: 'r' }], tk);
      t.is(r.status, 403);
      t.is(r.body.code, 'FORBIDDEN');
    }
    t.is((await s.request('GET', '/api/devices/r1', { token })).status, 404, 'nothing was created');
    t.is((await s.request('POST', '/api/devices/import', { body: [] })).status, 401);
  });

  test(`api.devices.import (${backend}): two imports of the same ids at once create each device once`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_LICENSES: '1000' } });
    t.teardown(() => s.stop());
    const rows = Array.from({ length: 300 }, (_, i) => ({ id: `same-${i}`, name: `Same ${i}` }));
    const answers = await Promise.all(
      [rows, [...rows].reverse()].map((body) =>
        s.request('POST', '/api/devices/import', { token: s.adminToken, body }),
      ),
    );
    for (const a of answers) t.is(a.status, 200, JSON.stringify(a.body).slice(0, 300));
    const created = answers.flatMap((a) => a.body.created as string[]);
    t.is(created.length, 300);
    t.is(new Set(created).size, 300);
    for (const a of answers) t.true((a.body.refused as { code: string }[]).every((r) => r.code === 'DEVICE_EXISTS'));
    const listed = (await s.request('GET', '/api/devices', { token: s.adminToken })).body.devices;
    t.is(listed.length, 300);
  });
}
