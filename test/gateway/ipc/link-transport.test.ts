import test from 'ava';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { startServer } from '../../helpers/server.js';
import { until } from '../../helpers/wait.js';
import { silentLogger } from '../../../core/logger.js';
import { startLocalCoreLink } from '../../../gateway/ipc/core-link.server.js';

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
