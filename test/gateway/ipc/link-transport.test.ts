import test, { type ExecutionContext } from 'ava';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { startServer } from '../../helpers/server.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';
import { silentLogger } from '../../../core/logger.js';
import { startLocalCoreLink } from '../../../gateway/ipc/core-link.server.js';
import { MAX_BATCH_ITEMS } from '../../../gateway/ipc/ipc.messages.js';

/** reports in the one submission: a batch of about 1 MB on the link (MessagePack), the most seen under load */
const REPORTS = 3500;
/**
 * how long the gateway's event loop stays busy after the batch left, unless the core lets it go:
 * as long as a test waits for anything, so that on a busy machine the core's storing it (which
 * took more than 15 s there) still falls within the busy turn
 */
const BUSY_MS = PATIENCE_MS;

/**
 * A real trackgate with one device, the link as the core starts it for its own gateway processes
 * (main.ts), and a gateway's end of it in a worker thread (test/helpers/busy-gateway.worker.ts,
 * given `work`), ready: `go()` starts it and resolves with what the worker says once `release()`
 * lets its busy event loop go (or nobody did); `stored()` counts the device's rows.
 */
async function busyGateway(t: ExecutionContext, id: string, work: { reports: number; submissions?: number }) {
  const s = await startServer('sqlite', { env: { TRACKGATE_LICENSES: '10' } });
  t.teardown(() => s.stop());
  t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: 'busy' } })).status, 201);
  const device = await s.running.services.directory.find(id);
  const secret = 'a-secret-of-this-test-0123456789';
  const { link, address } = await startLocalCoreLink({ secret, ...s.running.services, logger: silentLogger });
  t.teardown(() => link.close());
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(new URL('../../helpers/ts-worker.mjs', import.meta.url), {
    workerData: {
      module: new URL('../../helpers/busy-gateway.worker.ts', import.meta.url).href,
      address,
      secret,
      device,
      ...work,
      busyMs: BUSY_MS,
      flag,
    },
  });
  t.teardown(() => worker.terminate());
  t.is((await once(worker, 'message'))[0], 'ready');
  return {
    go(): Promise<unknown> {
      const answered = once(worker, 'message').then(([said]) => said as unknown);
      worker.postMessage('go');
      return answered;
    },
    release(): void {
      Atomics.store(new Int32Array(flag), 0, 1);
      Atomics.notify(new Int32Array(flag), 0);
    },
    stored: async () =>
      ((await s.running.db('locations').where('device_id', id).count({ n: '*' })) as { n: number }[])[0].n,
  };
}

test("gateway.ipc link: a gateway process's batch of about 1 MB reaches the core and is stored while that process's event loop is busy", async (t) => {
  const gateway = await busyGateway(t, '356307042441013', { reports: REPORTS });
  const answered = gateway.go();
  // Waits longer than the gateway stays busy: if the batch arrives only once its loop turns again,
  // the rows come, and the worker reports that nobody let it go.
  await until('the batch stored', async () => (await gateway.stored()) === REPORTS, BUSY_MS + 10_000, 200).catch(
    () => undefined,
  );
  gateway.release();
  t.is(await answered, 'ok', 'the batch reached the core and was stored while the gateway process was busy');
  t.is(await gateway.stored(), REPORTS);
});

test("gateway.ipc link: a turn that reads 250 trackers' frames sends their submissions in batches as they are made, so the core stores most while that turn goes on", async (t) => {
  // 250 trackers' frames in one turn (1,000 under load): every full batch leaves during the turn, the rest at its end
  const submissions = 250;
  const gateway = await busyGateway(t, '356307042441021', { reports: submissions, submissions });
  const answered = gateway.go();
  // within half of BUSY_MS the worker is still busy: what is stored by then left during the turn
  await until(
    'most of the turn stored during it',
    async () => (await gateway.stored()) >= submissions - (submissions % MAX_BATCH_ITEMS),
    BUSY_MS / 2,
    200,
  ).catch(() => undefined);
  const during = await gateway.stored();
  t.true(during >= 200, `${during} of ${submissions} stored while the turn went on`);
  t.is(during, submissions - (submissions % MAX_BATCH_ITEMS), 'every full batch, the rest not yet');
  gateway.release();
  t.is(await answered, 'ok', 'the core let the busy turn go');
  await until('the rest stored after the turn', async () => (await gateway.stored()) === submissions);
});
