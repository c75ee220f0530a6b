import test from 'ava';
import net from 'node:net';
import { MqttClient, type IClientOptions } from 'mqtt';
import { startHarness, PASSWORD, apiUser, type Harness } from './mqtt-harness.js';
import { redisUrl, testRedis, useRedis } from '../../helpers/redis.js';

/** The CONNACK return code of one MQTT.js CONNECT whose socket is bound to `localAddress` (Linux routes all of 127/8 to lo). */
function connackFrom(localAddress: string, port: number, o: IClientOptions): Promise<number | undefined> {
  const client = new MqttClient(() => net.connect({ host: '127.0.0.1', port, localAddress }), {
    reconnectPeriod: 0,
    connectTimeout: 5000,
    protocolVersion: 4,
    ...o,
  });
  return new Promise((resolve) => {
    client.once('connect', () => {
      client.end(true);
      resolve(0);
    });
    client.once('error', (e) => {
      client.end(true);
      resolve((e as { code?: number }).code);
    });
  });
}

const ATTACKER = '127.0.0.2';
const OWNER = '127.0.0.1';

async function lockoutAcrossAddresses(t: import('ava').ExecutionContext, h: Harness): Promise<void> {
  await h.device('lock1');
  const user = await apiUser(h, 'lock-user@example.com');
  const token = await h.s.token(user.userName, user.apiKey);
  // twelve wrong passwords for each from the attacker's address: the tenth and later are CONNACK 5 there
  const codes: (number | undefined)[] = [];
  for (let i = 0; i < 12; i++)
    codes.push(
      await connackFrom(ATTACKER, h.port, { username: 'lock1', password: `wrong-${i}`, clientId: `lock1-${i}` }),
    );
  t.deepEqual(
    codes,
    [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5],
    'ten refused as wrong, then the identity is held off from that address',
  );
  for (let i = 0; i < 12; i++)
    await connackFrom(ATTACKER, h.port, {
      username: user.userName,
      password: `tg_wrong-${i}`,
      clientId: `${user.userName}-${i}`,
    });
  t.is(
    await connackFrom(ATTACKER, h.port, { username: 'lock1', password: PASSWORD, clientId: 'lock1' }),
    5,
    "the right password from the attacker's address waits too",
  );
  // the real device and the user, from their own address, are not locked out
  t.is(await connackFrom(OWNER, h.port, { username: 'lock1', password: PASSWORD, clientId: 'lock1' }), 0);
  t.is(
    await connackFrom(OWNER, h.port, { username: user.userName, password: token, clientId: `${user.userName}-t` }),
    0,
  );
  t.is(
    await connackFrom(OWNER, h.port, {
      username: user.userName,
      password: user.apiKey,
      clientId: `${user.userName}-k`,
    }),
    0,
  );
  // a valid token cannot be guessed: it is let in even from the address that failed for its name
  t.is(
    await connackFrom(ATTACKER, h.port, { username: user.userName, password: token, clientId: `${user.userName}-t2` }),
    0,
  );
}

async function sprayIsLimited(t: import('ava').ExecutionContext, h: Harness): Promise<void> {
  await h.device('spray-victim');
  // one wrong password for each of many identities from one address: the address is held off
  const codes: (number | undefined)[] = [];
  for (let i = 0; i < 105; i++)
    codes.push(
      await connackFrom(ATTACKER, h.port, { username: `spray${i}`, password: 'guess', clientId: `spray${i}` }),
    );
  t.deepEqual(codes.slice(0, 100), Array(100).fill(4), 'a hundred different identities are checked');
  t.deepEqual(codes.slice(100), Array(5).fill(5), 'then the address is held off');
  t.is(
    await connackFrom(ATTACKER, h.port, { username: 'spray-victim', password: PASSWORD, clientId: 'spray-victim' }),
    5,
  );
  // another address is not
  t.is(await connackFrom(OWNER, h.port, { username: 'spray-victim', password: PASSWORD, clientId: 'spray-victim' }), 0);
}

test('mqtt.auth limits: wrong passwords from one address hold the identity off from that address only, not the device or its user elsewhere', async (t) => {
  await lockoutAcrossAddresses(t, await startHarness(t));
});

test('mqtt.auth limits: an address that tries many identities is held off', async (t) => {
  await sprayIsLimited(t, await startHarness(t));
});

test('mqtt.auth limits (Redis): failures are counted in Redis, so every instance holds the same address and identity off', async (t) => {
  if (!(await useRedis('mqtt.auth limits (Redis)'))) return t.pass();
  const redis = testRedis();
  t.teardown(() => redis.cleanup());
  const env = { TRACKGATE_REDIS_URL: redisUrl, TRACKGATE_REDIS_PREFIX: redis.prefix };
  const [a, b] = [await startHarness(t, {}, env), await startHarness(t, {}, env)];
  for (const h of [a, b]) await h.device('shared1');
  for (let i = 0; i < 10; i++)
    t.is(await connackFrom(ATTACKER, a.port, { username: 'shared1', password: `wrong-${i}`, clientId: 'shared1' }), 4);
  t.is(
    await connackFrom(ATTACKER, b.port, { username: 'shared1', password: PASSWORD, clientId: 'shared1' }),
    5,
    'the other instance holds the identity off from that address',
  );
  t.is(
    await connackFrom(OWNER, b.port, { username: 'shared1', password: PASSWORD, clientId: 'shared1' }),
    0,
    'and not from another',
  );
  // a spray split over both instances is held off on both past the address's limit
  const sprayer = '127.0.0.3';
  for (let i = 0; i < 100; i++)
    t.is(
      await connackFrom(sprayer, (i % 2 ? a : b).port, {
        username: `spray${i}`,
        password: 'guess',
        clientId: `spray${i}`,
      }),
      4,
    );
  t.is(await connackFrom(sprayer, a.port, { username: 'shared1', password: PASSWORD, clientId: 'shared1' }), 5);
  t.is(await connackFrom(sprayer, b.port, { username: 'shared1', password: PASSWORD, clientId: 'shared1' }), 5);
});
