import test from 'ava';
import { backends } from '../helpers/backends.js';
import { startServer } from '../helpers/server.js';

for (const backend of await backends()) {
  test(`api.errors (${backend}): bad input gets a clear error and loses nothing stored`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_BODY_LIMIT: '4096' } });
    t.teardown(() => s.stop());
    const token = s.adminToken;
    await s.request('POST', '/api/devices', { token, body: { id: 'dev1', name: 'dev1' } });
    await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { location: { dateTime: '2026-03-01T10:00:00Z', latitude: 1, longitude: 2 } },
    });
    const before = (await s.request('GET', '/api/devices/dev1/lastLocation', { token })).body.lastLocation;

    const cases: [string, Parameters<typeof s.request>[2], number, string][] = [
      [
        'invalid JSON',
        { token, raw: '{"location": {', headers: { 'content-type': 'application/json' } },
        400,
        'INVALID_JSON',
      ],
      [
        'wrong type',
        { token, body: { location: { dateTime: '2026-03-01T11:00:00Z', latitude: 'north', longitude: 2 } } },
        400,
        'VALIDATION_FAILED',
      ],
      [
        'out of range',
        { token, body: { location: { dateTime: '2026-03-01T11:00:00Z', latitude: 91, longitude: 2 } } },
        400,
        'VALIDATION_FAILED',
      ],
      [
        'bad date',
        { token, body: { location: { dateTime: 'yesterday', latitude: 1, longitude: 2 } } },
        400,
        'VALIDATION_FAILED',
      ],
      ['missing fields', { token, body: {} }, 400, 'VALIDATION_FAILED'],
      [
        'one bad item in a batch',
        {
          token,
          body: {
            locations: [
              { dateTime: '2026-03-01T12:00:00Z', latitude: 1, longitude: 1 },
              { dateTime: '2026-03-01T13:00:00Z', latitude: 1 },
            ],
          },
        },
        400,
        'VALIDATION_FAILED',
      ],
      ['not JSON', { token, raw: 'lat=1', headers: { 'content-type': 'text/plain' } }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [
        'huge body',
        {
          token,
          body: {
            locations: Array.from({ length: 200 }, (_, i) => ({
              dateTime: new Date(Date.UTC(2026, 3, 1, 0, i)).toISOString(),
              latitude: 1,
              longitude: 1,
            })),
          },
        },
        413,
        'PAYLOAD_TOO_LARGE',
      ],
    ];
    for (const [name, options, status, code] of cases) {
      const r = await s.request('POST', '/api/devices/dev1/locations', options);
      t.is(r.status, status, name);
      t.like(r.body, { success: false, code }, name);
      t.is(typeof r.body.error, 'string', name);
      t.notRegex(JSON.stringify(r.body), /at .*\.(ts|js):\d+/, `${name}: no stack`);
      if (status !== 413) t.is(typeof r.body.apiUsage, 'number', `${name}: usage in every authenticated response`);
    }
    const wrongType = await s.request('POST', '/api/devices/dev1/locations', cases[1][1]);
    t.regex(wrongType.body.error, /latitude/, 'the message names the field');
    t.deepEqual((await s.request('GET', '/api/devices/dev1/lastLocation', { token })).body.lastLocation, before);
    const range = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    });
    t.is(range.body.locations.length, 1, 'nothing of the rejected requests was stored');

    const unknownRoute = await s.request('GET', '/api/nothing-here', { token });
    t.is(unknownRoute.status, 404);
    t.like(unknownRoute.body, { success: false, code: 'NOT_FOUND' });
    t.is((await s.request('GET', '/nothing', {})).status, 404);
    t.is((await s.request('GET', '/api/devices/ghost', { token })).body.code, 'DEVICE_NOT_FOUND');
    const wrongMethod = await s.request('DELETE', '/api/users/countries', { token });
    t.true([404, 405].includes(wrongMethod.status));
    t.false(wrongMethod.body.success);
  });

  test(`api.limits (${backend}): requests per minute per user get 429 with Retry-After; usage is counted`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_RATE_LIMIT: '5' } });
    t.teardown(() => s.stop());
    const usage: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await s.request('GET', '/api/devices', { token: s.adminToken });
      t.is(r.status, 200);
      usage.push(r.body.apiUsage);
      t.true(r.body.apiDailyUsage >= r.body.apiUsage);
    }
    // Five in a row unless the minute turned between two of them.
    t.true(usage[4] === 5 || usage[4] < usage[0] + 4);
    if (usage[4] !== 5) return t.log('minute boundary crossed; 429 part skipped');
    const limited = await s.request('GET', '/api/devices', { token: s.adminToken });
    t.is(limited.status, 429);
    t.is(limited.body.code, 'RATE_LIMITED');
    const retry = Number(limited.headers.get('retry-after'));
    t.true(retry >= 1 && retry <= 60);
  });

  test(`api.system (${backend}): health, OpenAPI 3.1 with every endpoint of the spec, docs page`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    t.deepEqual((await s.request('GET', '/api/health')).body, { success: true, status: 'ok' });
    const doc = (await s.request('GET', '/api/openapi.json')).body;
    t.is(doc.openapi, '3.1.0');
    const expected: [string, string][] = [
      ['post', '/api/Auth/Token'],
      ['get', '/api/devices'],
      ['get', '/api/devices/{deviceId}'],
      ['get', '/api/devices/{deviceId}/lastLocation'],
      ['post', '/api/devices/{deviceId}/locations'],
      ['post', '/api/devices/{deviceId}/alerts'],
      ['get', '/api/groups'],
      ['post', '/api/groups'],
      ['get', '/api/groups/{groupId}'],
      ['put', '/api/groups/{groupId}'],
      ['patch', '/api/groups/{groupId}'],
      ['delete', '/api/groups/{groupId}'],
      ['get', '/api/users'],
      ['post', '/api/users'],
      ['get', '/api/users/countries'],
      ['get', '/api/users/timeZones'],
      ['get', '/api/users/{userId}'],
      ['put', '/api/users/{userId}'],
      ['patch', '/api/users/{userId}'],
      ['delete', '/api/users/{userId}'],
    ];
    for (const [method, path] of expected) t.truthy(doc.paths[path]?.[method], `${method} ${path} documented`);
    t.truthy(doc.components.schemas.LocationInput.properties.latitude);
    t.is(
      doc.components.schemas.LocationInput.properties.latitude.maximum,
      90,
      'the validating schema is the documented one',
    );
    const page = await fetch(`${s.base}/docs`);
    t.regex(await page.text(), /swagger-ui/);
    t.is((await fetch(`${s.base}/docs/swagger-ui-bundle.js`)).status, 200);
  });
}

for (const backend of await backends()) {
  test(`api.errors (${backend}): a known path with another method is 405 METHOD_NOT_ALLOWED with Allow, and usage when authenticated`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const token = s.adminToken;
    const cases: [string, string, string[]][] = [
      ['DELETE', '/api/devices', ['GET', 'HEAD', 'POST']],
      ['POST', '/api/health', ['GET', 'HEAD']],
      ['PUT', '/api/auth/token', ['POST']],
      ['PROPFIND', '/api/groups', ['GET', 'HEAD', 'POST']],
    ];
    for (const [method, path, allowed] of cases) {
      const r = await s.request(method, path, { token });
      t.is(r.status, 405, `${method} ${path}`);
      t.like(r.body, { success: false, code: 'METHOD_NOT_ALLOWED' });
      t.regex(r.body.error, new RegExp(`${method} is not allowed`));
      t.deepEqual((r.headers.get('allow') ?? '').split(', ').sort(), allowed);
      t.is(typeof r.body.apiUsage, 'number', 'usage in every authenticated answer');
      t.is(typeof r.body.apiDailyUsage, 'number');
    }
    const anonymous = await s.request('DELETE', '/api/devices');
    t.is(anonymous.status, 405);
    t.false('apiUsage' in anonymous.body, 'no usage without a token');
    const badToken = await s.request('DELETE', '/api/devices', { token: 'garbage' });
    t.is(badToken.status, 405);
    t.false('apiUsage' in badToken.body);
    const unknown = await s.request('GET', '/api/nothing-here', { token });
    t.like(unknown.body, { code: 'NOT_FOUND' });
    t.is(unknown.headers.get('allow'), null);
    t.is(typeof unknown.body.apiUsage, 'number', 'an unknown path answers an authenticated caller with its usage too');
    t.is(
      (await s.request('PROPFIND', '/nothing', { token })).status,
      404,
      'an unknown method on an unknown path is 404',
    );
  });

  test(`api.system (${backend}): the root points to the docs, and the OpenAPI description stands on its own`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    const root = await fetch(`${s.base}/`, { redirect: 'manual' });
    t.is(root.status, 302);
    t.is(root.headers.get('location'), '/docs');
    t.like(await root.json(), { success: true, docs: '/docs', openapi: '/api/openapi.json' });
    const followed = await fetch(`${s.base}/`);
    t.regex(await followed.text(), /swagger-ui/, 'a browser lands on the docs page');
    const doc = (await s.request('GET', '/api/openapi.json')).body;
    t.notRegex(doc.info.description, /CONTRACT\.md/, 'no reference to a file outside the repository');
    t.regex(doc.info.description, /POST \/api\/Auth\/Token/);
    t.regex(doc.info.description, /METHOD_NOT_ALLOWED/);
    t.regex(doc.info.description, /README/);
  });
}
