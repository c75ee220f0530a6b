import test from 'ava';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { MqttClient } from 'mqtt';
import type { PublishPacket } from 'aedes';
import { LiveOutbox } from '../../../gateway/mqtt/live.outbox.js';
import { ManualClock } from '../../../core/clock.js';
import { apiUser, startHarness, sleep, closed, connackCode } from './mqtt-harness.js';
import { rawConnect } from './raw-mqtt.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';
import { connectPacket, subscribePacket } from '../../helpers/mqtt-packets.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
/**
 * Buffers alive, after full collections until the count stops falling: array buffers are swept in
 * the background, so one collection (or two with a fixed pause) may count some not yet freed.
 */
async function offHeap(): Promise<number> {
  let last = Infinity;
  for (const end = Date.now() + PATIENCE_MS; ; ) {
    gc();
    await sleep(50);
    const now = process.memoryUsage().arrayBuffers;
    if (now >= last || Date.now() > end) return now;
    last = now;
  }
}

/** Counts the live messages a client receives, per device. */
function counter(c: MqttClient) {
  const seen = new Map<string, number>();
  c.on('message', (topic) => {
    const device = topic.split('/')[1];
    seen.set(device, (seen.get(device) ?? 0) + 1);
  });
  return {
    of: (device: string) => seen.get(device) ?? 0,
    async reaches(device: string, n: number, ms = PATIENCE_MS): Promise<boolean> {
      const until = Date.now() + ms;
      while (Date.now() < until && (seen.get(device) ?? 0) < n) await sleep(20);
      return (seen.get(device) ?? 0) >= n;
    },
  };
}

test('live.outbox: a full queue drops its oldest packets; no more than inFlightBytes are handed to the socket at once', (t) => {
  const handed: string[] = [];
  const pending: (() => void)[] = [];
  const overflows: number[] = [];
  const outbox = new LiveOutbox(
    (packet, done) => {
      handed.push(packet.topic);
      pending.push(() => done());
    },
    () => false,
    { maxMessages: 3, maxBytes: 1000, inFlightBytes: 20 },
    (dropped) => overflows.push(dropped),
  );
  const packet = (n: number): PublishPacket => ({
    cmd: 'publish',
    topic: `live/d/${n}`,
    payload: Buffer.alloc(10),
    qos: 0,
    retain: false,
    dup: false,
  });
  for (let n = 1; n <= 8; n++) outbox.push(packet(n));
  t.deepEqual(handed, ['live/d/1', 'live/d/2'], 'two packets of 10 bytes fill 20 bytes in flight');
  t.is(outbox.waiting, 3);
  t.is(outbox.dropped, 3, 'packets 3, 4 and 5 were dropped, the oldest first');
  t.deepEqual(overflows, [1], 'an overflow is reported once until the queue empties');
  pending.shift()!();
  pending.shift()!();
  t.deepEqual(handed, ['live/d/1', 'live/d/2', 'live/d/6', 'live/d/7']);
  pending.shift()!();
  t.deepEqual(handed.slice(4), ['live/d/8']);
  t.is(outbox.waiting, 0);
  // with a byte limit, one large packet pushes out several small ones
  outbox.push(packet(9));
  outbox.push({ ...packet(10), payload: Buffer.alloc(995) });
  t.is(outbox.waiting, 1);
  t.is(outbox.dropped, 4);
  t.deepEqual(overflows, [1, 4]);
});

test('mqtt.live: a subscriber that never reads holds up nobody, costs a bounded amount and cannot crash the process', async (t) => {
  const h = await startHarness(t, { drainTimeoutMs: 7000 });
  await h.device('dev1');
  await h.device('dev2');
  const user = await apiUser(h, 'watch@example.com');

  // CONNECT and SUBSCRIBE live/#, read the CONNACK and SUBACK, then never read again
  const slow = await rawConnect(h.port);
  slow.on('error', () => {});
  slow.write(
    Buffer.concat([
      connectPacket({ clientId: `${user.userName}-slow`, username: user.userName, password: user.apiKey }),
      subscribePacket(1, 'live/#', 0),
    ]),
  );
  await new Promise<void>((resolve) => {
    let n = 0;
    slow.on('data', (d) => {
      n += d.length;
      if (n >= 4 + 5) resolve();
    });
  });
  slow.removeAllListeners('data');
  slow.pause();

  const all = counter(
    await h.connect({ username: user.userName, password: user.apiKey, clientId: `${user.userName}-all` }),
  );
  const other = await h.connect({ username: user.userName, password: user.apiKey, clientId: `${user.userName}-dev2` });
  await other.subscribeAsync('live/dev2/#');
  const dev2 = counter(other);
  const allClient = await h.connect({
    username: user.userName,
    password: user.apiKey,
    clientId: `${user.userName}-every`,
  });
  await allClient.subscribeAsync('live/#');
  const every = counter(allClient);

  // a burst of 24 × 1,000 stored locations of about 1 KB: far more than the slow socket's buffers
  const before = await offHeap();
  const pad = 'x'.repeat(900);
  const batches = 24;
  for (let b = 0; b < batches; b++) {
    const locations = Array.from({ length: 1000 }, (_, i) => ({
      dateTime: new Date(Date.UTC(2026, 2, 1) + (b * 1000 + i) * 1000).toISOString(),
      latitude: 1,
      longitude: 2,
      attributes: { pad },
    }));
    t.is(
      (await h.s.request('POST', '/api/devices/dev1/locations', { token: h.s.adminToken, body: { locations } })).status,
      201,
    );
    // a reading subscriber keeps up batch by batch (each batch fits its own bounded queue), while
    // the slow one falls 24 MB behind in all
    t.true(
      await every.reaches('dev1', (b + 1) * 1000),
      `a reading subscriber got ${every.of('dev1')} of ${(b + 1) * 1000}`,
    );
  }
  const storeDev2 = (minute: number) =>
    h.s.request('POST', '/api/devices/dev2/locations', {
      token: h.s.adminToken,
      body: { location: { dateTime: `2026-03-02T10:${minute}:00Z`, latitude: 1, longitude: 2 } },
    });
  await storeDev2(10);

  // a subscriber of another device is not held up by the burst or by the slow one
  t.true(await dev2.reaches('dev2', 1), 'a subscriber of another device is not held up');
  t.is(every.of('dev1'), batches * 1000);
  t.true(await every.reaches('dev2', 1));
  // what waits for the slow subscriber is bounded (4 MiB of queue, its socket buffers), not the burst (24 MB)
  const grown = (await offHeap()) - before;
  t.true(grown < 12 * MiB, `off-heap memory grew by ${Math.round(grown / MiB)} MiB`);

  // past the drain timeout the slow subscriber is gone, and the process still serves
  // (the paused raw socket would not see its close: aedes' count of clients does; three read)
  await until('the slow subscriber is disconnected', () => h.gw.connectedClients() === 3);
  await storeDev2(11);
  t.true(await dev2.reaches('dev2', 2));
  t.true(await every.reaches('dev2', 2));
  t.is(all.of('dev1'), 0, 'a client without a subscription receives nothing');
  slow.resume();
  await new Promise((resolve) => (slow.destroyed ? resolve(null) : slow.once('close', resolve)));
});

test('mqtt.live: an API user deleted, given a new key or moved to a group through REST loses its feed or is narrowed at once', async (t) => {
  // the periodic re-check is a minute away: only the change itself can act within the test
  const h = await startHarness(t, { recheckUsersMs: 60_000 });
  const { s } = h;
  await h.device('dev1');
  await h.device('dev2');
  const groupOf2 = (
    await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'only dev2', devices: ['dev2'] } })
  ).body.id as string;
  const deleted = await apiUser(h, 'deleted@example.com');
  const rekeyed = await apiUser(h, 'rekeyed@example.com');
  const byToken = await apiUser(h, 'token@example.com');
  const moved = await apiUser(h, 'moved@example.com');
  const watch = async (userName: string, password: string) => {
    const c = await h.connect({ username: userName, password, clientId: `${userName}-live` });
    await c.subscribeAsync('live/#');
    return c;
  };
  const deletedClient = await watch(deleted.userName, deleted.apiKey);
  const rekeyedClient = await watch(rekeyed.userName, rekeyed.apiKey);
  const tokenOfOldKey = await s.token(byToken.userName, byToken.apiKey);
  const tokenClient = await watch(byToken.userName, tokenOfOldKey);
  const movedClient = await watch(moved.userName, moved.apiKey);
  const movedSeen = counter(movedClient);

  const within = async (c: MqttClient, what: string) => {
    await closed(c).catch(() => t.fail(`${what}: the connection stayed open`));
  };
  const gone1 = within(deletedClient, 'deleted user');
  t.is((await s.request('DELETE', `/api/users/${deleted.id}`, { token: s.adminToken })).status, 200);
  await gone1;

  const gone2 = within(rekeyedClient, 'new API key');
  const gone3 = within(tokenClient, 'token of the old key');
  t.is((await s.request('POST', `/api/users/${rekeyed.id}/apiKey`, { token: s.adminToken })).status, 200);
  t.is((await s.request('POST', `/api/users/${byToken.id}/apiKey`, { token: s.adminToken })).status, 200);
  await Promise.all([gone2, gone3]);
  // they were closed because their credentials no longer log in: logging in again with them is refused
  const url = `mqtt://127.0.0.1:${h.port}`;
  t.is(
    await connackCode(url, {
      username: deleted.userName,
      password: deleted.apiKey,
      clientId: `${deleted.userName}-again`,
    }),
    4,
  );
  t.is(
    await connackCode(url, {
      username: rekeyed.userName,
      password: rekeyed.apiKey,
      clientId: `${rekeyed.userName}-again`,
    }),
    4,
  );
  t.is(
    await connackCode(url, {
      username: byToken.userName,
      password: tokenOfOldKey,
      clientId: `${byToken.userName}-again`,
    }),
    4,
  );

  const store = (device: string, minute: number) =>
    s.request('POST', `/api/devices/${device}/locations`, {
      token: s.adminToken,
      body: { location: { dateTime: `2026-03-02T10:${minute}:00Z`, latitude: 1, longitude: 2 } },
    });
  await store('dev1', 10);
  t.true(await movedSeen.reaches('dev1', 1), 'before the change it sees every device');
  t.is(
    (
      await s.request('PATCH', `/api/users/${moved.id}`, {
        token: s.adminToken,
        body: [{ op: 'replace', path: '/group', value: groupOf2 }],
      })
    ).status,
    200,
  );
  // the change reaches the gateway after the PATCH (a recheck of the user): a position of each
  // device, dev1's first, until one of its group's comes without the other's before it (one client's
  // messages keep their order)
  let minute = 11;
  await until('the group change applies', async () => {
    const dev1Before = movedSeen.of('dev1');
    const dev2Before = movedSeen.of('dev2');
    await store('dev1', minute++);
    await store('dev2', minute++);
    t.true(await movedSeen.reaches('dev2', dev2Before + 1), "it still receives its group's device");
    return movedSeen.of('dev1') === dev1Before;
  });
  const [dev1Seen, dev2Seen] = [movedSeen.of('dev1'), movedSeen.of('dev2')];
  await store('dev1', minute++);
  await store('dev2', minute++);
  t.true(await movedSeen.reaches('dev2', dev2Seen + 1));
  t.is(movedSeen.of('dev1'), dev1Seen, 'and no longer the device outside its group');
});

test("mqtt.live: a device that joins or leaves a restricted user's group is in or out of its feed at once", async (t) => {
  // the gateway's clock does not move: only the group change itself can clear what it remembered
  const h = await startHarness(t, { clock: new ManualClock(Date.now()) });
  const { s } = h;
  await h.device('dev1');
  await h.device('dev2');
  const group = (
    await s.request('POST', '/api/groups', { token: s.adminToken, body: { name: 'yard', devices: ['dev1'] } })
  ).body.id as string;
  const user = await apiUser(h, 'yard@example.com', { group });
  const c = await h.connect({ username: user.userName, password: user.apiKey, clientId: `${user.userName}-live` });
  await c.subscribeAsync('live/#');
  const seen = counter(c);
  let minute = 10;
  const store = (device: string) =>
    s.request('POST', `/api/devices/${device}/locations`, {
      token: s.adminToken,
      body: { location: { dateTime: `2026-03-02T10:${minute++}:00Z`, latitude: 1, longitude: 2 } },
    });
  const setMembers = (devices: string[]) =>
    s.request('PUT', `/api/groups/${group}`, { token: s.adminToken, body: { name: 'yard', devices } });

  await store('dev2');
  await store('dev1');
  t.true(await seen.reaches('dev1', 1));
  t.is(seen.of('dev2'), 0, 'a device outside the group is not in the feed');

  t.is((await setMembers(['dev1', 'dev2'])).status, 200);
  await store('dev2');
  t.true(await seen.reaches('dev2', 1), 'the device that joined is in the feed at once');

  t.is((await setMembers(['dev1'])).status, 200);
  await store('dev2');
  await store('dev1');
  t.true(await seen.reaches('dev1', 2));
  t.is(seen.of('dev2'), 1, 'the device that left is out of the feed at once');
});
