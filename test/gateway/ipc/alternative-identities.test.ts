import test from 'ava';
import { startServer } from '../../helpers/server.js';
import { TrackerClient } from '../../helpers/tracker-client.js';
import * as F from '../../helpers/frames.js';

const ENV = { TRACKGATE_GATEWAY_PROCESSES: '1', TRACKGATE_JT808_PORT: '0' };
const T0 = Date.UTC(2026, 2, 1, 10);

test('gateway.ipc: through a gateway process a JT808 terminal reporting 013912345678 is found under either form of its id', async (t) => {
  const s = await startServer('sqlite', { env: ENV });
  t.teardown(() => s.stop());
  for (const id of ['014164192753', '13912345678']) {
    const r = await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } });
    if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  }
  for (const [terminal, stored] of [
    ['014164192753', '014164192753'],
    ['013912345678', '13912345678'],
  ]) {
    const c = await TrackerClient.connect(s.running.ports.jt808);
    t.teardown(() => c.end());
    c.write(F.jt808Location(terminal, { time: new Date(T0), lat: 40.4, lon: -3.7 }, 5));
    t.is((await c.read(20)).subarray(0, 3).toString('hex'), '7e8001', `${terminal}: acknowledged`);
    const locations = await s.request('POST', `/api/devices/${stored}/locations`, {
      token: s.adminToken,
      body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    });
    t.deepEqual(
      locations.body.locations.map((l: { dateTime: string }) => l.dateTime),
      [new Date(T0).toISOString()],
      `${terminal}: stored under ${stored}`,
    );
  }
});
