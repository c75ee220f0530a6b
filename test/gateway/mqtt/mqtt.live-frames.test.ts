import test from 'ava';
import dgram from 'node:dgram';
import { TrackerClient } from '../../helpers/tracker-client.js';
import * as F from '../../helpers/frames.js';
import { liveFrame, MAX_FRAME_BYTES } from '../../../gateway/shared/frame-tap.js';
import mqtt from 'mqtt';
import { apiUser, messages, startHarness, sleep } from './mqtt-harness.js';
import { postgresAvailable } from '../../helpers/backends.js';
import { startPair } from '../../helpers/instances.js';
import { until } from '../../helpers/wait.js';
import { capturingLogger } from '../../helpers/capture-logger.js';

const IMEI = '356307042441013';
const UNKNOWN_IMEI = '356307042449999';
const ENV = { TRACKGATE_TELTONIKA_PORT: '0' };

test('mqtt.live: a technician on live/<imei>/frames sees the login and a position frame with their replies; another account sees nothing', async (t) => {
  const h = await startHarness(t, {}, ENV);
  await h.device(IMEI);
  const tech = await apiUser(h, 'tech@example.com');
  const techClient = await h.connect({
    username: tech.userName,
    password: tech.apiKey,
    clientId: `${tech.userName}-f`,
  });
  t.is((await techClient.subscribeAsync(`live/${IMEI}/frames`))[0].qos, 0);
  const seen = messages(techClient);
  const foreign = await h.s.running.services.accounts.create({
    name: 'Other',
    licenses: 5,
    adminUser: 'other-admin',
    adminApiKey: 'other-admin-key-0123456789',
  });
  const other = await h.connect({ username: 'other-admin', password: foreign.apiKey, clientId: 'other-admin-f' });
  await other.subscribeAsync('live/#');
  const otherSeen = messages(other);

  const tracker = await TrackerClient.connect(h.s.running.ports.teltonika!);
  t.teardown(() => tracker.end());
  const login = F.teltonikaLogin(IMEI);
  tracker.write(login);
  t.deepEqual(await tracker.read(1), Buffer.from([1]));
  const avl = F.teltonikaAvl([{ time: new Date(Date.UTC(2026, 2, 1, 10)), lat: 40.4168, lon: -3.7038, speedKmh: 50 }]);
  tracker.write(avl);
  const ack = await tracker.read(4);

  t.true(await seen.until(() => seen.seen.length >= 2), JSON.stringify(seen.seen));
  const [first, second] = seen.seen;
  t.is(first.topic, `live/${IMEI}/frames`);
  t.like(first.body, {
    protocol: 'teltonika',
    remote: '127.0.0.1',
    hex: login.toString('hex'),
    reply: '01',
    truncated: false,
    length: login.length,
  });
  t.is(first.body.decoded.identity, IMEI);
  t.truthy(Date.parse(first.body.receivedAt));
  t.like(second.body, { protocol: 'teltonika', hex: avl.toString('hex'), reply: ack.toString('hex') });
  t.is(second.body.decoded.messageCount, 1);
  t.is(second.body.decoded.messages.length, 1);
  // the position under the names REST shows it by, to compare side by side
  t.like(second.body.decoded.messages[0], {
    dateTime: '2026-03-01T10:00:00.000Z',
    latitude: 40.4168,
    longitude: -3.7038,
    speed: 50,
  });
  t.is(second.body.decoded.messages[0].location, undefined);
  const [stored] = (
    await h.s.request('POST', `/api/devices/${IMEI}/locations`, {
      token: h.s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    })
  ).body.locations;
  for (const key of ['dateTime', 'latitude', 'longitude', 'speed'])
    t.is(second.body.decoded.messages[0][key], stored[key], key);
  await sleep(200);
  t.deepEqual(otherSeen.seen, [], 'another account receives no frame of the device');
});

test('mqtt.live: frames the decoder cannot read (GPS103, Queclink) are logged with the reason, counted malformed, and shown on live/<id>/frames', async (t) => {
  const log = capturingLogger();
  const h = await startHarness(t, {}, { TRACKGATE_GPS103_PORT: '0', TRACKGATE_GL200_PORT: '0' }, { logger: log });
  const GPS = '359587010124900';
  const QL = '135790246811220';
  await h.device(GPS);
  await h.device(QL);
  const tech = await apiUser(h, 'tech@example.com');
  const techClient = await h.connect({
    username: tech.userName,
    password: tech.apiKey,
    clientId: `${tech.userName}-m`,
  });
  await techClient.subscribeAsync('live/+/frames');
  const seen = messages(techClient);
  const malformedOf = (protocol: string) =>
    seen.seen.filter((m) => m.body.protocol === protocol && m.body.outcome === 'malformed');
  const metric = async (protocol: string, outcome: string) => {
    const text = await (await fetch(`${h.s.base}/metrics`)).text();
    return Number(
      new RegExp(`^trackgate_tracker_frames_total\\{protocol="${protocol}",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
        text,
      )?.[1] ?? 0,
    );
  };

  // GPS103: a login identifies the connection; then a tracker sentence of no known layout
  const gps = await TrackerClient.connect(h.s.running.ports.gps103!);
  t.teardown(() => gps.end());
  gps.write(`##,imei:${GPS},A;`);
  t.is((await gps.read(4)).toString(), 'LOAD');
  const garbage = `imei:${GPS},tracker,zzzz;`;
  gps.write(garbage);
  t.true(await seen.until(() => malformedOf('gps103').length === 1), JSON.stringify(seen.seen));
  const g = malformedOf('gps103')[0];
  t.is(g.topic, `live/${GPS}/frames`);
  t.like(g.body, { text: garbage, reply: '', decoded: { identity: GPS, messages: [], messageCount: 0 } });
  t.regex(g.body.error, /unrecognised gps103 sentence/);
  t.true(await gps.nothingFor(300), 'no acknowledgement');

  // GPS103 over UDP: the sentence names its device, which is enough to show it
  const udp = dgram.createSocket('udp4');
  t.teardown(() => udp.close());
  udp.send(Buffer.from(garbage), h.s.running.ports['gps103/udp']!, '127.0.0.1');
  t.true(await seen.until(() => malformedOf('gps103').length === 2), JSON.stringify(seen.seen));
  t.is(malformedOf('gps103')[1].topic, `live/${GPS}/frames`);

  // Queclink: a good report first (acknowledged), then one nothing reads: it names no device, the connection does
  const ql = await TrackerClient.connect(h.s.running.ports.gl200!);
  t.teardown(() => ql.end());
  const stamp = '20260301100000';
  ql.write(
    `+RESP:GTFRI,060100,${QL},,0,0,1,1,4.3,92,70.0,-3.703800,40.416800,${stamp},0214,0007,18d8,6141,00,,${stamp},0001$`,
  );
  t.is((await ql.read(11)).toString(), '+SACK:0001$');
  ql.write('+RESP:GTFRI,garbage$');
  t.true(await seen.until(() => malformedOf('gl200').length === 1), JSON.stringify(seen.seen));
  const q = malformedOf('gl200')[0];
  t.is(q.topic, `live/${QL}/frames`);
  t.like(q.body, { text: '+RESP:GTFRI,garbage', reply: '', decoded: null });
  t.regex(q.body.error, /unrecognised GTFRI report/);
  t.true(await ql.nothingFor(300), 'no acknowledgement');

  const logged = log.at('warn', 'malformed frame');
  t.like(
    logged.find((e) => e.protocol === 'gps103' && e.transport === undefined),
    { device: GPS },
  );
  t.regex(String(logged.find((e) => e.protocol === 'gps103')?.reason), /unrecognised gps103 sentence/);
  t.true(
    logged.some((e) => e.protocol === 'gps103' && e.transport === 'udp'),
    'the datagram too',
  );
  t.like(
    logged.find((e) => e.protocol === 'gl200'),
    { device: QL },
  );
  t.regex(String(logged.find((e) => e.protocol === 'gl200')?.reason), /unrecognised GTFRI report/);
  t.is(await metric('gps103', 'malformed'), 2);
  t.is(await metric('gl200', 'malformed'), 1);
  t.is(await metric('gl200', 'decoded'), 1, 'only the good report counts as decoded');
});

test('mqtt.live: an admin sees live/unknown/frames for an unknown IMEI; a non-admin may not subscribe to it and gets none through a wildcard', async (t) => {
  const h = await startHarness(t, {}, ENV);
  const admin = await h.connect({ username: 'admin', password: h.s.adminToken, clientId: 'admin-unknown' });
  t.is((await admin.subscribeAsync('live/unknown/frames'))[0].qos, 0);
  const adminSeen = messages(admin);
  const reader = await apiUser(h, 'reader@example.com');
  const readerClient = await h.connect({
    username: reader.userName,
    password: reader.apiKey,
    clientId: `${reader.userName}-u`,
  });
  const refused = await readerClient.subscribeAsync('live/unknown/frames').then(
    (g) => g[0].qos,
    (e: { packet?: { granted?: number[] } }) => e.packet?.granted?.[0],
  );
  t.is(refused, 128, 'refused');
  t.is((await readerClient.subscribeAsync('live/#'))[0].qos, 0);
  const readerSeen = messages(readerClient);

  const tracker = await TrackerClient.connect(h.s.running.ports.teltonika!);
  t.teardown(() => tracker.end());
  tracker.write(F.teltonikaLogin(UNKNOWN_IMEI));
  t.deepEqual(await tracker.read(1), Buffer.from([0]));

  t.true(await adminSeen.until(() => adminSeen.seen.length >= 1));
  t.is(adminSeen.seen[0].topic, 'live/unknown/frames');
  t.like(adminSeen.seen[0].body, {
    protocol: 'teltonika',
    hex: F.teltonikaLogin(UNKNOWN_IMEI).toString('hex'),
    reply: '00',
    outcome: 'unknown',
  });
  t.is(adminSeen.seen[0].body.decoded.identity, UNKNOWN_IMEI);
  await sleep(200);
  t.deepEqual(readerSeen.seen, []);
});

test('mqtt.live: frames are built only while an API user of the account listens to a frames filter', async (t) => {
  const h = await startHarness(t, {}, ENV);
  const tap = h.s.running.services.frames;
  const accountId = (await h.s.request('GET', '/api/account', { token: h.s.adminToken })).body.account.id as string;
  const reader = await apiUser(h, 'reader@example.com');
  const c = await h.connect({ username: reader.userName, password: reader.apiKey, clientId: `${reader.userName}-w` });
  await c.subscribeAsync('live/+/locations');
  t.false(tap.wants(accountId), 'locations only: no frame is built');
  t.false(tap.wants(null));
  await c.subscribeAsync('live/+/frames');
  t.true(tap.wants(accountId));
  t.false(tap.wants(null), 'a non-admin does not make unknown frames be built');
  await c.endAsync();
  await sleep(100);
  t.false(tap.wants(accountId), 'gone with its client');
});

test('frame-tap: a large frame is cut to MAX_FRAME_BYTES and says so; text protocols are shown as text', (t) => {
  const big = liveFrame(
    'gt06',
    { bytes: Buffer.alloc(MAX_FRAME_BYTES + 100, 0xab), text: false, receivedAt: new Date(0) },
    '10.0.0.1',
    null,
    [Buffer.from([1, 2])],
    'ok',
  );
  t.is(big.hex!.length, MAX_FRAME_BYTES * 2);
  t.like(big, {
    truncated: true,
    length: MAX_FRAME_BYTES + 100,
    reply: '0102',
    decoded: null,
    receivedAt: '1970-01-01T00:00:00.000Z',
  });
  const text = liveFrame(
    'h02',
    { bytes: Buffer.from('*HQ,123,V1#'), text: true, receivedAt: new Date(0) },
    null,
    { identity: '123', messages: [], replies: [] },
    [],
    'ok',
  );
  t.like(text, { text: '*HQ,123,V1#', truncated: false, hex: undefined });
  t.deepEqual(text.decoded, { identity: '123', messages: [], messageCount: 0 });
});

test('mqtt.live: an OsmAnd request is shown on live/<id>/frames as text, with what it decoded', async (t) => {
  const h = await startHarness(t, {}, { TRACKGATE_OSMAND_PORT: '0' });
  await h.device('phone-1');
  const tech = await apiUser(h, 'tech@example.com');
  const c = await h.connect({ username: tech.userName, password: tech.apiKey, clientId: `${tech.userName}-o` });
  await c.subscribeAsync('live/+/frames');
  const seen = messages(c);
  const path = `/?id=phone-1&lat=40.5&lon=-3.5&timestamp=${Date.UTC(2026, 2, 1) / 1000}`;
  t.is(
    (await fetch(`http://127.0.0.1:${h.s.running.ports.osmand}${path}`, { signal: AbortSignal.timeout(5000) })).status,
    200,
  );
  t.true(await seen.until(() => seen.seen.length >= 1));
  t.is(seen.seen[0].topic, 'live/phone-1/frames');
  t.like(seen.seen[0].body, { protocol: 'osmand', text: `GET ${path}\n`, hex: undefined, outcome: 'ok' });
  t.is(seen.seen[0].body.decoded.messageCount, 1);
});

test("mqtt.live: a device reply that answers no command is shown in the frame's decoded.commandResults", async (t) => {
  const h = await startHarness(t, {}, ENV);
  await h.device(IMEI);
  const tech = await apiUser(h, 'tech@example.com');
  const c = await h.connect({ username: tech.userName, password: tech.apiKey, clientId: `${tech.userName}-r` });
  await c.subscribeAsync(`live/${IMEI}/frames`);
  const seen = messages(c);
  const tracker = await TrackerClient.connect(h.s.running.ports.teltonika!);
  t.teardown(() => tracker.end());
  tracker.write(F.teltonikaLogin(IMEI));
  t.deepEqual(await tracker.read(1), Buffer.from([1]));
  // a Codec 12 answer (type 0x06) while no command is in flight
  const answer = F.teltonikaAnswer('stray answer');
  tracker.write(answer);
  t.true(await seen.until(() => seen.seen.length >= 2), JSON.stringify(seen.seen));
  t.like(seen.seen[1].body, { hex: answer.toString('hex') });
  t.is(seen.seen[1].body.decoded.commandResults.length, 1);
  t.is(seen.seen[1].body.decoded.commandResults[0].text, 'stray answer');
});

test('mqtt.live: a datagram over UDP is shown on live/<id>/frames with its reply, like a TCP frame', async (t) => {
  const h = await startHarness(t, {}, ENV);
  await h.device(IMEI);
  const tech = await apiUser(h, 'tech@example.com');
  const c = await h.connect({ username: tech.userName, password: tech.apiKey, clientId: `${tech.userName}-udp` });
  await c.subscribeAsync(`live/${IMEI}/frames`);
  const seen = messages(c);
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const acks: Buffer[] = [];
  sock.on('message', (m) => acks.push(m));
  const datagram = F.teltonikaDatagram(IMEI, 7, [
    { time: new Date(Date.UTC(2026, 2, 1, 10)), lat: 40.4168, lon: -3.7038 },
  ]);
  sock.send(datagram, h.s.running.ports['teltonika/udp']!, '127.0.0.1');
  t.true(await seen.until(() => seen.seen.length >= 1), 'the datagram is shown');
  t.is(seen.seen[0].topic, `live/${IMEI}/frames`);
  t.like(seen.seen[0].body, {
    protocol: 'teltonika',
    remote: '127.0.0.1',
    hex: datagram.toString('hex'),
    reply: '00050000010701',
    outcome: 'ok',
  });
  t.is(seen.seen[0].body.decoded.messageCount, 1);
  t.deepEqual(acks[0], Buffer.from('00050000010701', 'hex'));
});

test('mqtt.live: with Redis, a technician subscribed on instance A sees the frames of a tracker connected to instance B; frames cross only while someone listens', async (t) => {
  if (!(await postgresAvailable())) return t.pass('needs PostgreSQL');
  const [a, b] = await startPair(t, { ...ENV, TRACKGATE_MQTT_PORT: '0' });
  const r = await a.request('POST', '/api/devices', { token: a.adminToken, body: { id: IMEI, name: IMEI } });
  t.is(r.status, 201);
  const tap = b.running.services.frames;
  const accountId = (await a.request('GET', '/api/account', { token: a.adminToken })).body.account.id as string;
  t.false(tap.wants(accountId), 'nobody listens: B builds no frame');
  const tech = await mqtt.connectAsync(`mqtt://127.0.0.1:${a.running.ports.mqtt}`, {
    username: 'admin',
    password: a.adminToken,
    clientId: 'admin-frames-a',
    reconnectPeriod: 0,
  });
  t.teardown(() => tech.endAsync(true));
  await tech.subscribeAsync(`live/${IMEI}/frames`);
  const seen = messages(tech);
  await until('B learns that A listens', () => tap.wants(accountId));
  const tracker = await TrackerClient.connect(b.running.ports.teltonika!);
  t.teardown(() => tracker.end());
  const login = F.teltonikaLogin(IMEI);
  tracker.write(login);
  t.deepEqual(await tracker.read(1), Buffer.from([1]));
  t.true(await seen.until(() => seen.seen.length >= 1), 'the frame reached A');
  t.like(seen.seen[0].body, { protocol: 'teltonika', hex: login.toString('hex'), reply: '01', outcome: 'ok' });
  await sleep(300);
  t.is(seen.seen.length, 1, 'once');
  await tech.endAsync();
  await until('B forgets the interest after its time to live', () => !tap.wants(accountId));
});
