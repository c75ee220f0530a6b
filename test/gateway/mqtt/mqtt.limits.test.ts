import test from 'ava';
import WebSocket from 'ws';
import { loadConfig, ConfigError } from '../../../config/config.js';
import { PassThrough } from 'node:stream';
import { PacketSizeMeter, PacketTooLarge, guardPacketSize } from '../../../gateway/mqtt/packet-size.guard.js';
import { startHarness, closed, PASSWORD } from './mqtt-harness.js';
import { rawConnect, socketClosed } from './raw-mqtt.js';
import { PATIENCE_MS } from '../../helpers/wait.js';
import {
  CONNACK_TYPE,
  connectPacket,
  publishQos1Packet,
  pubackPacket,
  remainingLength,
} from '../../helpers/mqtt-packets.js';

const MiB = 1024 * 1024;
/** a CONNECT fixed header declaring the largest Remaining Length MQTT allows (268,435,455 bytes) */
const hugeConnectHeader = Buffer.concat([Buffer.from([0x10]), remainingLength(268_435_455)]);
const offHeap = (): number => process.memoryUsage().arrayBuffers;

test('packet-size.guard: the meter follows packets across chunks and stops at the first one over the limit', (t) => {
  const meter = new PacketSizeMeter(100);
  // PINGREQ (no body), then a PUBLISH of 98 bytes in all, split inside its length and its body
  t.is(meter.push(Buffer.from([0xc0, 0x00, 0x30])), 0);
  t.is(meter.push(Buffer.from([96, 1, 2])), 0);
  t.is(meter.push(Buffer.alloc(94)), 0);
  // the next packet declares 200 bytes over two length bytes: refused at the first byte that passes 100
  t.is(meter.push(Buffer.from([0x30, 0xc8])), 0);
  t.is(meter.push(Buffer.from([0x01])), 1 + 2 + 200);
  // a fifth length byte is malformed
  t.true(new PacketSizeMeter(1e9).push(Buffer.from([0x10, 0x80, 0x80, 0x80, 0x80, 0x01])) > 1e9);
});

test('packet-size.guard: guards the stream in place: what is read passes unchanged until a packet over the limit, which destroys the stream unread', async (t) => {
  const stream = new PassThrough();
  const refused: number[] = [];
  t.is(
    guardPacketSize(stream, 100, (e) => refused.push(e.declaredBytes)),
    stream,
    'no stream in front of it',
  );
  // a PINGREQ and a 98-byte PUBLISH, read the way aedes reads
  const publish = Buffer.concat([Buffer.from([0x30, 96]), Buffer.alloc(96, 7)]);
  stream.write(Buffer.from([0xc0, 0x00]));
  stream.write(publish);
  await new Promise((r) => setImmediate(r));
  t.deepEqual(stream.read(), Buffer.concat([Buffer.from([0xc0, 0x00]), publish]));
  // then a PUBLISH declaring 203 bytes, behind a PINGREQ in the same chunk: nothing of it is handed on
  stream.write(Buffer.from([0xc0, 0x00, 0x30, 0xc8, 0x01]));
  await new Promise((r) => setImmediate(r));
  const errored = new Promise<Error>((r) => stream.once('error', r));
  t.is(stream.read(), null);
  t.deepEqual(refused, [203]);
  t.true(stream.destroyed);
  t.true((await errored) instanceof PacketTooLarge);
  // an error on a guarded socket that nothing else listens to (aedes let go) is not thrown
  t.notThrows(() => guardPacketSize(new PassThrough(), 100, () => {}).emit('error', new Error('late')));
});

test('mqtt.gateway: a CONNECT declaring 268 MB is refused from its header: four such connections close at once and nothing is buffered', async (t) => {
  const h = await startHarness(t);
  const before = offHeap();
  const junk = Buffer.alloc(MiB, 0x41);
  const attack = async () => {
    const socket = await rawConnect(h.port);
    socket.on('error', () => {});
    // a server that waited for the declared body would never close it: the wait fails the test
    const gone = socketClosed(socket, PATIENCE_MS);
    socket.write(hugeConnectHeader);
    // then up to 32 MiB of its body, as fast as the server takes it
    for (let sent = 0; sent < 32 && !socket.destroyed; sent++) {
      if (!socket.write(junk))
        await new Promise((r) => {
          socket.once('drain', r);
          socket.once('close', r);
        });
    }
    return gone;
  };
  await Promise.all([attack(), attack(), attack(), attack()]);
  const grown = offHeap() - before;
  t.true(grown < 32 * MiB, `off-heap memory grew by ${Math.round(grown / MiB)} MiB`);

  // the broker goes on serving
  await h.device('dev1');
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  t.true(c.connected);
});

test('mqtt.gateway: over WebSocket a packet declared over the limit closes the connection, even split over many small messages', async (t) => {
  const h = await startHarness(t);
  const ws = new WebSocket(`ws://127.0.0.1:${h.gw.ports['mqtt/ws']}/mqtt`, 'mqtt');
  ws.on('error', () => {});
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const before = offHeap();
  const gone = socketClosed(ws, PATIENCE_MS);
  ws.send(hugeConnectHeader);
  const junk = Buffer.alloc(64 * 1024, 0x41);
  for (let i = 0; i < 256 && ws.readyState === WebSocket.OPEN; i++) {
    ws.send(junk);
    if (ws.bufferedAmount > 4 * MiB) await new Promise((r) => setTimeout(r, 5));
  }
  await gone;
  t.true(offHeap() - before < 16 * MiB);
});

test('mqtt.gateway: after login a PUBLISH over TRACKGATE_MQTT_MAX_PACKET closes the connection and stores nothing; one under it is stored', async (t) => {
  const h = await startHarness(t, { maxPacketBytes: 4096 });
  await h.device('dev1');
  const location = (n: number) =>
    JSON.stringify({ dateTime: '2026-03-01T10:00:00Z', latitude: 1, longitude: 2, attributes: { pad: 'x'.repeat(n) } });
  const c = await h.connect({ username: 'dev1', password: PASSWORD, clientId: 'dev1' });
  await c.publishAsync('devices/dev1/locations', location(3500), { qos: 1 });
  t.is((await h.lastLocation('dev1')).body.lastLocation.attributes.pad.length, 3500);

  const gone = closed(c);
  c.publish('devices/dev1/locations', location(5000).replace('10:00:00', '11:00:00'), { qos: 1 });
  await gone;
  t.is((await h.lastLocation('dev1')).body.lastLocation.dateTime, '2026-03-01T10:00:00.000Z');

  // the same over WebSocket
  const w = await h.connect({
    url: `ws://127.0.0.1:${h.gw.ports['mqtt/ws']}/mqtt`,
    username: 'dev1',
    password: PASSWORD,
    clientId: 'dev1-ws',
  });
  const wsGone = closed(w);
  w.publish('devices/dev1/locations', location(5000).replace('10:00:00', '12:00:00'), { qos: 1 });
  await wsGone;
  t.is((await h.lastLocation('dev1')).body.lastLocation.dateTime, '2026-03-01T10:00:00.000Z');
});

test('mqtt.gateway: over WebSocket each packet aedes writes (in pieces, corked) leaves as one WebSocket message', async (t) => {
  const h = await startHarness(t);
  await h.device('dev1');
  const ws = new WebSocket(`ws://127.0.0.1:${h.gw.ports['mqtt/ws']}/mqtt`, 'mqtt');
  t.teardown(() => ws.terminate());
  const messages: Buffer[] = [];
  ws.on('message', (m: Buffer) => messages.push(m));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const until = async (n: number) => {
    for (const end = Date.now() + PATIENCE_MS; Date.now() < end && messages.length < n; )
      await new Promise((r) => setTimeout(r, 10));
  };
  ws.send(connectPacket({ clientId: 'dev1-ws', username: 'dev1', password: PASSWORD }));
  await until(1);
  ws.send(
    publishQos1Packet(
      'devices/dev1/locations',
      7,
      Buffer.from(JSON.stringify({ dateTime: '2026-03-01T10:00:00Z', latitude: 1, longitude: 2 })),
    ),
  );
  await until(2);
  await new Promise((r) => setTimeout(r, 100));
  t.deepEqual(messages, [Buffer.from([CONNACK_TYPE, 0x02, 0x00, 0x00]), pubackPacket(7)]);
});

test('config: TRACKGATE_MQTT_MAX_PACKET defaults to 256 KiB and takes 1 KiB to 256 MiB', (t) => {
  t.is(loadConfig({}).mqttMaxPacketBytes, 256 * 1024);
  t.is(loadConfig({ TRACKGATE_MQTT_MAX_PACKET: '4096' }).mqttMaxPacketBytes, 4096);
  for (const bad of ['100', '300000000', 'big']) {
    const e = t.throws(() => loadConfig({ TRACKGATE_MQTT_MAX_PACKET: bad }), { instanceOf: ConfigError });
    t.is(e?.variable, 'TRACKGATE_MQTT_MAX_PACKET');
  }
});
