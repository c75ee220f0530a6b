import test from 'ava';
import { startHarness, PASSWORD } from './mqtt-harness.js';

const HOUR = 3600_000;
const location = { dateTime: '2026-03-01T10:00:00Z', latitude: 40.4, longitude: -3.7 };

test('mqtt.input: locations over 25 h ahead, before 2000 or on an impossible date are acknowledged and never stored, over devices/{id}/locations and OwnTracks', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  const publish = async (topic: string, payload: unknown) =>
    t.truthy(await c.publishAsync(topic, JSON.stringify(payload), { qos: 1 }), `PUBACK for ${JSON.stringify(payload)}`);
  await publish('devices/dev1/locations', { ...location, dateTime: '9999-12-31T23:59:59Z' });
  await publish('devices/dev1/locations', { ...location, dateTime: new Date(Date.now() + 26 * HOUR).toISOString() });
  await publish('devices/dev1/locations', [location, { ...location, dateTime: '1999-12-31T00:00:00Z' }]);
  await publish('devices/dev1/locations', { ...location, dateTime: '2026-02-30T10:00:00Z' });
  await publish('devices/dev1/locations', { ...location, dateTime: '2026-03-01T25:00:00Z' });
  await publish('owntracks/dev1/phone', {
    _type: 'location',
    lat: 40.4,
    lon: -3.7,
    tst: Math.floor(Date.UTC(9999, 0, 1) / 1000),
  });
  await publish('owntracks/dev1/phone', {
    _type: 'location',
    lat: 40.4,
    lon: -3.7,
    tst: Math.floor(Date.UTC(1999, 0, 1) / 1000),
  });
  t.true(c.connected, 'the connection stays open');
  t.is((await h.lastLocation('dev1')).status, 404, 'nothing of them was stored');
  t.is(h.gw.stats.rejected, 2, 'the impossible dates are malformed payloads');
  await publish('devices/dev1/locations', {
    ...location,
    dateTime: new Date(Date.now() + 24 * HOUR).toISOString().replace(/\.\d+Z$/, 'Z'),
  });
  t.is((await h.lastLocation('dev1')).status, 200, 'within 25 h ahead is stored');
});

test('mqtt.input: a payload nested deeper than 32 levels or holding NUL is refused as malformed; other devices are not affected', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  await h.device('dev2');
  const c1 = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  const c2 = await h.connect({ username: 'dev2', password: PASSWORD, clientId: 'dev2' });
  const deep = `{"dateTime":"2026-03-01T10:00:00Z","latitude":1,"longitude":2,"attributes":${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}}`;
  const [a, b, c] = await Promise.all([
    c1.publishAsync('devices/dev1/locations', deep, { qos: 1 }),
    c1.publishAsync('devices/dev1/locations', JSON.stringify({ ...location, attributes: { note: 'a\u0000b' } }), {
      qos: 1,
    }),
    c2.publishAsync('devices/dev2/locations', JSON.stringify(location), { qos: 1 }),
  ]);
  t.truthy(a && b && c, 'all acknowledged');
  t.true(c1.connected && c2.connected);
  t.is(h.gw.stats.rejected, 2);
  t.is((await h.lastLocation('dev1')).status, 404);
  t.is((await h.lastLocation('dev2')).body.lastLocation.latitude, 40.4);
});
