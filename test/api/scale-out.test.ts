import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { startServer, type TestServer } from '../helpers/server.js';
import { startPair } from '../helpers/instances.js';
import { ManualClock } from '../../core/clock.js';
import { backends } from '../helpers/backends.js';
import { useRedis } from '../helpers/redis.js';
import { startSmtpReceiver, closedPort } from '../helpers/receivers.js';
import mqtt from 'mqtt';
import pg from 'pg';
import { TrackerClient } from '../helpers/tracker-client.js';
import * as F from '../helpers/frames.js';
import { udpExchange } from '../helpers/udp.js';
import { PATIENCE_MS, until } from '../helpers/wait.js';

/** how long a UDP tracker here waits for an answer before it sends its datagram again */
const UDP_RESEND_MS = 10_000;

const runs =
  (await backends()).includes('postgres') && (await useRedis('scale-out (two instances on PostgreSQL and Redis)'));
// One at a time: each pair of instances holds up to 2 × TRACKGATE_DATABASE_POOL connections, and
// nine of them at once, beside another suite, took every connection PostgreSQL allows (100):
// 'sorry, too many clients already' came back as 503s and CONNACK 3.

if (runs) {
  test.serial(
    'scale-out: 20 concurrent reactivations over two instances with one free licence let exactly one through',
    async (t) => {
      const [a, b] = await startPair(t, { TRACKGATE_LICENSES: '1' });
      for (let i = 0; i < 20; i++) {
        const r = await a.request('POST', '/api/devices', {
          token: a.adminToken,
          body: { id: `d${i}`, name: `d${i}`, expires: '2020-01-01T00:00:00Z' },
        });
        t.is(r.status, 201);
      }
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).request('PATCH', `/api/devices/d${i}`, {
            token: (i % 2 ? a : b).adminToken,
            body: [{ op: 'replace', path: '/expires', value: null }],
          }),
        ),
      );
      t.is(results.filter((r) => r.status === 200).length, 1);
      t.true(
        results
          .filter((r) => r.status !== 200)
          .every((r) => r.status === 409 && r.body.code === 'NO_LICENSE_AVAILABLE'),
      );
      t.like((await b.request('GET', '/api/account', { token: b.adminToken })).body.account.licenses, {
        total: 1,
        used: 1,
        free: 0,
      });
      t.is((await a.request('GET', '/api/devices', { token: a.adminToken })).body.devices.length, 1);
    },
  );

  test.serial(
    'scale-out: one device id created at once on two instances: one 201, the rest 409 DEVICE_EXISTS, and its licence stays counted in the licence store',
    async (t) => {
      const [a, b] = await startPair(t, { TRACKGATE_LICENSES: '2' });
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? a : b).request('POST', '/api/devices', {
            token: (i % 2 ? a : b).adminToken,
            body: { id: 'twin', name: `twin ${i}` },
          }),
        ),
      );
      t.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
      t.true(
        results.filter((r) => r.status === 409).every((r) => r.body.code === 'DEVICE_EXISTS'),
        'never a 500 from the losing inserts',
      );
      const accountId = (await a.request('GET', '/api/account', { token: a.adminToken })).body.account.id;
      t.is(
        await a.running.services.licenses.used(accountId, Date.now()),
        1,
        'the losers did not release the licence the created device holds',
      );
    },
  );

  test.serial(
    'scale-out: 200 concurrent alerts over two instances on a device with limit 10 send exactly 10 e-mails',
    async (t) => {
      const smtp = await startSmtpReceiver();
      t.teardown(() => smtp.close());
      const [a, b] = await startPair(t, { TRACKGATE_SMTP_URL: smtp.url });
      await a.request('POST', '/api/devices', {
        token: a.adminToken,
        body: { id: 'd1', name: 'd1', alertEmails: ['ops@example.com'], dailyEmailLimit: 10 },
      });
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          (i % 2 ? a : b).request('POST', '/api/devices/d1/alerts', {
            token: (i % 2 ? a : b).adminToken,
            body: { alert: { alertName: 'SOSButton' } },
          }),
        ),
      );
      t.true(results.every((r) => r.status === 201));
      t.is(results.filter((r) => r.body.alerts[0].notifications.includes('Email')).length, 10);
      await Promise.all([a.running.services.notifications.drain(), b.running.services.notifications.drain()]);
      await a.running.services.notifications.drain();
      t.is(smtp.mails.length, 10, 'exactly 10, delivered once each by whichever instance leased them');
      t.like((await b.request('GET', '/api/devices/d1', { token: b.adminToken })).body.device, { emailsSentToday: 10 });
    },
  );

  test.serial(
    'scale-out: an API user subscribed to the live feed on one instance receives what another instance stored',
    async (t) => {
      const [a, b] = await startPair(t, { TRACKGATE_MQTT_PORT: '0' });
      await a.request('POST', '/api/devices', { token: a.adminToken, body: { id: 'd1', name: 'd1' } });
      const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${b.running.ports.mqtt}`, {
        username: 'admin',
        password: b.adminToken,
        clientId: 'admin-live',
        reconnectPeriod: 0,
      });
      t.teardown(() => client.endAsync());
      await client.subscribeAsync('live/#', { qos: 0 });
      let got: { topic: string; body: { latitude: number } } | undefined;
      client.on('message', (topic, payload) => (got ??= { topic, body: JSON.parse(payload.toString()) }));
      // B's subscription reaches A through Redis after its SUBACK: a position stored before then is
      // not sent to it, so A stores one every second (each a new fix) until B's subscriber has one
      let second = 0;
      await until(
        'a position stored on A reaches the subscriber on B',
        async () => {
          if (got) return true;
          const dateTime = new Date(Date.UTC(2026, 2, 1, 10, 0, second++)).toISOString();
          await a.request('POST', '/api/devices/d1/locations', {
            token: a.adminToken,
            body: { location: { dateTime, latitude: 12.5, longitude: 1 } },
          });
          return false;
        },
        PATIENCE_MS,
        1000,
      );
      t.is(got?.topic, 'live/d1/locations');
      t.is(got?.body.latitude, 12.5);
    },
  );

  test.serial('scale-out: a new API key stops the old tokens on every instance at once', async (t) => {
    const [a, b] = await startPair(t, {});
    const created = await a.request('POST', '/api/users', {
      token: a.adminToken,
      body: { name: 'Ops', email: 'ops@example.com', country: 'ES', timeZone: 'UTC' },
    });
    const old = await b.token('ops@example.com', created.body.apiKey);
    t.is(
      (await b.request('GET', '/api/devices', { token: old })).status,
      200,
      'the token works on instance B (and is cached there)',
    );
    t.is((await a.request('POST', `/api/users/${created.body.id}/apiKey`, { token: a.adminToken })).status, 200);
    await until(
      'B refuses the old token',
      async () => (await b.request('GET', '/api/devices', { token: old })).status === 401,
      PATIENCE_MS,
      10,
    );
    t.pass();
  });

  test.serial(
    'scale-out: trackers on two instances store at once into one PostgreSQL: every position acknowledged, stored once and journaled once, with the fixes of every tracker sent to both instances at the same time (over TCP to one, UDP to the other)',
    async (t) => {
      const port = await closedPort();
      const [a, b] = await startPair(t, {
        TRACKGATE_TELTONIKA_PORT: '0',
        TRACKGATE_LICENSES: '40',
        TRACKGATE_FORWARD_ALLOW: '127.0.0.1',
      });
      const devicesCount = 16;
      const frames = 25;
      const perFrame = 10;
      const imei = (d: number) => String(356307042440000 + d);
      for (let d = 0; d < devicesCount; d++)
        t.is(
          (await a.request('POST', '/api/devices', { token: a.adminToken, body: { id: imei(d), name: `t${d}` } }))
            .status,
          201,
        );
      // an enabled forward whose target never answers: every stored location is journaled for it (the stream locks are taken)
      const hook = await a.request('POST', '/api/forwards', {
        token: a.adminToken,
        body: { name: 'Down', type: 'webhook', url: `http://127.0.0.1:${port}/in` },
      });
      t.is(hook.status, 201);
      const T0 = Date.UTC(2026, 2, 1);
      const frame = (d: number, f: number) =>
        F.teltonikaAvl(
          Array.from({ length: perFrame }, (_, i) => ({
            time: new Date(T0 + (f * perFrame + i) * 1000),
            lat: 40 + d / 100 + f / 1e4,
            lon: -3 - i / 1e4,
          })),
        );
      /** One tracker: logs in, sends its frames with up to 5 unacknowledged, counts what is acknowledged. */
      const tracker = async (s: TestServer, d: number): Promise<number> => {
        const c = await TrackerClient.connect(s.running.ports.teltonika);
        t.teardown(() => c.socket.destroy());
        c.write(F.teltonikaLogin(imei(d)));
        t.deepEqual(await c.read(1), Buffer.from([1]));
        let acked = 0;
        let sent = 0;
        while (acked < frames * perFrame) {
          while (sent < frames && sent - acked / perFrame < 5) c.write(frame(d, sent++));
          acked += (await c.read(4)).readUInt32BE(0);
        }
        return acked;
      };
      /**
       * The same tracker's fixes as UDP datagrams, up to 5 unanswered, each sent again until answered.
       * Not a second TCP connection: a device's new connection on one instance closes its older one
       * on the other (README Commands, several instances).
       */
      const udpTracker = async (s: TestServer, d: number): Promise<number> => {
        let acked = 0;
        const send = async (f: number) => {
          const fixes = Array.from({ length: perFrame }, (_, i) => ({
            time: new Date(T0 + (f * perFrame + i) * 1000),
            lat: 40 + d / 100 + f / 1e4,
            lon: -3 - i / 1e4,
          }));
          // a tracker's resend: a datagram (or its answer) can be lost; not a deadline, the attempts make one
          for (let attempt = 0; attempt < PATIENCE_MS / UDP_RESEND_MS; attempt++) {
            const answer = await udpExchange(
              s.running.ports['teltonika/udp'],
              F.teltonikaDatagram(imei(d), f, fixes),
              UDP_RESEND_MS,
            );
            if (answer) return void (acked += perFrame);
          }
        };
        for (let f = 0; f < frames; f += 5)
          await Promise.all(Array.from({ length: Math.min(5, frames - f) }, (_, i) => send(f + i)));
        return acked;
      };
      // every device on one instance; and every device also sends the same fixes to the other at the same time
      const runs = [
        ...Array.from({ length: devicesCount }, (_, d) => tracker(d % 2 ? a : b, d)),
        ...Array.from({ length: devicesCount }, (_, d) => udpTracker(d % 2 ? b : a, d)),
      ];
      const acked = await Promise.all(runs);
      t.true(
        acked.every((n) => n === frames * perFrame),
        'every tracker had every position acknowledged',
      );
      const count = async (table: string) =>
        Number(((await a.running.db(table).count({ n: '*' }).first()) as { n: number | string }).n);
      t.is(await count('locations'), devicesCount * frames * perFrame, 'each position stored once');
      t.is(
        await count('forward_events'),
        devicesCount * frames * perFrame,
        'and journaled once: the fixes sent twice were identical resends the second time',
      );
      for (const d of [0, 5, devicesCount - 1]) {
        const last = await b.request('GET', `/api/devices/${imei(d)}/lastLocation`, { token: b.adminToken });
        t.is(last.body.lastLocation.dateTime, new Date(T0 + (frames * perFrame - 1) * 1000).toISOString());
      }
    },
  );

  test.serial(
    'scale-out: a tracker that moves to another instance has its old connection closed, and a command sent through the instance it left reaches its new connection',
    async (t) => {
      const [a, b] = await startPair(t, { TRACKGATE_TELTONIKA_PORT: '0', TRACKGATE_COMMAND_WAIT: '120' });
      const imei = '356307042449001';
      t.is(
        (await a.request('POST', '/api/devices', { token: a.adminToken, body: { id: imei, name: 'mover' } })).status,
        201,
      );
      const old = await TrackerClient.connect(b.running.ports.teltonika);
      t.teardown(() => old.end());
      old.write(F.teltonikaLogin(imei));
      t.deepEqual(await old.read(1), Buffer.from([1]));
      old.write(F.teltonikaAvl([{ time: new Date(Date.now() - 60_000), lat: 40, lon: -3 }]));
      t.is((await old.read(4)).readUInt32BE(0), 1);
      // the tracker's address changed: it connects to instance A, its connection on B left half-open
      const now = await TrackerClient.connect(a.running.ports.teltonika);
      t.teardown(() => now.end());
      now.write(F.teltonikaLogin(imei));
      t.deepEqual(await now.read(1), Buffer.from([1]));
      t.true(await old.waitClosed(), 'instance B closed the connection the tracker left');
      const sent = b.request('POST', `/api/devices/${imei}/sendCommand`, {
        token: b.adminToken,
        body: { command: 'getinfo' },
      });
      const frame = await now.read(8);
      t.is(frame.readUInt32BE(0), 0, 'the command reached the connection the tracker uses now');
      await now.read(frame.readUInt32BE(4) + 4);
      now.write(F.teltonikaAnswer('fw 1.4.2'));
      const reply = await sent;
      t.is(reply.status, 200);
      t.is(reply.body.result, 'fw 1.4.2');
    },
  );

  test.serial(
    'scale-out: TRACKGATE_DATABASE_POOL bounds the PostgreSQL connections of an instance under load, and every request is answered',
    async (t) => {
      const [a, b] = await startPair(t, {
        TRACKGATE_DATABASE_POOL: '4',
        TRACKGATE_RATE_LIMIT: '0',
        TRACKGATE_LICENSES: '100',
      });
      const url = new URL(a.storageEnv.TRACKGATE_DATABASE_URL);
      const watcher = new pg.Client({
        connectionString: a.storageEnv.TRACKGATE_DATABASE_URL,
        application_name: 'pool-watcher',
      });
      await watcher.connect();
      t.teardown(() => watcher.end());
      let most = 0;
      let watching = true;
      const watch = (async () => {
        while (watching) {
          const r = await watcher.query(
            "select count(*)::int as n from pg_stat_activity where datname = $1 and application_name = 'trackgate'",
            [url.pathname.slice(1)],
          );
          most = Math.max(most, r.rows[0].n);
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) => {
          const s = i % 2 ? a : b;
          return i % 3 === 0
            ? s.request('GET', '/api/devices', { token: s.adminToken })
            : s.request('POST', '/api/devices', { token: s.adminToken, body: { id: `p${i}`, name: `p${i}` } });
        }),
      );
      watching = false;
      await watch;
      t.true(
        replies.every((r) => r.status === 200 || r.status === 201),
        JSON.stringify(replies.filter((r) => r.status >= 300).map((r) => r.body)),
      );
      t.true(most <= 8, `two instances with a pool of 4 held ${most} connections`);
    },
  );

  test.serial('scale-out: request limits and usage are shared by the instances', async (t) => {
    // One clock for both instances, fixed in the middle of a minute: every request falls in the
    // same minute, so a count that is not shared has no minute boundary to hide behind.
    const clock = new ManualClock('2026-03-01T10:00:30Z');
    const [a, b] = await startPair(t, { TRACKGATE_RATE_LIMIT: '6' }, clock);
    const replies = [];
    for (let i = 0; i < 6; i++)
      replies.push(await (i % 2 ? a : b).request('GET', '/api/devices', { token: a.adminToken }));
    t.deepEqual(
      replies.map((r) => r.status),
      [200, 200, 200, 200, 200, 200],
    );
    t.deepEqual(
      replies.map((r) => r.body.apiUsage),
      [1, 2, 3, 4, 5, 6],
      'each instance counts the requests the other answered',
    );
    t.deepEqual(
      replies.map((r) => r.body.apiDailyUsage),
      [1, 2, 3, 4, 5, 6],
    );
    for (const s of [a, b]) {
      const limited = await s.request('GET', '/api/devices', { token: a.adminToken });
      t.is(limited.status, 429, 'past six requests in the minute, either instance refuses');
      t.is(limited.headers.get('retry-after'), '30', 'until the minute ends');
    }
    clock.advance(30_000);
    const next = await b.request('GET', '/api/devices', { token: a.adminToken });
    t.is(next.status, 200, 'a new minute starts a new count');
    t.is(next.body.apiUsage, 1);
  });
}

async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  for (const end = Date.now() + PATIENCE_MS; Date.now() < end; ) {
    await new Promise((r) => setTimeout(r, 100));
    const ok = await new Promise<boolean>((resolve) => {
      const p = spawn('redis-cli', ['-p', String(port), 'ping'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('close', () => resolve(out.includes('PONG')));
    });
    if (ok) return child;
  }
  throw new Error('redis-server did not start');
}

test('scale-out: while Redis is unreachable alerts are stored and notifications wait in the outbox, then go out counted', async (t) => {
  if (!(await useRedis('redis outage'))) return t.pass('redis-server not available');
  const port = await closedPort();
  let redis = await startRedisServer(port);
  t.teardown(() => redis.kill('SIGKILL'));
  const smtp = await startSmtpReceiver();
  t.teardown(() => smtp.close());
  const s = await startServer('sqlite', {
    env: { TRACKGATE_REDIS_URL: `redis://127.0.0.1:${port}`, TRACKGATE_SMTP_URL: smtp.url },
  });
  t.teardown(() => s.stop());
  await s.request('POST', '/api/devices', {
    token: s.adminToken,
    body: { id: 'd1', name: 'd1', alertEmails: ['ops@example.com'], dailyEmailLimit: 2 },
  });
  redis.kill('SIGKILL');
  await once(redis, 'exit');
  const stored = [];
  for (let i = 0; i < 3; i++)
    stored.push(
      await s.request('POST', '/api/devices/d1/alerts', {
        token: s.adminToken,
        body: { alert: { alertName: 'SOSButton', dateTime: `2026-03-01T10:00:0${i}Z` } },
      }),
    );
  t.true(
    stored.every((r) => r.status === 201),
    'alerts are stored while Redis is down',
  );
  t.true(
    stored.every((r) => r.body.alerts[0].notifications.length === 0),
    'nothing is counted yet',
  );
  const loc = await s.request('POST', '/api/devices/d1/locations', {
    token: s.adminToken,
    body: { location: { dateTime: '2026-03-01T10:00:00Z', latitude: 1, longitude: 1 } },
  });
  t.is(loc.status, 201, 'positions are stored too');
  await s.running.services.notifications.drain();
  t.is(smtp.mails.length, 0, 'nothing is sent uncounted');
  redis = await startRedisServer(port);
  // Retries are spaced by the backoff; wait for every message to be counted (sent or over the limit).
  await until(
    'every alert decided',
    async () => {
      s.running.services.notifications.kick();
      const alerts = await s.request('POST', '/api/devices/d1/alerts', {
        token: s.adminToken,
        body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
      });
      return (
        alerts.body.alerts.filter(
          (a: { notifications: string[]; suppressed: Record<string, string> }) =>
            a.notifications.length || a.suppressed.Email,
        ).length === 3
      );
    },
    PATIENCE_MS,
    250,
  );
  await until('two e-mails sent', () => smtp.mails.length >= 2);
  await s.running.services.notifications.drain();
  t.is(smtp.mails.length, 2, 'once Redis answers, the waiting messages are counted: 2 sent, the third over the limit');
  const alerts = await s.request('POST', '/api/devices/d1/alerts', {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
  });
  t.deepEqual(alerts.body.alerts.map((a: { notifications: string[] }) => a.notifications.join()).sort(), [
    '',
    'Email',
    'Email',
  ]);
  t.like((await s.request('GET', '/api/devices/d1', { token: s.adminToken })).body.device, { emailsSentToday: 2 });
});
