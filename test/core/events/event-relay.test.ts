import test from 'ava';
import { ManualClock } from '../../../core/clock.js';
import type { TestServer } from '../../helpers/server.js';
import { startPair } from '../../helpers/instances.js';
import { backends } from '../../helpers/backends.js';
import { useRedis } from '../../helpers/redis.js';
import { PATIENCE_MS, until } from '../../helpers/wait.js';

const runs =
  (await backends()).includes('postgres') && (await useRedis('event relay (two instances on PostgreSQL and Redis)'));

/** Status of an OsmAnd position sent to the instance's tracker port. */
async function osmand(s: TestServer, deviceId: string, clock: ManualClock): Promise<number> {
  const r = await fetch(
    `http://127.0.0.1:${s.running.ports.osmand}/?id=${deviceId}&lat=40.5&lon=-3.5&timestamp=${Math.floor(clock.now().getTime() / 1000)}`,
  );
  await r.text();
  return r.status;
}

if (runs) {
  test('event-relay: a device expired through one instance is refused at once by the tracker port of another', async (t) => {
    const clock = new ManualClock(Date.now());
    const [a, b] = await startPair(t, { TRACKGATE_OSMAND_PORT: '0' }, clock);
    t.is(
      (await a.request('POST', '/api/devices', { token: a.adminToken, body: { id: 'd1', name: 'd1' } })).status,
      201,
    );
    t.is(await osmand(b, 'd1', clock), 200, 'instance B stores its position (and caches the device)');

    const expires = new Date(clock.now().getTime() - 3600_000).toISOString();
    t.is(
      (
        await a.request('PATCH', '/api/devices/d1', {
          token: a.adminToken,
          body: [{ op: 'replace', path: '/expires', value: expires }],
        })
      ).status,
      200,
    );
    // The clock stands still, so B's few-seconds device cache never runs out: only the relayed change can clear it.
    await until(
      'instance B refuses the expired device',
      async () => (await osmand(b, 'd1', clock)) === 404,
      PATIENCE_MS,
      50,
    );
    t.pass();
  });
}
