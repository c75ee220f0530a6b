import test from 'ava';
import { backends } from '../helpers/backends.js';
import { createDevice, startServer } from '../helpers/server.js';
import { ManualClock } from '../../core/clock.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import * as F from '../helpers/frames.js';

const NOW = '2026-03-01T12:00:00Z';

/** `{"a":{"a":…{}}}` nested `levels` deep, as JSON text (JSON.stringify itself gives up near 5,000 levels). */
const nested = (levels: number): string => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);

for (const backend of await backends()) {
  test(`api.input (${backend}): a location dated over 25 h ahead, before 2000 or with impossible values is a 400 naming the field; nothing of the request is stored`, async (t) => {
    const s = await startServer(backend, { clock: new ManualClock(NOW) });
    t.teardown(() => s.stop());
    await createDevice(s, 'dev1');
    const token = s.adminToken;
    const post = (body: object) => s.request('POST', '/api/devices/dev1/locations', { token, body });
    const ok = { dateTime: '2026-03-02T12:59:59Z', latitude: 1, longitude: 2 };
    t.is((await post({ location: ok })).status, 201, 'under 25 h ahead of the server clock is accepted');
    const cases: [string, object, string][] = [
      ['25 h and a second ahead', { location: { ...ok, dateTime: '2026-03-02T13:00:01Z' } }, 'location.dateTime'],
      [
        'the year 9999, second in a batch',
        {
          locations: [
            { ...ok, dateTime: '2026-03-01T11:00:00Z' },
            { ...ok, dateTime: '9999-12-31T23:59:59Z' },
          ],
        },
        'locations.1.dateTime',
      ],
      ['before 2000', { location: { ...ok, dateTime: '1999-12-31T23:59:59Z' } }, 'location.dateTime'],
      ['negative speed', { location: { ...ok, speed: -1 } }, 'location.speed'],
      ['course over 360', { location: { ...ok, course: 361 } }, 'location.course'],
      ['latitude over 90', { location: { ...ok, latitude: 90.5 } }, 'location.latitude'],
      ['longitude under -180', { location: { ...ok, longitude: -180.5 } }, 'location.longitude'],
    ];
    for (const [name, body, field] of cases) {
      const r = await post(body);
      t.is(r.status, 400, name);
      t.like(r.body, { success: false, code: 'VALIDATION_FAILED', details: { field } }, name);
      t.true(r.body.error.startsWith(field), `${name}: the message names the field (${r.body.error})`);
    }
    const range = await post({ from: '2000-01-01T00:00:00Z', to: '2026-03-03T00:00:00Z' });
    t.deepEqual(
      range.body.locations.map((l: { dateTime: string }) => l.dateTime),
      ['2026-03-02T12:59:59.000Z'],
      'nothing of the refused requests',
    );
    t.is(
      (await s.request('GET', '/api/devices/dev1/lastLocation', { token })).body.lastLocation.dateTime,
      '2026-03-02T12:59:59.000Z',
    );
  });

  test(`api.input (${backend}): an impossible calendar date is a 400 in every date-time field of the API`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await createDevice(s, 'dev1');
    const token = s.adminToken;
    const user = { name: 'U', email: 'u@example.com', country: 'ES', timeZone: 'Europe/Madrid' };
    const where: [string, string, (d: string) => object, string][] = [
      [
        'POST',
        '/api/devices/dev1/locations',
        (d) => ({ location: { dateTime: d, latitude: 1, longitude: 2 } }),
        'location.dateTime',
      ],
      ['POST', '/api/devices/dev1/locations', (d) => ({ from: d, to: '2026-03-01T00:00:00Z' }), 'from'],
      ['POST', '/api/devices/dev1/locations', (d) => ({ from: '2026-03-01T00:00:00Z', to: d }), 'to'],
      [
        'POST',
        '/api/devices/dev1/alerts',
        (d) => ({ alert: { dateTime: d, alertName: 'SOSButton' } }),
        'alert.dateTime',
      ],
      ['POST', '/api/devices/dev1/alerts', (d) => ({ from: d, to: '2026-03-01T00:00:00Z' }), 'from'],
      ['POST', '/api/devices', (d) => ({ id: 'dev2', name: 'x', expires: d }), 'expires'],
      ['PUT', '/api/devices/dev1', (d) => ({ name: 'x', expires: d }), 'expires'],
      ['POST', '/api/users', (d) => ({ ...user, expires: d }), 'expires'],
      ['POST', '/api/users', (d) => ({ ...user, from: d }), 'from'],
    ];
    for (const impossible of [
      '2026-02-30T10:00:00Z',
      '2026-02-29T10:00:00Z',
      '2026-13-01T10:00:00Z',
      '2026-00-10T10:00:00Z',
      '2026-03-01T25:00:00Z',
      '2026-03-01T24:00:00Z',
      '2026-03-01T10:60:00Z',
      '2026-03-01T10:00:60Z',
      '2026-03-32T10:00:00+01:00',
      '2026-03-01T10:00:00+25:00',
      '2100-02-29T10:00:00Z',
      '2026-04-31T10:00:00Z',
    ]) {
      for (const [method, path, body, field] of where) {
        const r = await s.request(method, path, { token, body: body(impossible) });
        t.is(r.status, 400, `${impossible} as ${field} of ${method} ${path}`);
        t.is(r.body.details?.field, field, `${impossible} as ${field} of ${method} ${path}`);
      }
    }
    t.is(
      (await s.request('GET', '/api/devices/dev1', { token })).body.device.expires,
      null,
      'the device did not change',
    );
    t.deepEqual(
      (await s.request('GET', '/api/devices', { token })).body.devices.map((d: { id: string }) => d.id),
      ['dev1'],
    );
    for (const real of [
      '2024-02-29T10:00:00Z',
      '2000-02-29T10:00:00Z',
      '2025-12-31T23:59:59Z',
      '2026-03-01t10:00:00z',
      '2026-03-01T23:59:59.999+01:00',
      '2026-03-01T10:00-0530',
    ]) {
      const r = await s.request('POST', '/api/devices/dev1/locations', {
        token,
        body: { location: { dateTime: real, latitude: 1, longitude: 2 } },
      });
      t.is(r.status, 201, real);
      t.is(r.body.locations[0].dateTime, new Date(real).toISOString(), real);
    }
  });

  test(`api.input (${backend}): a NUL character in any string of a body is a 400 and changes nothing stored`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await createDevice(s, 'dev1');
    const token = s.adminToken;
    await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { location: { dateTime: '2026-03-01T10:00:00Z', latitude: 1, longitude: 2 } },
    });
    const group = await s.request('POST', '/api/groups', { token, body: { name: 'North' } });
    const snapshot = async () => ({
      devices: (await s.request('GET', '/api/devices', { token })).body.devices,
      groups: (await s.request('GET', '/api/groups', { token })).body.groups,
      users: (await s.request('GET', '/api/users', { token })).body.users,
      last: (await s.request('GET', '/api/devices/dev1/lastLocation', { token })).body.lastLocation,
      alerts: (
        await s.request('POST', '/api/devices/dev1/alerts', {
          token,
          body: { from: '2000-01-01T00:00:00Z', to: '2030-01-01T00:00:00Z' },
        })
      ).body.alerts,
    });
    const before = await snapshot();
    const nul = 'a\u0000b';
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/devices', { id: 'dev2', name: nul }, 'name'],
      ['PUT', '/api/devices/dev1', { name: nul }, 'name'],
      ['PATCH', '/api/devices/dev1', [{ op: 'replace', path: '/description', value: nul }], '0.value'],
      [
        'POST',
        '/api/devices/dev1/locations',
        { location: { dateTime: '2026-03-01T11:00:00Z', latitude: 1, longitude: 2, attributes: { note: nul } } },
        'location.attributes.note',
      ],
      [
        'POST',
        '/api/devices/dev1/locations',
        { location: { dateTime: '2026-03-01T11:00:00Z', latitude: 1, longitude: 2, warnings: ['ok', nul] } },
        'location.warnings.1',
      ],
      ['POST', '/api/devices/dev1/alerts', { alert: { alertName: 'SOSButton', text: nul } }, 'alert.text'],
      ['POST', '/api/groups', { name: nul }, 'name'],
      ['PUT', `/api/groups/${group.body.id}`, { name: nul }, 'name'],
      ['POST', '/api/users', { name: nul, email: 'u@example.com', country: 'ES', timeZone: 'Europe/Madrid' }, 'name'],
      ['POST', '/api/Auth/Token', { userName: nul, apiKey: 'x' }, 'userName'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await s.request(method, path, { token: path.startsWith('/api/Auth') ? undefined : token, body });
      t.is(r.status, 400, `${method} ${path} ${field}`);
      t.like(r.body, { success: false, code: 'VALIDATION_FAILED', details: { field } }, `${method} ${path}`);
      t.regex(r.body.error, /NUL/, `${method} ${path}: says why`);
    }
    const key = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { location: { dateTime: '2026-03-01T11:00:00Z', latitude: 1, longitude: 2, attributes: { [nul]: 1 } } },
    });
    t.is(key.status, 400, 'a NUL in a key too');
    for (const path of [
      '/api/devices/dev1%00',
      '/api/groups/g%00',
      '/api/users/u%00',
      '/api/devices/dev1%00/lastLocation',
      '/api/devices?status=all%00',
    ]) {
      const r = await s.request('GET', path, { token });
      t.is(r.status, 400, path);
      t.regex(r.body.error, /NUL/, path);
    }
    t.deepEqual(await snapshot(), before, 'nothing stored changed');
  });

  test(`api.input (${backend}): a body nested deeper than 32 levels, or attributes over 16 KiB, is a 400; within the bounds it is stored`, async (t) => {
    const s = await startServer(backend);
    t.teardown(() => s.stop());
    await createDevice(s, 'dev1');
    const token = s.adminToken;
    const post = (attributes: unknown, minute = 0) => {
      const location = JSON.stringify({
        dateTime: `2026-03-01T10:${String(minute).padStart(2, '0')}:00Z`,
        latitude: 1,
        longitude: 2,
      });
      const text = typeof attributes === 'string' ? attributes : JSON.stringify(attributes);
      const raw = `{"location":${location.slice(0, -1)},"attributes":${text}}}`;
      return s.request('POST', '/api/devices/dev1/locations', {
        token,
        raw,
        headers: { 'content-type': 'application/json' },
      });
    };
    // body (1) > location (2) > attributes (3) > ...: attributes nested 30 levels make the body 32 deep.
    const deepest = await post(nested(30), 1);
    t.is(deepest.status, 201, JSON.stringify(deepest.body).slice(0, 200));
    for (const levels of [31, 6000]) {
      const r = await post(nested(levels), 2);
      t.is(r.status, 400, `${levels} levels`);
      t.is(r.body.code, 'VALIDATION_FAILED');
      t.regex(r.body.error, /deeper than 32 levels/);
      t.regex(r.body.details.field, /^location\.attributes(\.a)+$/);
    }
    const arrays = await s.request('POST', '/api/groups', {
      token,
      raw: `{"name":"x","devices":${'['.repeat(50_000)}${']'.repeat(50_000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    t.is(arrays.status, 400, 'arrays count as levels too');
    const large = await post({ blob: 'x'.repeat(16_400) }, 3);
    t.is(large.status, 400);
    t.is(large.body.details.field, 'location.attributes');
    t.is((await post({ blob: 'x'.repeat(16_000) }, 4)).status, 201);
    const range = await s.request('POST', '/api/devices/dev1/locations', {
      token,
      body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
    });
    t.deepEqual(
      range.body.locations.map((l: { dateTime: string }) => l.dateTime),
      ['2026-03-01T10:01:00.000Z', '2026-03-01T10:04:00.000Z'],
    );
  });
}

test('api.input: a tracker fix before 2000 or over 25 h ahead is acknowledged and not stored; its alarm still becomes an alert', async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_GT06_PORT: '0' } });
  t.teardown(() => s.stop());
  const imei = '356307042441013';
  await createDevice(s, imei);
  const token = s.adminToken;
  const c = await TrackerClient.connect(s.running.ports.teltonika);
  t.teardown(() => c.end());
  c.write(F.teltonikaLogin(imei));
  t.deepEqual(await c.read(1), Buffer.from([1]));
  const fix = (time: Date) => ({ time, lat: 40.4, lon: -3.7, speedKmh: 10, course: 90 });
  c.write(
    F.teltonikaAvl([
      fix(new Date('1999-08-22T10:00:00Z')),
      fix(new Date(Date.now() + 26 * 3600_000)),
      fix(new Date('2026-03-01T10:00:00Z')),
    ]),
  );
  t.deepEqual(
    await c.read(4),
    Buffer.from('00000003', 'hex'),
    'the frame is acknowledged: a resend would be refused the same way',
  );
  const range = await s.request('POST', `/api/devices/${imei}/locations`, {
    token,
    body: { from: '1990-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
  });
  t.deepEqual(
    range.body.locations.map((l: { dateTime: string }) => l.dateTime),
    ['2026-03-01T10:00:00.000Z'],
  );

  // GT06 alarm with a fix dated 2254: the position is refused, the SOS is raised at the last location.
  const g = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => g.end());
  g.write(F.gt06Login(imei, 1));
  await g.read(10);
  const alarm = F.gt06Alarm({ time: new Date('2026-03-01T11:00:00Z'), lat: 10, lon: 10 }, 2);
  alarm[4] = 0xfe; // year byte: 2254
  g.write(alarm);
  await g.read(10);
  const alerts = await s.request('POST', `/api/devices/${imei}/alerts`, {
    token,
    body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
  });
  t.is(alerts.body.alerts.length, 1);
  t.like(alerts.body.alerts[0], { latitude: 40.4, longitude: -3.7 });
  t.is(
    (await s.request('GET', `/api/devices/${imei}/lastLocation`, { token })).body.lastLocation.dateTime,
    '2026-03-01T10:00:00.000Z',
  );
});
