import test from 'ava';
import mqtt from 'mqtt';
import { backends } from '../helpers/backends.js';
import { GATEWAY_MODES, startServer, untilConnected, type TestServer } from '../helpers/server.js';
import { teltonikaSession } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';

async function user(s: TestServer, email: string, extra: Record<string, unknown>): Promise<string> {
  const r = await s.request('POST', '/api/users', {
    token: s.adminToken,
    body: { name: email, email, country: 'ES', timeZone: 'UTC', ...extra },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return s.token(email, r.body.apiKey);
}

const fleet = async (s: TestServer, token: string, query = '') => {
  const r = await s.request('GET', `/api/lastLocations${query}`, { token });
  return r;
};
const byId = (body: { lastLocations: { deviceId: string }[] }) => {
  if (!body.lastLocations) throw new Error(`not an answer: ${JSON.stringify(body)}`);
  return Object.fromEntries(body.lastLocations.map((e) => [e.deviceId, e])) as Record<string, any>;
};

for (const backend of await backends()) {
  test(`api.lastLocations (${backend}): statuses, last locations as stored, scope and groups`, async (t) => {
    const s = await startServer(backend, { env: { TRACKGATE_TELTONIKA_PORT: '0' } });
    t.teardown(() => s.stop());
    const admin = s.adminToken;
    const imei = '356307042441013';
    for (const body of [
      { id: imei, name: 'Truck 1' },
      { id: 'phone-2', name: 'Van "2"' },
      { id: 'old-3', name: 'Old 3', expires: '2020-01-01T00:00:00Z' },
      { id: 'quiet-4', name: 'Quiet 4' },
    ])
      t.is((await s.request('POST', '/api/devices', { token: admin, body })).status, 201);
    const location = { dateTime: '2026-03-01T10:00:00Z', latitude: 40.4168, longitude: -3.7038, speed: 12.5 };
    const stored = await s.request('POST', '/api/devices/phone-2/locations', { token: admin, body: { location } });
    t.is(stored.status, 201);
    const last = (await s.request('GET', '/api/devices/phone-2/lastLocation', { token: admin })).body.lastLocation;

    // a real tracker connection: online through TCP
    const tracker = await teltonikaSession(t, s.running.ports.teltonika, imei);
    await untilConnected(s, imei);
    const online = await fleet(s, admin);
    t.is(online.status, 200, JSON.stringify(online.body));
    t.deepEqual(
      online.body.lastLocations.map((e: { deviceId: string }) => e.deviceId),
      [imei, 'old-3', 'phone-2', 'quiet-4'],
      'every device of the account, by id',
    );
    t.is(typeof online.body.apiUsage, 'number');
    const a = byId(online.body);
    t.like(a[imei], { name: 'Truck 1', status: 'online', transport: 'tcp', lastLocation: null });
    t.deepEqual(a['phone-2'], {
      deviceId: 'phone-2',
      name: 'Van "2"',
      status: 'offline',
      lastSeen: null,
      lastLocation: last,
    });
    t.is(a['phone-2'].lastLocation.latitude, 40.4168);
    t.deepEqual(a['old-3'], { deviceId: 'old-3', name: 'Old 3', status: 'expired', lastLocation: null });
    t.like(a['quiet-4'], { status: 'offline', lastSeen: null, lastLocation: null });

    // a newer location, and a device renamed, show in the next answer (nothing remembered is stale)
    const newer = { ...location, dateTime: '2026-03-01T11:00:00Z', latitude: 41.5 };
    t.is(
      (await s.request('POST', '/api/devices/phone-2/locations', { token: admin, body: { location: newer } })).status,
      201,
    );
    t.is((await s.request('PUT', '/api/devices/quiet-4', { token: admin, body: { name: 'Renamed 4' } })).status, 200);
    const after = byId((await fleet(s, admin)).body);
    t.is(after['phone-2'].lastLocation.latitude, 41.5);
    t.is(after['phone-2'].lastLocation.dateTime, '2026-03-01T11:00:00.000Z');
    t.is(after['quiet-4'].name, 'Renamed 4');

    // disconnected: offline, last seen when it was heard
    tracker.end();
    await until('tracker disconnected', async () => byId((await fleet(s, admin)).body)[imei].status === 'offline');
    const seen = byId((await fleet(s, admin)).body)[imei];
    t.is(seen.transport, undefined);
    t.regex(seen.lastSeen, /^\d{4}-\d\d-\d\dT.*Z$/);
    t.true(Math.abs(Date.parse(seen.lastSeen) - Date.now()) < 600_000);

    // groups: the filter, and a group-restricted user
    const group = (
      await s.request('POST', '/api/groups', { token: admin, body: { name: 'G', devices: ['phone-2', 'quiet-4'] } })
    ).body.id as string;
    const other = (await s.request('POST', '/api/groups', { token: admin, body: { name: 'H', devices: [imei] } })).body
      .id as string;
    const inGroup = await fleet(s, admin, `?groupId=${group}`);
    t.deepEqual(
      inGroup.body.lastLocations.map((e: { deviceId: string }) => e.deviceId),
      ['phone-2', 'quiet-4'],
    );
    const restricted = await user(s, 'r@example.com', { privileges: ['read'], group });
    t.deepEqual(
      (await fleet(s, restricted)).body.lastLocations.map((e: { deviceId: string }) => e.deviceId),
      ['phone-2', 'quiet-4'],
      "a group-restricted user sees its group's devices",
    );
    t.is((await fleet(s, restricted, `?groupId=${group}`)).status, 200);
    const outside = await fleet(s, restricted, `?groupId=${other}`);
    t.is(outside.status, 404);
    t.is(outside.body.code, 'GROUP_NOT_FOUND');
    t.is((await fleet(s, admin, '?groupId=nope')).body.code, 'GROUP_NOT_FOUND');
    t.is((await fleet(s, admin, `?groupId=${'x'.repeat(65)}`)).status, 400);

    // another account sees none of these, and not this account's groups
    const b = await s.running.services.accounts.create({
      name: 'B',
      licenses: 5,
      adminUser: 'b-admin',
      adminApiKey: 'b-admin-key-0123456789',
    });
    const foreign = await s.token('b-admin', b.apiKey);
    t.deepEqual((await fleet(s, foreign)).body.lastLocations, []);
    t.is((await fleet(s, foreign, `?groupId=${group}`)).status, 404);
    // no token
    t.is((await s.request('GET', '/api/lastLocations')).status, 401);
    const none = await user(s, 'n@example.com', { privileges: [] });
    t.is((await fleet(s, none)).status, 403, 'a user without any privilege');
  });
}

for (const mode of GATEWAY_MODES) {
  test(`api.lastLocations: a tracker's connection ending is offline at once, an MQTT device is online through mqtt [${mode.name}]`, async (t) => {
    const s = await startServer('sqlite', {
      env: { ...mode.env, TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_MQTT_PORT: '0', TRACKGATE_RATE_LIMIT: '0' },
    });
    t.teardown(() => s.stop());
    const admin = s.adminToken;
    const imei = '356307042441014';
    for (const body of [
      { id: imei, name: 'T' },
      { id: 'mq-1', name: 'M', mqttPassword: 'device-secret-1' },
    ])
      t.is((await s.request('POST', '/api/devices', { token: admin, body })).status, 201);
    const tracker = await teltonikaSession(t, s.running.ports.teltonika, imei);
    await untilConnected(s, imei);
    tracker.end();
    await until('the core saw the connection end', () => !s.running.gateway.connectedDevices().includes(imei));
    // no answer saw it connected: the end itself says it is offline (a Teltonika may also send datagrams)
    const entry = byId((await fleet(s, admin)).body)[imei];
    t.is(entry.status, 'offline', JSON.stringify(entry));
    t.truthy(entry.lastSeen);

    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${s.running.ports.mqtt}`, {
      username: 'mq-1',
      password: 'device-secret-1',
      clientId: 'mq-1-client',
      reconnectPeriod: 0,
    });
    t.teardown(() => client.endAsync(true).catch(() => {}));
    await until('mqtt device online', async () => byId((await fleet(s, admin)).body)['mq-1'].status === 'online');
    t.is(byId((await fleet(s, admin)).body)['mq-1'].transport, 'mqtt');
    await client.endAsync(true);
    await until('mqtt device offline', async () => byId((await fleet(s, admin)).body)['mq-1'].status === 'offline');
  });
}
