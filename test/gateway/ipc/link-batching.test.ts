import test from 'ava';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';
import { silentLogger } from '../../../core/logger.js';
import { ManualClock, systemClock } from '../../../core/clock.js';
import { startCoreLink } from '../../../gateway/ipc/core-link.server.js';
import { CACHE_MS, connectCoreLink, CoreUnreachable } from '../../../gateway/ipc/core-link.client.js';

const ids = Array.from({ length: 200 }, (_, i) => String(356307042400000 + i));

test('gateway.ipc link: what a gateway process asks in one turn leaves as one message; each request gets its own answer, and a slow one holds back no other', async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_LICENSES: '1000' } });
  t.teardown(() => s.stop());
  for (const id of ids.slice(0, 100))
    t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } })).status, 201);

  // the command queue's `next` of one device hangs until the test lets it go
  let release!: () => void;
  const hanging = new Promise<void>((r) => (release = r));
  const real = s.running.services.commands;
  const commands = Object.create(real) as typeof real;
  commands.next = (async (deviceId: string, ...rest: unknown[]) => {
    if (deviceId === ids[0]) await hanging;
    return (real.next as (...a: unknown[]) => Promise<unknown>).call(real, deviceId, ...rest);
  }) as typeof real.next;

  const socketPath = path.join(os.tmpdir(), `trackgate-test-${process.pid}-${Date.now()}-b.sock`);
  const secret = 'a-secret-of-this-test-0123456789';
  const link = await startCoreLink({ path: socketPath, secret, ...s.running.services, commands, logger: silentLogger });
  t.teardown(() => link.close());
  const client = connectCoreLink({
    path: socketPath,
    secret,
    clock: systemClock,
    logger: silentLogger,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => client.close());
  await client.ready();

  const before = link.messagesReceived();
  // 200 lookups in one turn: 100 known devices, 100 unknown
  const answers = await Promise.all(ids.map((id) => client.directory.resolve(id, 'teltonika', null)));
  t.true(link.messagesReceived() - before <= 2, `${link.messagesReceived() - before} messages for 200 requests`);
  answers.forEach((a, i) => {
    if (i < 100) t.is(a.status === 'ok' && a.device.id, ids[i], `answer ${i} is its own device's`);
    else t.not(a.status, 'ok', `answer ${i}: an unknown device`);
  });

  // a command call that hangs and a lookup in the same turn: the lookup is answered meanwhile
  let slowDone = false;
  const slow = client.commands.next(ids[0]).finally(() => (slowDone = true));
  const quick = await client.directory.resolve(ids[1], 'teltonika', null).catch(() => undefined);
  // the lookup above may be a cache hit: one that must reach the core
  const fresh = await client.directory.resolve(ids[150], 'teltonika', null);
  t.truthy(quick);
  t.not(fresh.status, 'ok');
  t.false(slowDone, 'the slow call is still waiting');
  release();
  await slow;

  // requests waiting when the link goes fail at once, nothing is left hanging
  let releaseAgain!: () => void;
  const hangingAgain = new Promise<void>((r) => (releaseAgain = r));
  commands.next = (async () => {
    await hangingAgain;
    return undefined;
  }) as typeof real.next;
  const orphan = client.commands.next(ids[2]);
  await until('the call reached the core', () => link.messagesReceived() > 0);
  await new Promise((r) => setTimeout(r, 100));
  await link.close();
  await t.throwsAsync(orphan, { instanceOf: CoreUnreachable });
  releaseAgain();
});

test('gateway.ipc link: device records and notes no lookup may use any more are forgotten (15,000 idle trackers held their records, read once at login)', async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_LICENSES: '1000' } });
  t.teardown(() => s.stop());
  for (const id of ids.slice(0, 50))
    t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } })).status, 201);
  const socketPath = path.join(os.tmpdir(), `trackgate-test-${process.pid}-${Date.now()}-f.sock`);
  const secret = 'a-secret-of-this-test-0123456789';
  const link = await startCoreLink({ path: socketPath, secret, ...s.running.services, logger: silentLogger });
  t.teardown(() => link.close());
  const clock = new ManualClock(Date.now());
  const client = connectCoreLink({
    path: socketPath,
    secret,
    clock,
    logger: silentLogger,
    forgetEveryMs: 20,
    hello: () => ({ ports: null, online: [] }),
    onDeliver: () => undefined,
    onDrop: () => undefined,
  });
  t.teardown(() => client.close());
  await client.ready();

  const found = await Promise.all(ids.slice(0, 50).map((id) => client.directory.resolve(id, 'teltonika', null)));
  for (const r of found) if (r.status === 'ok') await client.directory.touch(r.device, 'teltonika');
  for (const id of ids.slice(0, 50)) client.heard(id);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(60);
  t.deepEqual(client.held(), { records: 50, touched: 50, heard: 50 });
  clock.advance(CACHE_MS);
  await until('the sweep ran', () => client.held().records === 0 && client.held().touched === 0);
  t.deepEqual(
    client.held(),
    { records: 0, touched: 0, heard: 0 },
    'records, touch notes and datagram notes past their time are gone',
  );
  clock.advance(60_000);
  await until('the sweep ran again', () => client.held().touched === 0);
  t.deepEqual(client.held(), { records: 0, touched: 0, heard: 0 });
  // a device looked up again is asked of the core again
  const again = await client.directory.resolve(ids[0], 'teltonika', null);
  t.is(again.status, 'ok');
  t.is(client.held().records, 1);
});
