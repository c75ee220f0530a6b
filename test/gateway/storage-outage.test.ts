import test from 'ava';
import { ManualClock } from '../../core/clock.js';
import type { TestServer } from '../helpers/server.js';
import { startOnOwnPostgres } from '../helpers/instances.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import { capturingLogger } from '../helpers/capture-logger.js';
import * as F from '../helpers/frames.js';
import { udpExchange } from '../helpers/udp.js';
import { PATIENCE_MS } from '../helpers/wait.js';

const IMEI = '356307042441013';
const GT06_IMEI = '356307042441014';
const UDP_IMEI = '356307042441015';
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const fix = (i: number): F.Fix => ({
  time: new Date(T0 + i * 1000),
  lat: 40.4168 + i / 1e4,
  lon: -3.7038,
  speedKmh: 42,
  course: 90,
});

async function storedTimes(s: TestServer, id: string): Promise<string[]> {
  const r = await s.request('POST', `/api/devices/${id}/locations`, {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z', limit: 10000 },
  });
  if (r.status !== 200) throw new Error(`range: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.locations.map((l: { dateTime: string }) => l.dateTime);
}

/** Sends `datagram` and resolves with the reply, or undefined after `ms`. */
/** Resends `frame` every 500 ms, as a tracker does without an ack, until `n` ack bytes arrive. */
async function resendUntilAcked(c: TrackerClient, frame: Buffer, n: number, ms = PATIENCE_MS): Promise<Buffer> {
  const until = Date.now() + ms;
  for (;;) {
    c.write(frame);
    try {
      return await c.read(n, 500);
    } catch (e) {
      if (Date.now() > until || c.closed) throw e;
    }
  }
}

test('gateway: a PostgreSQL outage stops acks without stopping the process; REST answers 503; after it returns the resend is stored and nothing acked is lost', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
  const logger = capturingLogger();
  const { s, pg } = await startOnOwnPostgres(t, {
    env: { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_GT06_PORT: '0', TRACKGATE_OSMAND_PORT: '0' },
    clock,
    logger,
  });
  for (const id of [IMEI, GT06_IMEI, UDP_IMEI, 'phone-1'])
    t.is((await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id } })).status, 201);

  const c = await TrackerClient.connect(s.running.ports.teltonika);
  t.teardown(() => c.end());
  c.write(F.teltonikaLogin(IMEI));
  t.deepEqual(await c.read(1), Buffer.from([1]));
  c.write(F.teltonikaAvl([fix(0), fix(1)]));
  t.deepEqual(await c.read(4), Buffer.from('00000002', 'hex'));
  const g = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => g.end());
  g.write(F.gt06Login(GT06_IMEI, 1));
  t.deepEqual(await g.read(10), F.gt06Ack(0x01, 1));
  g.write(F.gt06Position(fix(0), 2));
  t.deepEqual(await g.read(10), F.gt06Ack(0x22, 2));

  await pg.kill();
  // Past the directory's cache: the next frame looks its device up in the database again.
  clock.advance(10_000);
  const during = F.teltonikaAvl([fix(2), fix(3)]);
  c.write(during);
  g.write(F.gt06Position(fix(1), 3));
  t.true(await c.nothingFor(1500), 'no ack while storage is down');
  t.true(await g.nothingFor(10), 'no ack while storage is down');
  const fresh = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => fresh.end());
  fresh.write(F.gt06Login(GT06_IMEI, 7));
  t.true(await fresh.nothingFor(500), 'a login is not acknowledged either');
  const osmand = await fetch(
    `http://127.0.0.1:${s.running.ports.osmand}/?id=phone-1&lat=40.5&lon=-3.5&timestamp=${T0 / 1000}`,
    { signal: AbortSignal.timeout(5000) },
  );
  t.is(osmand.status, 503, 'OsmAnd asks the phone to retry');
  const udp = F.teltonikaDatagram(UDP_IMEI, 0x07, [fix(0)]);
  t.is(
    await udpExchange(s.running.ports['teltonika/udp'], udp, 1000),
    undefined,
    'a UDP datagram is not acknowledged either',
  );
  const rest = await s.request('GET', '/api/devices', { token: s.adminToken });
  t.is(rest.status, 503);
  t.is(rest.body.code, 'STORAGE_UNAVAILABLE');
  t.false(c.closed || g.closed, 'the connections stay open');
  t.true(
    logger.at('error', /^storage unavailable: frame not acknowledged/).length > 0,
    'the gateway says why nothing is acknowledged',
  );

  await pg.start();
  t.deepEqual(
    await resendUntilAcked(c, during, 4),
    Buffer.from('00000002', 'hex'),
    'the resend is acknowledged once storage is back',
  );
  t.deepEqual(await resendUntilAcked(g, F.gt06Position(fix(1), 3), 10), F.gt06Ack(0x22, 3));
  t.is((await s.request('GET', '/api/devices', { token: s.adminToken })).status, 200);
  t.deepEqual(
    await udpExchange(s.running.ports['teltonika/udp'], udp, PATIENCE_MS),
    Buffer.from('00050000010701', 'hex'),
  );
  t.is(
    (await fetch(`http://127.0.0.1:${s.running.ports.osmand}/?id=phone-1&lat=40.5&lon=-3.5&timestamp=${T0 / 1000}`))
      .status,
    200,
  );
  t.deepEqual(
    await storedTimes(s, IMEI),
    [0, 1, 2, 3].map((i) => new Date(T0 + i * 1000).toISOString()),
    'every acknowledged position is stored',
  );
  t.deepEqual(
    await storedTimes(s, GT06_IMEI),
    [0, 1].map((i) => new Date(T0 + i * 1000).toISOString()),
  );
  t.is((await storedTimes(s, UDP_IMEI)).length, 1);
});
