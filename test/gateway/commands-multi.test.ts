import test from 'ava';
import mqtt from 'mqtt';
import { ManualClock } from '../../core/clock.js';
import { postgresAvailable } from '../helpers/backends.js';
import { startPair } from '../helpers/instances.js';
import { createDevice, startServer, type TestServer } from '../helpers/server.js';
import { TrackerClient, readTeltonikaCommand, teltonikaSession } from '../helpers/tracker-client.js';
import { until } from '../helpers/wait.js';
import * as F from '../helpers/frames.js';

const IMEI = '356307042441013';
// sendCommand waits for the answer as long as configuration allows: a busy machine may take seconds to answer
const COMMAND_WAIT_S = 120;
const ENV = { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_COMMAND_WAIT: String(COMMAND_WAIT_S) };

/** The device's connection is recorded (off the login's acknowledgement path): instances then know it is online. */
async function connectionRecorded(s: TestServer, id = IMEI): Promise<void> {
  await until(
    'the connection recorded',
    async () =>
      (await s.request('GET', `/api/devices/${id}`, { token: s.adminToken })).body.device.lastConnection !== null,
  );
}

const send = (s: TestServer, body: Record<string, unknown>, id = IMEI) =>
  s.request('POST', `/api/devices/${id}/sendCommand`, { token: s.adminToken, body });

/** A sends, the device is on B: delivered, answered on B, and A's POST answers with the reply. */
async function acrossInstances(t: import('ava').ExecutionContext, a: TestServer, b: TestServer): Promise<void> {
  await createDevice(a, IMEI);
  const c = await teltonikaSession(t, b.running.ports.teltonika, IMEI);
  await connectionRecorded(a);
  const pending = send(a, { command: 'getinfo' });
  t.is(await readTeltonikaCommand(c), 'getinfo');
  c.write(F.teltonikaAnswer('RTC:2026/3/1 10:00 UpTime:3600s'));
  const r = await pending;
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.result, 'RTC:2026/3/1 10:00 UpTime:3600s');
  t.like(r.body.command, { status: 'answered', attempts: 1 });
  const listed = await a.request('GET', `/api/devices/${IMEI}/commands`, { token: a.adminToken });
  t.like(listed.body.commands[0], { status: 'answered', result: 'RTC:2026/3/1 10:00 UpTime:3600s' });
}

if (await postgresAvailable()) {
  test('gateway.commands: a command sent to instance A reaches the Teltonika connected to B at once through Redis, and A answers with its reply', async (t) => {
    const [a, b] = await startPair(t, ENV);
    // B hears of the command from A through Redis (B's upkeep would find it in the database too,
    // within seconds: what tells the two apart is the relayed event, not how soon it came)
    const relayed: string[] = [];
    t.teardown(b.running.services.events.onCommandsQueued((deviceId, remote) => remote && relayed.push(deviceId)));
    await acrossInstances(t, a, b);
    t.true(relayed.includes(IMEI), 'B was told through Redis');
  });

  test('gateway.commands: without Redis, a command sent to instance A reaches the Teltonika connected to B within seconds through the database', async (t) => {
    const a = await startServer('postgres', { env: ENV });
    t.teardown(() => a.stop());
    const b = await startServer('postgres', { env: ENV, storageEnv: a.storageEnv });
    t.teardown(() => b.stop());
    t.teardown(b.running.services.events.onCommandsQueued((_, remote) => remote && t.fail('no relay without Redis')));
    await acrossInstances(t, a, b);
  });

  test('gateway.commands: an API user on instance A sees on live/<id>/commands the status changes made on B, where the device is, each once', async (t) => {
    const [a, b] = await startPair(t, { ...ENV, TRACKGATE_MQTT_PORT: '0' });
    await createDevice(a, IMEI);
    const watcher = await mqtt.connectAsync(`mqtt://127.0.0.1:${a.running.ports.mqtt}`, {
      username: 'admin',
      password: a.adminToken,
      clientId: 'admin-cmd-a',
      reconnectPeriod: 0,
    });
    t.teardown(() => watcher.endAsync(true));
    const seen: { status: string; id: number }[] = [];
    watcher.on('message', (_topic, payload) => seen.push(JSON.parse(payload.toString())));
    await watcher.subscribeAsync(`live/${IMEI}/commands`);
    const c = await teltonikaSession(t, b.running.ports.teltonika, IMEI);
    await connectionRecorded(a);
    const pending = send(a, { command: 'getinfo' });
    t.is(await readTeltonikaCommand(c), 'getinfo');
    c.write(F.teltonikaAnswer('RTC ok'));
    t.is((await pending).body.result, 'RTC ok');
    await until('answered is announced on A', () => seen.some((m) => m.status === 'answered'));
    await new Promise((r) => setTimeout(r, 300));
    t.deepEqual(
      seen.map((m) => m.status),
      ['queued', 'sent', 'answered'],
    );
  });

  test('gateway.commands: a command for a device connected to no instance answers queued at once, also with several instances', async (t) => {
    const [a] = await startPair(t, ENV);
    await createDevice(a, IMEI);
    const started = Date.now();
    const r = await send(a, { command: 'getinfo' });
    t.is(r.status, 200, JSON.stringify(r.body));
    t.is(r.body.command.status, 'queued');
    t.true(Date.now() - started < COMMAND_WAIT_S * 1000, 'a never connected device is not waited for');
  });
}

test('gateway.commands: a queued command whose ttl passed becomes expired in the background, without anyone reading the list', async (t) => {
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
  const s = await startServer('sqlite', { env: ENV, clock });
  t.teardown(() => s.stop());
  await createDevice(s, IMEI);
  const r = await send(s, { command: 'setdigout 1', ttl: 60 });
  t.is(r.body.command.status, 'queued');
  const status = async () => (await s.running.db('commands').where({ id: r.body.command.id }).first()).status as string;
  // the background upkeep has run (twice: one may have begun before the send) and left it queued
  const commands = s.running.services.commands;
  const upkeep = commands.upkeep.bind(commands);
  let upkeeps = 0;
  commands.upkeep = (...args) => upkeep(...args).finally(() => upkeeps++);
  await until('the upkeep ran twice', () => upkeeps >= 2);
  t.is(await status(), 'queued', 'not before its ttl');
  clock.advance(61_000);
  await until('the command expired', async () => (await status()) === 'expired');
  // and the device connecting afterwards never gets it
  const c = await TrackerClient.connect(s.running.ports.teltonika);
  t.teardown(() => c.end());
  c.write(F.teltonikaLogin(IMEI));
  t.is((await c.read(1))[0], 1);
  await t.throwsAsync(() => c.read(8, 2500));
});
