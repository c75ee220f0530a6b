import test from 'ava';
import mqtt, { type MqttClient } from 'mqtt';
import { createDevice, startTestServer, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';
import { mosquitto } from './mqtt-harness.js';

const DEVICE = 'van-7';
const PASSWORD = 'device-secret-1';
const ENV = { TRACKGATE_MQTT_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' };
type T = { teardown(fn: () => unknown): void };

async function start(t: T, env: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer(t, { env: { ...ENV, ...env } });
  await createDevice(s, DEVICE, { mqttPassword: PASSWORD });
  return s;
}

/** An MQTT device (MQTT.js) and every command it receives, with the QoS it came with. */
async function mqttDevice(t: T, s: TestServer, o: { clientId?: string; clean?: boolean } = {}) {
  const client: MqttClient = await mqtt.connectAsync(`mqtt://127.0.0.1:${s.running.ports.mqtt}`, {
    username: DEVICE,
    password: PASSWORD,
    clientId: o.clientId ?? `${DEVICE}-${Math.random().toString(16).slice(2)}`,
    clean: o.clean ?? true,
    reconnectPeriod: 0,
  });
  t.teardown(() => client.endAsync(true).catch(() => {}));
  const received: { id: number; command: string; format: string; qos: number }[] = [];
  client.on('message', (topic, payload, packet) => {
    if (topic === `devices/${DEVICE}/commands`) received.push({ ...JSON.parse(payload.toString()), qos: packet.qos });
  });
  return { client, received };
}

const send = (s: TestServer, body: Record<string, unknown>) =>
  s.request('POST', `/api/devices/${DEVICE}/sendCommand`, { token: s.adminToken, body });
const listed = async (s: TestServer) =>
  (await s.request('GET', `/api/devices/${DEVICE}/commands`, { token: s.adminToken })).body.commands as {
    id: number;
    status: string;
    result: string | null;
    attempts: number;
  }[];

test('mqtt.commands: a connected MQTT device gets {id, command, format} at QoS 1 on devices/<id>/commands, and its {id, result} answers sendCommand', async (t) => {
  const s = await start(t);
  const d = await mqttDevice(t, s);
  t.is((await d.client.subscribeAsync(`devices/${DEVICE}/commands`, { qos: 1 }))[0].qos, 1);
  const pending = send(s, { command: 'reboot' });
  await until('the command published to the device', () => d.received.length === 1);
  t.like(d.received[0], { command: 'reboot', format: 'Text', qos: 1 });
  await d.client.publishAsync(
    `devices/${DEVICE}/commandResults`,
    JSON.stringify({ id: d.received[0].id, result: 'rebooting in 5 s' }),
    { qos: 1 },
  );
  const r = await pending;
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.result, 'rebooting in 5 s');
  t.like(r.body.command, { id: d.received[0].id, status: 'answered', attempts: 1 });
  const dev = (await s.request('GET', `/api/devices/${DEVICE}`, { token: s.adminToken })).body.device;
  t.is(dev.protocol, 'mqtt');
});

test('mqtt.commands: queued while the device is offline, delivered in order one at a time once it subscribes; Hex goes as written with its format', async (t) => {
  const s = await start(t);
  const a = await send(s, { command: 'interval 30' });
  const b = await send(s, { command: '01 02 ff', format: 'Hex' });
  t.is(a.body.command.status, 'queued');
  t.is(b.body.command.status, 'queued');
  const d = await mqttDevice(t, s);
  await d.client.subscribeAsync(`devices/${DEVICE}/+`, { qos: 1 });
  await until('the first command', () => d.received.length === 1);
  t.like(d.received[0], { id: a.body.command.id, command: 'interval 30', format: 'Text' });
  await new Promise((r) => setTimeout(r, 300));
  t.is(d.received.length, 1, 'one in flight: the second waits for the first answer');
  await d.client.publishAsync(
    `devices/${DEVICE}/commandResults`,
    JSON.stringify([{ id: a.body.command.id, result: 'OK' }]),
    { qos: 1 },
  );
  await until('the second command', () => d.received.length === 2);
  t.like(d.received[1], { id: b.body.command.id, command: '01 02 ff', format: 'Hex' });
  await d.client.publishAsync(
    `devices/${DEVICE}/commandResults`,
    JSON.stringify({ id: b.body.command.id, result: 'done' }),
    { qos: 1 },
  );
  await until('both answered', async () => (await listed(s)).every((c) => c.status === 'answered'));
  t.deepEqual(
    (await listed(s)).map((c) => c.result),
    ['done', 'OK'],
  );
});

test('mqtt.commands: a device that disconnects before answering gets the command again when it next subscribes; an answer naming no command it was sent goes to the device log', async (t) => {
  const s = await start(t);
  const first = await mqttDevice(t, s);
  await first.client.subscribeAsync(`devices/${DEVICE}/commands`, { qos: 1 });
  const queued = await send(s, { command: 'locate', ttl: 600 });
  await until('delivered', () => first.received.length === 1);
  await first.client.endAsync(true);
  const second = await mqttDevice(t, s);
  await second.client.subscribeAsync(`devices/${DEVICE}/commands`, { qos: 1 });
  await until('delivered again', () => second.received.length === 1);
  t.is(second.received[0].id, queued.body.command.id);
  await second.client.publishAsync(
    `devices/${DEVICE}/commandResults`,
    JSON.stringify({ id: 987654, result: 'from a forgotten command' }),
    { qos: 1 },
  );
  await second.client.publishAsync(
    `devices/${DEVICE}/commandResults`,
    JSON.stringify({ id: queued.body.command.id, result: 'here' }),
    { qos: 1 },
  );
  await until('answered', async () => (await listed(s))[0].status === 'answered');
  t.like((await listed(s))[0], { result: 'here', attempts: 2 });
  const log = (await s.request('GET', `/api/devices/${DEVICE}/log`, { token: s.adminToken })).body.log;
  t.is(log.length, 1);
  t.like(log[0], { type: 'unsolicitedReply', protocol: 'mqtt', text: 'from a forgotten command' });
});

test('mqtt.commands: with mosquitto_sub as the device, a queued command arrives as JSON at QoS 1 once it subscribes; mosquitto_pub answers it', async (t) => {
  const s = await start(t);
  const r = await send(s, { command: 'status' });
  t.is(r.body.command.status, 'queued');
  const out = await mosquitto('mosquitto_sub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(s.running.ports.mqtt),
    '-u',
    DEVICE,
    '-P',
    PASSWORD,
    '-i',
    'van-7-sub',
    '-q',
    '1',
    '-t',
    `devices/${DEVICE}/commands`,
    '-C',
    '1',
    '-v',
    '-W',
    '8',
  ]);
  t.is(out.code, 0, out.stderr);
  const line = out.stdout.trim();
  const space = line.indexOf(' ');
  t.is(line.slice(0, space), `devices/${DEVICE}/commands`);
  t.deepEqual(JSON.parse(line.slice(space + 1)), { id: r.body.command.id, command: 'status', format: 'Text' });
  await until('marked sent', async () => (await listed(s))[0].status === 'sent');
  // mosquitto_sub has gone (-C 1); the technician answers from another client with mosquitto_pub
  const pub = await mosquitto('mosquitto_pub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(s.running.ports.mqtt),
    '-u',
    DEVICE,
    '-P',
    PASSWORD,
    '-i',
    'van-7-pub',
    '-q',
    '1',
    '-t',
    `devices/${DEVICE}/commandResults`,
    '-m',
    JSON.stringify({ id: r.body.command.id, result: 'all good' }),
  ]);
  t.is(pub.code, 0, pub.stderr);
  await until('answered', async () => (await listed(s))[0].status === 'answered');
  t.is(
    (await listed(s))[0].result,
    'all good',
    'an answer naming its command answers it, from whichever client of the device',
  );
  t.deepEqual((await s.request('GET', `/api/devices/${DEVICE}/log`, { token: s.adminToken })).body.log, []);
});

test("mqtt.commands: a device may not subscribe to another device's commands nor publish to its own commands topic; a malformed answer is acknowledged and dropped", async (t) => {
  const s = await start(t);
  const d = await mqttDevice(t, s);
  const refused = await d.client.subscribeAsync('devices/other-device/commands', { qos: 1 }).then(
    (g) => g[0].qos,
    (e: { packet?: { granted?: number[] } }) => e.packet?.granted?.[0],
  );
  t.is(refused, 128);
  t.true(d.client.connected, 'still connected after the refused subscription');
  await d.client.publishAsync(`devices/${DEVICE}/commandResults`, '{"id":"x"}', { qos: 1 });
  t.true(d.client.connected, 'a malformed answer is acked, the connection lives');
  const closedOnFake = new Promise<void>((r) => d.client.once('close', () => r()));
  d.client.publish(`devices/${DEVICE}/commands`, JSON.stringify({ id: 1, command: 'fake', format: 'Text' }), {
    qos: 1,
  });
  await closedOnFake;
  t.pass('publishing to its commands topic closes the connection');
});

test("mqtt.commands: a second client of the device (a technician's watcher) that subscribes and leaves neither sends the command in flight again nor stops the delivery to the first", async (t) => {
  const s = await start(t, { TRACKGATE_COMMAND_WAIT: '120' });
  const device = await mqttDevice(t, s);
  await device.client.subscribeAsync(`devices/${DEVICE}/commands`, { qos: 1 });
  const first = send(s, { command: 'status', ttl: 600 });
  await until('the first command published', () => device.received.length === 1);
  // a watcher with the device's login subscribes while the command waits for its answer
  const watcher = await mqttDevice(t, s);
  await watcher.client.subscribeAsync(`devices/${DEVICE}/commands`, { qos: 1 });
  await new Promise((r) => setTimeout(r, 500));
  t.is(device.received.length, 1, 'the command in flight is not sent again to the device');
  t.is((await listed(s)).find((c) => c.id === device.received[0].id)?.attempts, 1, 'no attempt spent');
  await device.client.publishAsync(
    `devices/${DEVICE}/commandResults`,
    JSON.stringify({ id: device.received[0].id, result: 'ok' }),
    { qos: 1 },
  );
  t.is((await first).body.result, 'ok');
  // the watcher leaves; the device, still subscribed, gets the next command at once
  await watcher.client.endAsync();
  await new Promise((r) => setTimeout(r, 300));
  const second = send(s, { command: 'position', ttl: 600 });
  await until('the second command published to the device', () => device.received.length === 2);
  t.is(device.received[1].command, 'position');
  await device.client.publishAsync(
    `devices/${DEVICE}/commandResults`,
    JSON.stringify({ id: device.received[1].id, result: 'here' }),
    { qos: 1 },
  );
  t.is((await second).body.result, 'here');
});
