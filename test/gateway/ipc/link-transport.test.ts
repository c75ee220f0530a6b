import test from 'ava';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { startServer } from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';
import { silentLogger } from '../../../core/logger.js';
import { startLocalCoreLink } from '../../../gateway/ipc/core-link.server.js';
import { MAX_BATCH_ITEMS } from '../../../gateway/ipc/ipc.messages.js';

/** reports in the one submission: a batch of about 1 MB on the link (MessagePack), the most seen under load */
const REPORTS = 3500;
/** how long the gateway's event loop stays busy after the batch left, unless the core lets it go */
const BUSY_MS = 15_000;

test("gateway.ipc link: a gateway process's batch of about 1 MB reaches the core and is stored while that process's event loop is busy", async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_LICENSES: '10' } });
  t.teardown(() => s.stop());
  const id = '356307042441013';
  t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: 'busy' } })).status, 201);
  const device = await s.running.services.directory.find(id);

  const secret = 'a-secret-of-this-test-0123456789';
  // the link as the core starts it for its own gateway processes (main.ts)
  const { link, address } = await startLocalCoreLink({ secret, ...s.running.services, logger: silentLogger });
  t.teardown(() => link.close());
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(new URL('../../helpers/ts-worker.mjs', import.meta.url), {
    workerData: { module: new URL('../../helpers/busy-gateway.worker.ts', import.meta.url).href, address, secret, device, reports: REPORTS, busyMs: BUSY_MS, flag },
  });
  t.teardown(() => worker.terminate());
  t.is((await once(worker, 'message'))[0], 'ready');

  const answered = once(worker, 'message');
  worker.postMessage('go');
  const stored = async () => ((await s.running.db('locations').where('device_id', id).count({ n: '*' })) as { n: number }[])[0].n;
  // Waits longer than the gateway stays busy: if the batch arrives only once its loop turns again,
  // the rows come, and the worker reports that nobody let it go.
  await until('the batch stored', async () => (await stored()) === REPORTS, BUSY_MS + 10_000).catch(() => undefined);
  Atomics.store(new Int32Array(flag), 0, 1);
  Atomics.notify(new Int32Array(flag), 0);
  t.is((await answered)[0], 'ok', 'the batch reached the core and was stored while the gateway process was busy');
  t.is(await stored(), REPORTS);
});

test("gateway.ipc link: a turn that reads 250 trackers' frames sends their submissions in batches as they are made, so the core stores most while that turn goes on", async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_LICENSES: '10' } });
  t.teardown(() => s.stop());
  const id = '356307042441021';
  t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: 'one turn' } })).status, 201);
  const device = await s.running.services.directory.find(id);
  const secret = 'a-secret-of-this-test-0123456789';
  const { link, address } = await startLocalCoreLink({ secret, ...s.running.services, logger: silentLogger });
  t.teardown(() => link.close());
  const flag = new SharedArrayBuffer(4);
  // 250 trackers' frames in one turn (1,000 under load): every full batch leaves during the turn, the rest at its end
  const submissions = 250;
  const worker = new Worker(new URL('../../helpers/ts-worker.mjs', import.meta.url), {
    workerData: { module: new URL('../../helpers/busy-gateway.worker.ts', import.meta.url).href, address, secret, device, reports: submissions, submissions, busyMs: BUSY_MS, flag },
  });
  t.teardown(() => worker.terminate());
  t.is((await once(worker, 'message'))[0], 'ready');

  const answered = once(worker, 'message');
  worker.postMessage('go');
  const stored = async () => ((await s.running.db('locations').where('device_id', id).count({ n: '*' })) as { n: number }[])[0].n;
  // within 10 s the worker is still busy (BUSY_MS): what is stored by then left during the turn
  await until('most of the turn stored during it', async () => (await stored()) >= 200, 10_000).catch(() => undefined);
  const during = await stored();
  t.true(during >= 200, `${during} of ${submissions} stored while the turn went on`);
  t.is(during, submissions - (submissions % MAX_BATCH_ITEMS), 'every full batch, the rest not yet');
  Atomics.store(new Int32Array(flag), 0, 1);
  Atomics.notify(new Int32Array(flag), 0);
  t.is((await answered)[0], 'ok', 'the core let the busy turn go');
  await until('the rest stored after the turn', async () => (await stored()) === submissions);
});
