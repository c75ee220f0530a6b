import test from 'ava';
import type { MqttClient } from 'mqtt';
import type { Logger } from '../../../core/logger.js';
import { startHarness, connackCode, closed, sleep, PASSWORD } from './mqtt-harness.js';

test("mqtt.auth: another account's user named like a device cannot hold it out of <deviceId>-1, and a device with a shorter id cannot take it", async (t) => {
  const h = await startHarness(t);
  const url = `mqtt://127.0.0.1:${h.port}`;
  await h.device('356307042441013');
  // another account, whose admin user is named like the device and which has a device with a shorter id
  const other = await h.s.running.services.accounts.create({
    name: 'Other',
    licenses: 5,
    adminUser: '356307042441013',
    adminApiKey: 'other-admin-key-0123456789',
  });
  const otherToken = await h.s.token('356307042441013', other.apiKey);
  t.is(
    (
      await h.s.request('POST', '/api/devices', {
        token: otherToken,
        body: { id: '3563070424410', name: 'short', mqttPassword: PASSWORD },
      })
    ).status,
    201,
  );

  // the user takes the client id first (its name begins it too) ...
  const squatter = await h.connect({
    username: '356307042441013',
    password: other.apiKey,
    clientId: '356307042441013-1',
  });
  const kicked = closed(squatter);
  // ... the device still gets in, and the user's connection is closed
  const device = await h.connect({ username: '356307042441013', password: PASSWORD, clientId: '356307042441013-1' });
  await kicked;
  t.true(device.connected);
  t.is(
    await connackCode(url, { username: '356307042441013', password: other.apiKey, clientId: '356307042441013-1' }),
    2,
  );
  // a device whose id is shorter may not use the longer device's client ids at all, but keeps its own
  t.is(await connackCode(url, { username: '3563070424410', password: PASSWORD, clientId: '356307042441013-2' }), 2);
  t.is(await connackCode(url, { username: '3563070424410', password: PASSWORD, clientId: '3563070424410-1' }), 0);
});

test('mqtt.auth: a client id is held only while its connection lasts; the device it belongs to takes it over', async (t) => {
  const h = await startHarness(t);
  const url = `mqtt://127.0.0.1:${h.port}`;
  await h.device('12');
  // before device 123 exists, device 12 may use 123-x (it starts with "12")
  const early = await h.connect({ username: '12', password: PASSWORD, clientId: '123-x' });
  await h.device('123');
  // now 123-x is device 123's: it takes it over from the connection that holds it
  const gone = closed(early);
  const owner = await h.connect({ username: '123', password: PASSWORD, clientId: '123-x' });
  await gone;
  t.true(owner.connected);
  t.is(await connackCode(url, { username: '12', password: PASSWORD, clientId: '123-x' }), 2);

  // a user named "12x" holds 12x-1 while connected: device 12 may not take it then, and may once it ends
  const user = await h.s.running.services.accounts.create({
    name: 'U',
    licenses: 1,
    adminUser: '12x',
    adminApiKey: 'user-12x-key-0123456789ab',
  });
  const held: MqttClient = await h.connect({ username: '12x', password: user.apiKey, clientId: '12x-1' });
  t.is(await connackCode(url, { username: '12', password: PASSWORD, clientId: '12x-1' }), 2);
  await held.endAsync();
  await sleep(100);
  t.is(await connackCode(url, { username: '12', password: PASSWORD, clientId: '12x-1' }), 0);
});

test('mqtt.auth: a device without an MQTT password is refused with CONNACK 4, logged as "no MQTT password set" with its id', async (t) => {
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const capture = (level: string) => (obj: object | string, msg?: string) => {
    lines.push(
      typeof obj === 'string' ? { level, obj: {}, msg: obj } : { level, obj: obj as Record<string, unknown>, msg },
    );
  };
  const logger: Logger = {
    info: capture('info'),
    warn: capture('warn'),
    error: capture('error'),
    debug: capture('debug'),
    child: () => logger,
  };
  const h = await startHarness(t, { logger });
  t.is(
    (await h.s.request('POST', '/api/devices', { token: h.s.adminToken, body: { id: 'nopass1', name: 'no password' } }))
      .status,
    201,
  );
  await h.device('withpass1');
  const url = `mqtt://127.0.0.1:${h.port}`;
  t.is(await connackCode(url, { username: 'nopass1', password: 'anything-at-all', clientId: 'nopass1' }), 4);
  t.is(await connackCode(url, { username: 'withpass1', password: 'not-the-password', clientId: 'withpass1' }), 4);
  const refused = lines.filter((l) => l.msg === 'mqtt: connection refused');
  t.like(refused[0], { level: 'info', obj: { deviceId: 'nopass1', reason: 'no MQTT password set', returnCode: 4 } });
  t.like(refused[1], { obj: { deviceId: 'withpass1', reason: 'wrong password', returnCode: 4 } });
});
