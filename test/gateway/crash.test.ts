import test from 'ava';
import { once } from 'node:events';
import { createStorage } from '../helpers/backends.js';
import { ADMIN_KEY, startServer, testEnv } from '../helpers/server.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import * as F from '../helpers/frames.js';
import { spawnTrackgate } from '../helpers/spawn-trackgate.js';

const IMEI = '356307042441013';

test('gateway.crash: after SIGKILL mid-stream, every acknowledged position is stored', async (t) => {
  const storage = await createStorage('sqlite');
  t.teardown(() => storage.cleanup());
  const env = testEnv({ ...storage.env, TRACKGATE_LOG_LEVEL: 'info', TRACKGATE_TELTONIKA_PORT: '0' });
  const { child, ports } = await spawnTrackgate(env);
  t.teardown(() => child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${ports.http}`;
  const token = (
    (await (
      await fetch(`${base}/api/Auth/Token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'admin', apiKey: ADMIN_KEY }),
      })
    ).json()) as { token: string }
  ).token;
  const created = await fetch(`${base}/api/devices`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ id: IMEI, name: 'crash' }),
  });
  t.is(created.status, 201);

  const c = await TrackerClient.connect(ports.teltonika);
  c.write(F.teltonikaLogin(IMEI));
  t.deepEqual(await c.read(1), Buffer.from([1]));
  // Stream frames of 5 records, up to 10 frames in flight; count what each ack acknowledges.
  const T0 = Date.UTC(2026, 2, 1);
  let sent = 0;
  let acked = 0;
  const inflight: number[] = [];
  const killAt = 300;
  let killed = false;
  const sendOne = () => {
    const fixes = Array.from({ length: 5 }, (_, i) => ({
      time: new Date(T0 + (sent * 5 + i) * 1000),
      lat: 40 + sent / 1e4,
      lon: -3,
    }));
    c.write(F.teltonikaAvl(fixes));
    inflight.push(sent++);
  };
  while (!killed) {
    while (inflight.length < 10) sendOne();
    let ack: Buffer;
    try {
      ack = await c.read(4); // throws once the killed process's connection closes
    } catch {
      break;
    }
    t.is(ack.readUInt32BE(0), 5);
    inflight.shift();
    acked += 5;
    if (acked >= killAt * 5 && !killed) {
      child.kill('SIGKILL');
      killed = true;
    }
  }
  // Drain acks that were already on the wire before the kill.
  for (;;) {
    try {
      const ack = await c.read(4); // what was on the wire, then the close
      acked += ack.readUInt32BE(0);
    } catch {
      break;
    }
  }
  c.end();
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  t.true(acked >= killAt * 5, `acknowledged ${acked} positions before the kill`);

  const s = await startServer('sqlite', { storageEnv: storage.env });
  t.teardown(() => s.stop());
  const stored = await s.request('POST', `/api/devices/${IMEI}/locations`, {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z', limit: 10000 },
  });
  const times = new Set(stored.body.locations.map((l: { dateTime: string }) => l.dateTime));
  let missing = 0;
  for (let i = 0; i < acked; i++) if (!times.has(new Date(T0 + i * 1000).toISOString())) missing++;
  t.is(missing, 0, `all ${acked} acknowledged positions are stored (${times.size} stored in all)`);
});
