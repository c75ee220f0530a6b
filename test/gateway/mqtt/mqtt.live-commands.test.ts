import test from 'ava';
import { TrackerClient } from '../../helpers/tracker-client.js';
import * as F from '../../helpers/frames.js';
import { apiUser, messages, startHarness } from './mqtt-harness.js';

const IMEI = '356307042441013';
const ENV = { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' };

test('mqtt.live: a subscriber of live/<id>/commands sees a Teltonika command queued, sent and answered as the REST command; another account sees none', async (t) => {
  const h = await startHarness(t, {}, ENV);
  await h.device(IMEI);
  const user = await apiUser(h, 'watcher@example.com');
  const c = await h.connect({ username: user.userName, password: user.apiKey, clientId: `${user.userName}-cmd` });
  await c.subscribeAsync(`live/${IMEI}/commands`);
  const feed = messages(c);
  const foreign = await h.s.running.services.accounts.create({
    name: 'Other',
    licenses: 5,
    adminUser: 'other-admin',
    adminApiKey: 'other-admin-key-0123456789',
  });
  const other = await h.connect({ username: 'other-admin', password: foreign.apiKey, clientId: 'other-admin-cmd' });
  await other.subscribeAsync(`live/${IMEI}/commands`);
  const otherFeed = messages(other);

  // queued while offline
  const queued = await h.s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
    token: h.s.adminToken,
    body: { command: 'getinfo' },
  });
  t.is(queued.status, 200, JSON.stringify(queued.body));
  t.true(await feed.until(() => feed.seen.length >= 1), 'queued is announced');

  const tracker = await TrackerClient.connect(h.s.running.ports.teltonika!);
  t.teardown(() => tracker.end());
  tracker.write(F.teltonikaLogin(IMEI));
  t.is((await tracker.read(1))[0], 1);
  const head = await tracker.read(8);
  await tracker.read(head.readUInt32BE(4) + 4);
  tracker.write(F.teltonikaAnswer('RTC ok'));

  t.true(await feed.until(() => feed.seen.some((m) => m.body.status === 'answered')), JSON.stringify(feed.seen));
  t.deepEqual(
    feed.seen.map((m) => m.topic),
    [`live/${IMEI}/commands`, `live/${IMEI}/commands`, `live/${IMEI}/commands`],
  );
  t.deepEqual(
    feed.seen.map((m) => m.body.status),
    ['queued', 'sent', 'answered'],
  );
  const listed = (await h.s.request('GET', `/api/devices/${IMEI}/commands`, { token: h.s.adminToken })).body
    .commands[0];
  t.deepEqual(feed.seen[2].body, listed, 'the last message is the REST command object');
  t.like(feed.seen[0].body, { id: queued.body.command.id, command: 'getinfo', attempts: 0 });
  t.deepEqual(otherFeed.seen, [], 'another account receives nothing of the device');
});

test('mqtt.live: a queued command whose ttl runs out is announced expired on live/<id>/commands, without anyone asking for it', async (t) => {
  const h = await startHarness(t, {}, ENV);
  await h.device(IMEI);
  const user = await apiUser(h, 'watcher@example.com');
  const c = await h.connect({ username: user.userName, password: user.apiKey, clientId: `${user.userName}-exp` });
  await c.subscribeAsync(`live/${IMEI}/commands`);
  const feed = messages(c);
  const queued = await h.s.request('POST', `/api/devices/${IMEI}/sendCommand`, {
    token: h.s.adminToken,
    body: { command: 'setdigout 1', ttl: 1 },
  });
  t.is(queued.body.command.status, 'queued');
  // the background upkeep (every 2 s) expires it; nobody lists or delivers the device's commands
  t.true(await feed.until(() => feed.seen.some((m) => m.body.status === 'expired')), JSON.stringify(feed.seen));
  t.deepEqual(
    feed.seen.map((m) => m.body.status),
    ['queued', 'expired'],
  );
  t.like(feed.seen[1].body, { id: queued.body.command.id, command: 'setdigout 1', sent: null });
});
