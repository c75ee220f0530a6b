import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import type { MqttClient } from 'mqtt';
import { startHarness, connackCode, mosquitto, closed, sleep, PASSWORD } from './mqtt-harness.js';
import { PATIENCE_MS, until as waitUntil } from '../../helpers/wait.js';

const location = {
  dateTime: '2026-03-01T10:00:00Z',
  latitude: 40.4168,
  longitude: -3.7038,
  speed: 42.5,
  course: 90,
  battery: 77,
};

test('mqtt.gateway: a QoS 1 location is acknowledged only once stored, so REST lastLocation returns it right after the PUBACK', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1-tracker' });
  const packet = await c.publishAsync('devices/dev1/locations', JSON.stringify(location), { qos: 1 });
  t.truthy(packet, 'a PUBACK arrived');
  const r = await h.lastLocation('dev1');
  t.is(r.status, 200);
  t.like(r.body.lastLocation, {
    dateTime: '2026-03-01T10:00:00.000Z',
    latitude: 40.4168,
    longitude: -3.7038,
    speed: 42.5,
    course: 90,
    battery: 77,
    protocol: 'mqtt',
  });

  // an array of locations is stored in one message
  await c.publishAsync(
    'devices/dev1/locations',
    JSON.stringify([
      { ...location, dateTime: '2026-03-01T10:01:00Z' },
      { ...location, dateTime: '2026-03-01T10:02:00+02:00' },
    ]),
    { qos: 1 },
  );
  const range = await h.s.request('POST', '/api/devices/dev1/locations', {
    token: h.s.adminToken,
    body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
  });
  t.deepEqual(
    range.body.locations.map((l: { dateTime: string }) => l.dateTime),
    ['2026-03-01T08:02:00.000Z', '2026-03-01T10:00:00.000Z', '2026-03-01T10:01:00.000Z'],
  );
  t.is(h.gw.stats.accepted, 2);
});

test('mqtt.gateway: an alert published to devices/{id}/alerts is stored like a REST alert', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  await c.publishAsync(
    'devices/dev1/alerts',
    JSON.stringify({
      alertName: 'SOSButton',
      dateTime: '2026-03-01T10:00:00Z',
      latitude: 1,
      longitude: 2,
      text: 'help',
    }),
    { qos: 1 },
  );
  const r = await h.s.request('POST', '/api/devices/dev1/alerts', {
    token: h.s.adminToken,
    body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
  });
  t.is(r.body.alerts.length, 1);
  t.like(r.body.alerts[0], { alertName: 'SOSButton', latitude: 1, longitude: 2, text: 'help', alerts: ['SOSButton'] });
});

test('mqtt.gateway: an OwnTracks location from mosquitto_pub (MQTT 3.1, a 60-character client id, retained) is stored unchanged', async (t) => {
  const h = await startHarness(t);
  await h.device('861234567890123');
  const clientId = `861234567890123${'x'.repeat(45)}`;
  const tst = 1772359200; // 2026-03-01T10:00:00Z
  const payload = {
    _type: 'location',
    lat: 52.5200066,
    lon: 13.404954,
    tst,
    acc: 12,
    alt: 34,
    vel: 18,
    cog: 270,
    batt: 64,
    tid: 'ph',
    t: 'u',
    bs: 1,
    conn: 'w',
  };
  const run = await mosquitto('mosquitto_pub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(h.port),
    '-V',
    'mqttv31',
    '-i',
    clientId,
    '-u',
    '861234567890123',
    '-P',
    PASSWORD,
    '-q',
    '1',
    '-r',
    '-t',
    'owntracks/861234567890123/phone',
    '-m',
    JSON.stringify(payload),
  ]);
  t.is(run.code, 0, run.stderr);
  const r = await h.lastLocation('861234567890123');
  t.is(r.status, 200);
  t.like(r.body.lastLocation, {
    dateTime: '2026-03-01T10:00:00.000Z',
    latitude: 52.5200066,
    longitude: 13.404954,
    accuracy: 12,
    altitude: 34,
    speed: 18,
    course: 270,
    battery: 64,
    valid: true,
    protocol: 'owntracks',
    attributes: { batteryLevel: 64, tid: 'ph', trigger: 'u', owntracksDevice: 'phone', batteryStatus: 1, conn: 'w' },
  });

  // other OwnTracks types and sub-topics are accepted and ignored
  for (const [topic, body] of [
    ['owntracks/861234567890123/phone', { _type: 'lwt', tst }],
    ['owntracks/861234567890123/phone/event', { _type: 'transition', event: 'enter', lat: 1, lon: 1, tst: tst + 60 }],
    ['owntracks/861234567890123/phone/info', { _type: 'card', name: 'Jane', face: 'iVBORw0KGgo=' }],
  ] as const) {
    const p = await mosquitto('mosquitto_pub', [
      '-h',
      '127.0.0.1',
      '-p',
      String(h.port),
      '-V',
      'mqttv311',
      '-i',
      `861234567890123-${topic.length}`,
      '-u',
      '861234567890123',
      '-P',
      PASSWORD,
      '-q',
      '1',
      '-t',
      topic,
      '-m',
      JSON.stringify(body),
    ]);
    t.is(p.code, 0, p.stderr);
  }
  t.is(h.gw.stats.ignored, 3);
  t.is((await h.lastLocation('861234567890123')).body.lastLocation.dateTime, '2026-03-01T10:00:00.000Z');

  // nothing was kept as a retained message: a fresh subscriber of its own topic gets nothing
  const sub = await mosquitto('mosquitto_sub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(h.port),
    '-i',
    '861234567890123-sub',
    '-u',
    '861234567890123',
    '-P',
    PASSWORD,
    '-t',
    'owntracks/+/+',
    '-W',
    '1',
    '-v',
  ]);
  t.is(sub.stdout, '');
});

test('mqtt.gateway: OwnTracks Queclink triggers become alerts (! tow, 9 low battery, e power cut)', async (t) => {
  const h = await startHarness(t);
  await h.device('q1');
  const c = await h.connect({ username: 'q1', password: PASSWORD, clientId: 'q1', protocolVersion: 3 });
  const tst = 1772359200;
  await c.publishAsync('owntracks/q1/car', JSON.stringify({ _type: 'location', lat: 1, lon: 2, tst, t: '!' }), {
    qos: 1,
  });
  await c.publishAsync(
    'owntracks/q1/car',
    JSON.stringify({ _type: 'location', lat: 1, lon: 2, tst: tst + 1, t: '9' }),
    { qos: 1 },
  );
  await c.publishAsync(
    'owntracks/q1/car',
    JSON.stringify({ _type: 'location', lat: 1, lon: 2, tst: tst + 2, t: 'e' }),
    { qos: 1 },
  );
  const r = await h.s.request('POST', '/api/devices/q1/alerts', {
    token: h.s.adminToken,
    body: { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' },
  });
  t.deepEqual(
    r.body.alerts.map((a: { alertName: string }) => a.alertName),
    ['Tow', 'LowBattery', 'PowerCut'],
  );
});

test("mqtt.gateway: a device publishing to another device's topic is refused: the connection closes and nothing is stored", async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  await h.device('dev2');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1-a' });
  const gone = closed(c);
  c.publish('devices/dev2/locations', JSON.stringify(location), { qos: 1 });
  await gone;
  t.is((await h.lastLocation('dev2')).status, 404);

  const other = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1-b' });
  const gone2 = closed(other);
  other.publish('owntracks/dev2/phone', JSON.stringify({ _type: 'location', lat: 1, lon: 1, tst: 1772359200 }), {
    qos: 0,
  });
  await gone2;
  t.is((await h.lastLocation('dev2')).status, 404);

  // mosquitto_pub sees the refusal too (no PUBACK before the connection closes)
  const run = await mosquitto('mosquitto_pub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(h.port),
    '-i',
    'dev1-c',
    '-u',
    'dev1',
    '-P',
    PASSWORD,
    '-q',
    '1',
    '-t',
    'devices/dev2/alerts',
    '-m',
    '{"alertName":"SOSButton"}',
  ]);
  t.not(run.code, 0);
  t.is(h.gw.stats.refused, 3);
  t.is(h.gw.stats.accepted, 0);
});

test('mqtt.gateway: wrong password and unknown device get CONNACK 4, an expired device 5, a foreign client id 2, MQTT 5 gets 1', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  await h.device('old1', { expires: '2020-01-01T00:00:00Z' });
  const url = `mqtt://127.0.0.1:${h.port}`;
  t.is(await connackCode(url, { username: 'dev1', password: 'wrong-password', clientId: 'dev1' }), 4);
  t.is(await connackCode(url, { username: 'nobody', password: PASSWORD, clientId: 'nobody' }), 4);
  t.is(await connackCode(url, { clientId: 'dev1' }), 4);
  t.is(await connackCode(url, { username: 'old1', password: PASSWORD, clientId: 'old1' }), 5);
  t.is(await connackCode(url, { username: 'dev1', password: PASSWORD, clientId: 'dev2-session' }), 2);
  t.is(await connackCode(url, { username: 'dev1', password: PASSWORD, clientId: 'dev1', protocolVersion: 5 }), 1);
  t.is(await connackCode(url, { username: 'dev1', password: PASSWORD, clientId: 'dev1' }), 0);
  // an empty client id (clean session) is assigned one that starts with the user name
  t.is(await connackCode(url, { username: 'dev1', password: PASSWORD, clientId: '', clean: true }), 0);
  // "dev12-x" starts with "dev1" but belongs to device "dev12", the longer id that begins it
  await h.device('dev12');
  t.is(await connackCode(url, { username: 'dev1', password: PASSWORD, clientId: 'dev12-x' }), 2);
  t.is(await connackCode(url, { username: 'dev12', password: PASSWORD, clientId: 'dev12-x' }), 0);
  t.is(await connackCode(url, { username: 'dev1', password: PASSWORD, clientId: 'dev1-x' }), 0);

  const v5 = await mosquitto('mosquitto_pub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(h.port),
    '-V',
    'mqttv5',
    '-i',
    'dev1',
    '-u',
    'dev1',
    '-P',
    PASSWORD,
    '-t',
    'devices/dev1/locations',
    '-m',
    '{}',
  ]);
  t.not(v5.code, 0);
  t.regex(v5.stderr, /protocol version/i);
  const bad = await mosquitto('mosquitto_pub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(h.port),
    '-V',
    'mqttv311',
    '-i',
    'dev1',
    '-u',
    'dev1',
    '-P',
    'nope-nope',
    '-t',
    'devices/dev1/locations',
    '-m',
    '{}',
  ]);
  t.not(bad.code, 0);
  t.regex(bad.stderr, /bad user name or password/i);
});

test('mqtt.gateway: malformed JSON and invalid fields are acknowledged, not stored, and counted as rejected', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  t.truthy(await c.publishAsync('devices/dev1/locations', '{"dateTime": "2026-03-01T10:00:00Z", latitude', { qos: 1 }));
  t.truthy(await c.publishAsync('devices/dev1/locations', JSON.stringify({ ...location, latitude: 91 }), { qos: 1 }));
  t.truthy(
    await c.publishAsync('devices/dev1/locations', JSON.stringify({ ...location, dateTime: '2026-03-01 10:00' }), {
      qos: 1,
    }),
  );
  t.truthy(await c.publishAsync('devices/dev1/alerts', JSON.stringify({ text: 'no alertName' }), { qos: 1 }));
  t.truthy(
    await c.publishAsync('owntracks/dev1/phone', JSON.stringify({ _type: 'location', lat: 'x', lon: 1, tst: 1 }), {
      qos: 1,
    }),
  );
  t.true(c.connected, 'the connection stays open');
  t.is(h.gw.stats.rejected, 5);
  t.is(h.gw.stats.accepted, 0);
  t.is((await h.lastLocation('dev1')).status, 404);
});

test("mqtt.gateway: the live feed delivers an account's locations and alerts to its users, never to another account or a user of another group", async (t) => {
  const h = await startHarness(t);
  const { s } = h;
  await h.device('dev1');
  await h.device('dev2');
  const groupA = (
    await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'A', devices: ['dev1'] } })
  ).body.id as string;
  const groupB = (
    await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'B', devices: ['dev2'] } })
  ).body.id as string;
  const mkUser = async (email: string, group?: string) => {
    const r = await s.request('POST', '/api/users', {
      token: s.adminToken,
      body: { name: email, email, country: 'ES', timeZone: 'UTC', privileges: ['read'], group },
    });
    t.is(r.status, 201, JSON.stringify(r.body));
    return { userName: r.body.userName as string, apiKey: r.body.apiKey as string };
  };
  const reader = await mkUser('reader@example.com');
  const inA = await mkUser('a@example.com', groupA);
  const inB = await mkUser('b@example.com', groupB);
  const foreign = await s.running.services.accounts.create({
    name: 'Other',
    licenses: 5,
    adminUser: 'other-admin',
    adminApiKey: 'other-admin-key-0123456789',
  });

  const received = new Map<string, { topic: string; body: any }[]>();
  const watch = async (name: string, username: string, password: string, filter: string) => {
    const c = await h.connect({ username, password, clientId: `${username}-${name}` });
    const granted = await c.subscribeAsync(filter, { qos: 0 });
    t.is(granted[0].qos, 0, `${name} may subscribe to ${filter}`);
    received.set(name, []);
    c.on('message', (topic, payload) => received.get(name)!.push({ topic, body: JSON.parse(payload.toString()) }));
    return c;
  };
  await watch('reader', reader.userName, reader.apiKey, 'live/#');
  await watch('readerToken', reader.userName, await s.token(reader.userName, reader.apiKey), 'live/+/locations');
  await watch('inA', inA.userName, inA.apiKey, 'live/+/+');
  await watch('inB', inB.userName, inB.apiKey, 'live/#');
  await watch('foreign', 'other-admin', foreign.apiKey, 'live/#');
  await watch('foreignExact', 'other-admin', foreign.apiKey, 'live/dev1/locations');

  const device = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  await device.publishAsync('devices/dev1/locations', JSON.stringify(location), { qos: 1 });
  await device.publishAsync(
    'devices/dev1/alerts',
    JSON.stringify({ alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05Z' }),
    { qos: 1 },
  );
  // any source: a location stored through REST reaches the feed too
  await s.request('POST', '/api/devices/dev1/locations', {
    token: s.adminToken,
    body: { location: { ...location, dateTime: '2026-03-01T10:00:10Z' } },
  });

  const until = Date.now() + PATIENCE_MS;
  while (
    Date.now() < until &&
    ((received.get('reader')?.length ?? 0) < 3 ||
      (received.get('inA')?.length ?? 0) < 3 ||
      (received.get('readerToken')?.length ?? 0) < 2)
  )
    await sleep(20);
  await sleep(300);

  const reader1 = received.get('reader')!;
  t.deepEqual(
    reader1.map((m) => m.topic),
    ['live/dev1/locations', 'live/dev1/alerts', 'live/dev1/locations'],
  );
  t.like(reader1[0].body, {
    dateTime: '2026-03-01T10:00:00.000Z',
    latitude: 40.4168,
    longitude: -3.7038,
    speed: 42.5,
    protocol: 'mqtt',
  });
  t.like(reader1[1].body, { alertName: 'SOSButton', dateTime: '2026-03-01T10:00:05.000Z' });
  t.like(reader1[2].body, { dateTime: '2026-03-01T10:00:10.000Z', protocol: 'rest' });
  t.deepEqual(
    received.get('readerToken')!.map((m) => m.topic),
    ['live/dev1/locations', 'live/dev1/locations'],
  );
  t.is(received.get('inA')!.length, 3);
  t.deepEqual(received.get('inB'), [], 'a user of another group receives nothing of dev1');
  t.deepEqual(received.get('foreign'), [], 'another account receives nothing, whatever the wildcard');
  t.deepEqual(received.get('foreignExact'), []);
});

test("mqtt.gateway: devices may not subscribe to live/ nor to other devices; OwnTracks' owntracks/+/+ is narrowed to its own topics", async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  await h.device('dev2');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1', protocolVersion: 3 });
  // MQTT.js rejects a SUBACK holding a refusal; the packet tells what was granted
  const suback = await c
    .subscribeAsync(['live/#', 'devices/dev2/#', '#', '$SYS/#', 'owntracks/+/+', 'owntracks/+/+/cmd'], { qos: 1 })
    .then(
      () => undefined,
      (e: { packet?: { granted: number[] } }) => e.packet,
    );
  t.deepEqual(suback?.granted, [128, 128, 128, 128, 1, 1]);
  const got: string[] = [];
  c.on('message', (topic) => got.push(topic));

  const other = await h.connect({ username: 'dev2', password: PASSWORD, clientId: 'dev2' });
  await other.publishAsync(
    'owntracks/dev2/phone',
    JSON.stringify({ _type: 'location', lat: 1, lon: 1, tst: 1772359200 }),
    { qos: 1 },
  );
  const second = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1-second' });
  await second.publishAsync(
    'owntracks/dev1/phone',
    JSON.stringify({ _type: 'location', lat: 1, lon: 1, tst: 1772359200 }),
    { qos: 1 },
  );
  // dev2's was acknowledged first: were it sent to dev1 at all, it would have come before dev1's own
  await waitUntil('its own topic delivered', () => got.length >= 1);
  t.deepEqual(got, ['owntracks/dev1/phone'], 'its own topic only');

  // an API user may not publish, not even to the live feed: the publish is refused, which closes the connection
  const user = await h.connect({ username: 'admin', password: h.s.adminToken, clientId: 'admin-1' });
  const refusedBefore = h.gw.stats.refused;
  const gone = closed(user);
  user.publish('live/dev1/locations', JSON.stringify(location));
  await gone;
  t.is(h.gw.stats.refused, refusedBefore + 1, 'closed as a refused publish');
});

test('mqtt.gateway: when storage fails the publish is not acknowledged and the connection closes', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  await c.publishAsync('devices/dev1/locations', JSON.stringify(location), { qos: 1 });
  await h.s.running.db.schema.renameTable('locations', 'locations_away');
  let acked = false;
  const gone = closed(c);
  c.publish(
    'devices/dev1/locations',
    JSON.stringify({ ...location, dateTime: '2026-03-01T10:05:00Z' }),
    { qos: 1 },
    (err) => {
      if (!err) acked = true;
    },
  );
  await gone;
  t.false(acked);
  t.is(h.gw.stats.failed, 1);
  await h.s.running.db.schema.renameTable('locations_away', 'locations');
});

test('mqtt.gateway: a client flooding publishes is throttled, then disconnected, while another client goes on', async (t) => {
  const h = await startHarness(t, { publishRate: { perSecond: 20, burst: 10, maxDelaySeconds: 1 } });
  await h.device('dev1');
  await h.device('dev2');
  const flood = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  const calm = await h.connect({ username: 'dev2', password: PASSWORD, clientId: 'dev2' });
  const gone = closed(flood);
  for (let i = 0; i < 200; i++)
    flood.publish(
      'devices/dev1/locations',
      JSON.stringify({ ...location, dateTime: new Date(Date.UTC(2026, 2, 1, 10, 0, i)).toISOString() }),
      { qos: 0 },
    );
  const started = Date.now();
  await calm.publishAsync('devices/dev2/locations', JSON.stringify(location), { qos: 1 });
  // held up behind the flood it would wait for the 190 throttled publishes at 20 a second (9.5 s)
  t.true(Date.now() - started < 5000, 'the other client is not held up');
  await gone;
  t.true(h.gw.stats.refused >= 1);
});

test('mqtt.gateway: MQTT over WebSocket connects and publishes', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  const c = await h.connect({
    url: `ws://127.0.0.1:${h.gw.ports['mqtt/ws']}/mqtt`,
    username: 'dev1',
    password: PASSWORD,
    clientId: 'dev1-ws',
  });
  await c.publishAsync('devices/dev1/locations', JSON.stringify(location), { qos: 1 });
  t.is((await h.lastLocation('dev1')).body.lastLocation.latitude, 40.4168);
});

test('mqtt.gateway: MQTT over TLS with a self-signed certificate', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'trackgate-mqtt-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const tlsCert = path.join(dir, 'cert.pem');
  const tlsKey = path.join(dir, 'key.pem');
  writeFileSync(tlsCert, pems.cert);
  writeFileSync(tlsKey, pems.private);
  const h = await startHarness(t, { tlsPort: 0, tlsCert, tlsKey, wsPort: 'off' });
  t.deepEqual(Object.keys(h.gw.ports).sort(), ['mqtt', 'mqtt/tls']);
  await h.device('dev1');
  const c: MqttClient = await h.connect({
    url: `mqtts://127.0.0.1:${h.gw.ports['mqtt/tls']}`,
    ca: pems.cert,
    username: 'dev1',
    password: PASSWORD,
    clientId: 'dev1-tls',
  });
  await c.publishAsync('devices/dev1/locations', JSON.stringify(location), { qos: 1 });
  t.is((await h.lastLocation('dev1')).body.lastLocation.longitude, -3.7038);

  const run = await mosquitto('mosquitto_pub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(h.gw.ports['mqtt/tls']),
    '--cafile',
    tlsCert,
    '-i',
    'dev1-mosq',
    '-u',
    'dev1',
    '-P',
    PASSWORD,
    '-q',
    '1',
    '-t',
    'devices/dev1/locations',
    '-m',
    JSON.stringify({ ...location, dateTime: '2026-03-01T11:00:00Z' }),
  ]);
  t.is(run.code, 0, run.stderr);
  t.is((await h.lastLocation('dev1')).body.lastLocation.dateTime, '2026-03-01T11:00:00.000Z');
});

test("mqtt.gateway: wills go through the same rules: OwnTracks lwt is ignored, a will on another device's topic is not published", async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  await h.device('dev2');
  const watcher = await h.connect({ username: 'dev2', password: PASSWORD, clientId: 'dev2-watch' });
  await watcher.subscribeAsync('devices/dev2/#', { qos: 0 });
  const seen: string[] = [];
  watcher.on('message', (topic) => seen.push(topic));

  const phone = await h.connect({
    username: 'dev1',
    password: PASSWORD,
    clientId: 'dev1-phone',
    protocolVersion: 3,
    will: { topic: 'owntracks/dev1/phone', payload: Buffer.from('{"_type":"lwt"}'), qos: 0, retain: false },
  });
  const intruder = await h.connect({
    username: 'dev1',
    password: PASSWORD,
    clientId: 'dev1-intruder',
    will: { topic: 'devices/dev2/locations', payload: Buffer.from(JSON.stringify(location)), qos: 1, retain: true },
  });
  const tracker = await h.connect({
    username: 'dev1',
    password: PASSWORD,
    clientId: 'dev1-tracker',
    will: { topic: 'devices/dev1/locations', payload: Buffer.from(JSON.stringify(location)), qos: 1, retain: false },
  });
  for (const c of [phone, intruder, tracker]) c.stream.destroy(); // no DISCONNECT: the will fires
  const until = Date.now() + PATIENCE_MS;
  while (Date.now() < until && h.gw.stats.ignored + h.gw.stats.refused + h.gw.stats.accepted < 3) await sleep(20);
  t.is(h.gw.stats.ignored, 1);
  t.is(h.gw.stats.refused, 1);
  t.is(h.gw.stats.accepted, 1);
  t.is((await h.lastLocation('dev1')).body.lastLocation.latitude, 40.4168);
  t.is((await h.lastLocation('dev2')).status, 404);
  await sleep(100);
  t.deepEqual(seen, []);
});

test('mqtt.gateway: an API user whose key is replaced loses its connection, and the old key is refused with CONNACK 4', async (t) => {
  const h = await startHarness(t, { recheckUsersMs: 100 });
  const r = await h.s.request('POST', '/api/users', {
    token: h.s.adminToken,
    body: { name: 'W', email: 'w@example.com', country: 'ES', timeZone: 'UTC', privileges: ['read'] },
  });
  const userName = r.body.userName as string;
  const c = await h.connect({ username: userName, password: r.body.apiKey, clientId: `${userName}-1` });
  await c.subscribeAsync('live/#');
  const gone = closed(c);
  const rekeyed = await h.s.request('POST', `/api/users/${r.body.id}/apiKey`, { token: h.s.adminToken });
  t.is(rekeyed.status, 200);
  await gone;
  const url = `mqtt://127.0.0.1:${h.port}`;
  t.is(await connackCode(url, { username: userName, password: r.body.apiKey, clientId: `${userName}-2` }), 4);
  t.is(await connackCode(url, { username: userName, password: rekeyed.body.apiKey, clientId: `${userName}-3` }), 0);
});
