import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

const square = [
  [-3.71, 40.41],
  [-3.69, 40.41],
  [-3.69, 40.43],
  [-3.71, 40.43],
  [-3.71, 40.41],
];
const depot = { name: 'Depot', type: 'circle', center: { latitude: 40.4168, longitude: -3.7038 }, radius: 250 };

async function userToken(s: TestServer, email: string, extra: Record<string, unknown>): Promise<string> {
  const r = await s.request('POST', '/api/users', {
    token: s.adminToken,
    body: { name: email, email, country: 'ES', timeZone: 'UTC', ...extra },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return s.token(email, r.body.apiKey);
}

for (const backend of await backends()) {
  test(`api.zones (${backend}): create, list, get, PUT, JSON Patch and DELETE, in the contract's shape`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;

    const circle = await s.request('POST', '/api/zones', { token, body: depot });
    t.is(circle.status, 201, JSON.stringify(circle.body));
    t.true(circle.body.success);
    const circleId = circle.body.zone.id as string;
    t.regex(circleId, /^[0-9a-f-]{36}$/);
    t.deepEqual(circle.body.zone, { id: circleId, ...depot }, 'a circle shows no polygon');

    const poly = await s.request('POST', '/api/zones', {
      token,
      body: { name: 'Yard', type: 'polygon', polygon: square, radius: null },
    });
    t.is(poly.status, 201, JSON.stringify(poly.body));
    const polyId = poly.body.zone.id as string;
    t.deepEqual(
      poly.body.zone,
      { id: polyId, name: 'Yard', type: 'polygon', polygon: square },
      'a polygon shows no centre or radius',
    );

    const list = await s.request('GET', '/api/zones', { token });
    t.deepEqual(
      list.body.zones.map((z: { id: string }) => z.id),
      [circleId, polyId],
    );
    t.deepEqual((await s.request('GET', `/api/zones/${polyId}`, { token })).body.zone, poly.body.zone);

    const put = await s.request('PUT', `/api/zones/${circleId}`, {
      token,
      body: { ...depot, name: 'Depot 2', radius: 500 },
    });
    t.is(put.status, 200);
    t.like(put.body.zone, { id: circleId, name: 'Depot 2', radius: 500 });

    const toPolygon = await s.request('PATCH', `/api/zones/${circleId}`, {
      token,
      body: [
        { op: 'replace', path: '/type', value: 'polygon' },
        { op: 'remove', path: '/center' },
        { op: 'remove', path: '/radius' },
        { op: 'add', path: '/polygon', value: square },
      ],
    });
    t.is(toPolygon.status, 200, JSON.stringify(toPolygon.body));
    t.deepEqual(toPolygon.body.zone, { id: circleId, name: 'Depot 2', type: 'polygon', polygon: square });
    const moved = await s.request('PATCH', `/api/zones/${circleId}`, {
      token,
      body: [{ op: 'replace', path: '/polygon/0/0', value: -3.72 }],
    });
    t.is(moved.status, 400, 'moving the first point alone opens the ring');
    t.regex(moved.body.error, /not closed/);
    t.is(
      (
        await s.request('PATCH', `/api/zones/${circleId}`, {
          token,
          body: [{ op: 'replace', path: '/id', value: 'x' }],
        })
      ).status,
      400,
      'id is read-only',
    );
    const renamed = await s.request('PATCH', `/api/zones/${circleId}`, {
      token,
      body: [
        { op: 'test', path: '/name', value: 'Depot 2' },
        { op: 'replace', path: '/name', value: 'Depot 3' },
      ],
    });
    t.is(renamed.body.zone.name, 'Depot 3');
    t.is(
      (
        await s.request('PATCH', `/api/zones/${circleId}`, {
          token,
          body: [{ op: 'test', path: '/name', value: 'nope' }],
        })
      ).status,
      409,
    );

    t.is((await s.request('DELETE', `/api/zones/${circleId}`, { token })).status, 200);
    const gone = await s.request('GET', `/api/zones/${circleId}`, { token });
    t.is(gone.status, 404);
    t.is(gone.body.code, 'ZONE_NOT_FOUND');
    t.is((await s.request('DELETE', `/api/zones/${circleId}`, { token })).body.code, 'ZONE_NOT_FOUND');
    t.is((await s.request('PUT', '/api/zones/nope', { token, body: depot })).body.code, 'ZONE_NOT_FOUND');
  });

  test(`api.zones (${backend}): every validation error names its field`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const cases: [string, Record<string, unknown>, RegExp?][] = [
      ['name', { ...depot, name: '' }],
      ['type', { ...depot, type: 'ellipse' }],
      ['center', { name: 'C', type: 'circle', radius: 10 }],
      ['center.latitude', { ...depot, center: { latitude: 91, longitude: 0 } }],
      ['center.longitude', { ...depot, center: { latitude: 0, longitude: 180.5 } }],
      ['radius', { ...depot, radius: 0 }, /1 to 1,000,000/],
      ['radius', { ...depot, radius: 1_000_001 }],
      ['radius', { name: 'C', type: 'circle', center: depot.center }],
      ['polygon', { ...depot, polygon: square }, /a circle has no polygon/],
      ['polygon', { name: 'P', type: 'polygon' }],
      ['radius', { name: 'P', type: 'polygon', polygon: square, radius: 4 }],
      ['polygon', { name: 'P', type: 'polygon', polygon: square.slice(0, 4) }, /not closed/],
      [
        'polygon',
        {
          name: 'P',
          type: 'polygon',
          polygon: [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        },
        /at least 4 points/,
      ],
      [
        'polygon',
        {
          name: 'P',
          type: 'polygon',
          polygon: [
            [0, 0],
            [10, 10],
            [10, 0],
            [0, 10],
            [0, 0],
          ],
        },
        /crosses itself/,
      ],
      [
        'polygon[1]',
        {
          name: 'P',
          type: 'polygon',
          polygon: [
            [0, 0],
            [1, 0, 3],
            [0, 1],
            [0, 0],
          ],
        },
      ],
      [
        'polygon[2][1]',
        {
          name: 'P',
          type: 'polygon',
          polygon: [
            [0, 0],
            [1, 0],
            [0, 95],
            [0, 0],
          ],
        },
      ],
      [
        'polygon[2]',
        {
          name: 'P',
          type: 'polygon',
          polygon: [
            [0, 0],
            [1, 0],
            [1, 0],
            [0, 1],
            [0, 0],
          ],
        },
        /repeats/,
      ],
    ];
    for (const [field, body, message] of cases) {
      const r = await s.request('POST', '/api/zones', { token, body });
      t.is(r.status, 400, `${field}: ${JSON.stringify(body)}`);
      t.is(r.body.code, 'VALIDATION_FAILED');
      t.is(r.body.details?.field, field, JSON.stringify(r.body));
      if (message) t.regex(r.body.error, message);
    }
    t.deepEqual((await s.request('GET', '/api/zones', { token })).body.zones, [], 'nothing was stored');
  });

  test(`api.zones (${backend}): admin of the whole account only; another account's zone is 404`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const id = (await s.request('POST', '/api/zones', { token: s.adminToken, body: depot })).body.zone.id as string;

    const writer = await userToken(s, 'writer@example.com', { privileges: ['write'] });
    for (const [method, path, body] of [
      ['GET', '/api/zones'],
      ['POST', '/api/zones', depot],
      ['GET', `/api/zones/${id}`],
      ['PUT', `/api/zones/${id}`, depot],
      ['DELETE', `/api/zones/${id}`],
    ] as const) {
      const r = await s.request(method, path, { token: writer, body });
      t.is(r.status, 403, `${method} ${path}`);
      t.is(r.body.code, 'FORBIDDEN');
    }
    const group = (await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'G' } })).body
      .id as string;
    const groupAdmin = await userToken(s, 'gadmin@example.com', { privileges: ['admin'], group });
    const restricted = await s.request('GET', '/api/zones', { token: groupAdmin });
    t.is(restricted.status, 403);
    t.regex(restricted.body.error, /restricted to a group/);

    await s.running.services.accounts.create({
      name: 'B',
      licenses: 5,
      adminUser: 'b-admin',
      adminApiKey: 'b-admin-key-0123456789',
    });
    const other = await s.token('b-admin', 'b-admin-key-0123456789');
    t.deepEqual((await s.request('GET', '/api/zones', { token: other })).body.zones, []);
    for (const [method, body] of [
      ['GET'],
      ['PUT', depot],
      ['PATCH', [{ op: 'replace', path: '/name', value: 'x' }]],
      ['DELETE'],
    ] as const) {
      const r = await s.request(method, `/api/zones/${id}`, { token: other, body });
      t.is(r.status, 404, method);
      t.is(r.body.code, 'ZONE_NOT_FOUND');
    }
    t.is((await s.request('GET', `/api/zones/${id}`, { token: s.adminToken })).body.zone.name, 'Depot', 'unchanged');
  });

  test(`api.zones (${backend}): a zone a rule uses is not deleted (409 ZONE_IN_USE naming the rule)`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    await s.request('POST', '/api/devices', { token, body: { id: 'truck7', name: 'Truck 7' } });
    const zone = (await s.request('POST', '/api/zones', { token, body: depot })).body.zone.id as string;
    const rule = await s.request('POST', '/api/alertRules', {
      token,
      body: { name: 'Left the depot', alertName: 'AllowedArea', devices: ['truck7'], params: { zone } },
    });
    t.is(rule.status, 201, JSON.stringify(rule.body));
    const refused = await s.request('DELETE', `/api/zones/${zone}`, { token });
    t.is(refused.status, 409);
    t.is(refused.body.code, 'ZONE_IN_USE');
    t.deepEqual(refused.body.details.rules, ['Left the depot']);
    t.is((await s.request('GET', `/api/zones/${zone}`, { token })).status, 200, 'still there');
    await s.request('DELETE', `/api/alertRules/${rule.body.alertRule.id}`, { token });
    t.is((await s.request('DELETE', `/api/zones/${zone}`, { token })).status, 200, 'free once the rule is gone');
  });

  test(`api.zones (${backend}): the OpenAPI document describes the zone and rule endpoints`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const doc = (await s.request('GET', '/api/openapi.json')).body;
    for (const path of ['/api/zones', '/api/zones/{zoneId}', '/api/alertRules', '/api/alertRules/{ruleId}'])
      t.truthy(doc.paths[path], path);
    t.deepEqual(Object.keys(doc.paths['/api/zones/{zoneId}']).sort(), ['delete', 'get', 'patch', 'put']);
    t.regex(doc.paths['/api/zones'].post.description, /1 to 1,000,000/);
    const rulePost = doc.paths['/api/alertRules'].post.description as string;
    t.regex(rulePost, /`SpeedLimit`: `speed`: a number above 0/);
    t.regex(rulePost, /`LowBattery`: `value` \(optional\).*default 20/);
    t.regex(doc.info.description, /ZONE_IN_USE` 409/);
  });
}
