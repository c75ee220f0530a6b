/**
 * MQTT while PostgreSQL is down (a server of the test's own): a device's QoS 1 publish gets no
 * PUBACK, a login is answered CONNACK 3 (server unavailable), the process stays up, and once the
 * database is back the device's resend is acknowledged and stored with everything acknowledged
 * before the outage.
 */
import test from 'ava';
import mqtt from 'mqtt';
import { startOnOwnPostgres } from '../../helpers/instances.js';
import { PATIENCE_MS } from '../../helpers/wait.js';

const PASSWORD = 'device-password-1';

test('mqtt: a PostgreSQL outage withholds PUBACKs and refuses logins with CONNACK 3; afterwards the resend is stored and nothing acknowledged is lost', async (t) => {
  const { s, pg } = await startOnOwnPostgres(t, { env: { TRACKGATE_MQTT_PORT: '0' } });
  t.is(
    (
      await s.request('POST', '/api/devices', {
        token: s.adminToken,
        body: { id: 'm1', name: 'm1', mqttPassword: PASSWORD },
      })
    ).status,
    201,
  );
  const url = `mqtt://127.0.0.1:${s.running.ports.mqtt}`;
  const location = (i: number) =>
    JSON.stringify({
      dateTime: new Date(Date.UTC(2026, 2, 1, 10, 0, i)).toISOString(),
      latitude: 40 + i / 1000,
      longitude: -3,
    });

  const device = await mqtt.connectAsync(url, {
    clientId: 'm1',
    username: 'm1',
    password: PASSWORD,
    reconnectPeriod: 0,
    connectTimeout: PATIENCE_MS,
  });
  await device.publishAsync('devices/m1/locations', location(0), { qos: 1 });

  await pg.kill();
  let acked = false;
  const during = device.publishAsync('devices/m1/locations', location(1), { qos: 1 }).then(
    () => (acked = true),
    () => {},
  );
  // the refused login is the server's own word that storage is down: by then the publish before it got no PUBACK
  const refused = await mqtt
    .connectAsync(url, {
      clientId: 'm1-2',
      username: 'm1',
      password: PASSWORD,
      reconnectPeriod: 0,
      connectTimeout: PATIENCE_MS,
    })
    .then(
      () => undefined,
      (e: { code?: number }) => e.code,
    );
  t.is(refused, 3, 'a login is answered CONNACK 3 (server unavailable)');
  t.false(acked, 'no PUBACK while the position cannot be stored');
  void during;
  await device.endAsync(true);

  await pg.start();
  // The device resends what got no PUBACK, on a new connection.
  const again = await mqtt.connectAsync(url, {
    clientId: 'm1',
    username: 'm1',
    password: PASSWORD,
    reconnectPeriod: 0,
    connectTimeout: PATIENCE_MS,
  });
  t.teardown(() => again.endAsync(true));
  await again.publishAsync('devices/m1/locations', location(1), { qos: 1 });
  const range = await s.request('POST', '/api/devices/m1/locations', {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
  });
  t.is(range.status, 200);
  t.deepEqual(
    range.body.locations.map((l: { dateTime: string }) => l.dateTime),
    ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z'],
  );
});
