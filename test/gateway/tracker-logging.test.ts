import test from 'ava';
import { ManualClock } from '../../core/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import { capturingLogger, type CapturingLogger, type Entry } from '../helpers/capture-logger.js';
import * as F from '../helpers/frames.js';
import { PATIENCE_MS } from '../helpers/wait.js';

const GATEWAY_ENV = {
  TRACKGATE_TELTONIKA_PORT: '0',
  TRACKGATE_GT06_PORT: '0',
  TRACKGATE_H02_PORT: '0',
  TRACKGATE_GPS103_PORT: '0',
  TRACKGATE_JT808_PORT: '0',
  TRACKGATE_OSMAND_PORT: '0',
};
const IMEI = '356307042441013';
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const fix = (i: number): F.Fix => ({
  time: new Date(T0 + i * 1000),
  lat: 40.4168,
  lon: -3.7038,
  speedKmh: 42,
  course: 90,
});

async function start(
  t: { teardown(fn: () => unknown): void },
  clock = new ManualClock(Date.UTC(2026, 2, 1, 12)),
): Promise<{ s: TestServer; log: CapturingLogger; clock: ManualClock }> {
  const log = capturingLogger();
  const s = await startServer('sqlite', { env: GATEWAY_ENV, logger: log, clock });
  t.teardown(() => s.stop());
  const r = await s.request('POST', '/api/devices', { token: s.adminToken, body: { id: IMEI, name: 'truck' } });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return { s, log, clock };
}

/** Deterministic garbage (xorshift), so a failure can be replayed. */
function garbage(bytes: number, seed = 0x9e3779b9): Buffer {
  const b = Buffer.alloc(bytes);
  let x = seed >>> 0;
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

/** Writes `data` in 64 KiB pieces, each after the last was taken, until done or the server closes. */
async function flood(c: TrackerClient, data: Buffer): Promise<number> {
  let sent = 0;
  let wake = () => {};
  const onClose = () => wake();
  c.socket.once('close', onClose);
  for (let i = 0; i < data.length && !c.closed; i += 65_536) {
    const piece = data.subarray(i, i + 65_536);
    if (!c.socket.write(piece)) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        c.socket.once('drain', resolve);
      });
      c.socket.removeAllListeners('drain');
    }
    sent += piece.length;
  }
  c.socket.off('close', onClose);
  return sent;
}

const waitFor = async (check: () => boolean, ms = PATIENCE_MS): Promise<boolean> => {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return check();
};

const linesOf = (log: CapturingLogger, protocol: string): Entry[] =>
  log.entries.filter((e) => e.protocol === protocol && e.level !== 'debug');

test('gateway: 4 MB of garbage on any tracker port writes a bounded handful of log lines and closes the connection', async (t) => {
  const { s, log } = await start(t);
  for (const protocol of ['gps103', 'h02', 'gt06', 'teltonika', 'jt808']) {
    const c = await TrackerClient.connect(s.running.ports[protocol]);
    t.teardown(() => c.end());
    const data = garbage(4 << 20, protocol.length * 7919);
    const sent = await flood(c, data);
    t.true(await c.waitClosed(), `${protocol}: the connection is closed (${sent} bytes sent)`);
    t.true(sent < data.length, `${protocol}: closed before all of it was read`);
    await waitFor(() => linesOf(log, protocol).some((e) => e.msg === 'tracker disconnected'));
    const lines = linesOf(log, protocol);
    const perMessage = new Map<string, number>();
    for (const e of lines) perMessage.set(e.msg, (perMessage.get(e.msg) ?? 0) + 1);
    // connected, closing, disconnected, and per kind (malformed, checksum, unknown identity) 5 lines and a count
    t.true(
      lines.length <= 21 && [...perMessage.values()].every((n) => n <= 5),
      `${protocol}: ${lines.length} log lines: ${JSON.stringify([...perMessage])}`,
    );
    t.like(
      lines.find((e) => e.msg === 'tracker disconnected'),
      { level: 'info' },
    );
  }
  const gps103 = linesOf(log, 'gps103');
  t.is(
    gps103.filter((e) => e.msg === 'malformed frame').length,
    5,
    'the first few malformed frames are logged in full',
  );
  t.true(
    (gps103.find((e) => e.msg === 'malformed frames not logged one by one')?.count as number) > 0,
    'the rest as one count',
  );
});

test('gateway: a tracker connecting, identifying itself and disconnecting is logged at info with protocol, address and device', async (t) => {
  const { s, log } = await start(t);
  const c = await TrackerClient.connect(s.running.ports.teltonika);
  c.write(F.teltonikaLogin(IMEI));
  t.deepEqual(await c.read(1), Buffer.from([1]));
  c.write(F.teltonikaAvl([fix(0)]));
  await c.read(4);
  const remote = `127.0.0.1:${c.socket.localPort}`;
  c.end();
  t.true(await waitFor(() => log.at('info', 'tracker disconnected').length === 1));
  t.like(log.at('info', 'tracker connected')[0], { protocol: 'teltonika', remote });
  t.like(log.at('info', 'tracker identified')[0], { protocol: 'teltonika', remote, device: IMEI });
  t.like(log.at('info', 'tracker disconnected')[0], {
    protocol: 'teltonika',
    remote,
    device: IMEI,
    reason: 'closed by the tracker',
    frames: 2,
  });
});

test('gateway: checksum mismatches are logged at warn, a few per connection, then counted', async (t) => {
  const { s, log } = await start(t);
  const c = await TrackerClient.connect(s.running.ports.gt06);
  c.write(F.gt06Login(IMEI, 1));
  await c.read(10);
  for (let i = 0; i < 12; i++) {
    const frame = F.gt06Position(fix(i), 10 + i);
    frame[frame.length - 4] ^= 0xff; // CRC high byte
    c.write(frame);
    t.deepEqual(await c.read(10), F.gt06Ack(0x22, 10 + i), 'accepted by the default policy');
  }
  c.end();
  t.true(await waitFor(() => log.at('info', 'tracker disconnected').length === 1));
  const warned = log.at('warn', /^checksum mismatch:/);
  t.is(warned.length, 5);
  t.like(warned[0], { protocol: 'gt06', device: IMEI });
  t.regex(String(warned[0].reason), /CRC mismatch/);
  t.like(log.at('warn', 'checksum mismatches not logged one by one')[0], { protocol: 'gt06', device: IMEI, count: 7 });
});

test('gateway.osmand: unknown devices and unreadable requests (malformed frames) are logged, at most 20 a minute each, then counted', async (t) => {
  const { s, log, clock } = await start(t);
  const base = `http://127.0.0.1:${s.running.ports.osmand}`;
  t.is((await fetch(`${base}/?id=nobody&lat=1&lon=1`)).status, 404);
  t.like(log.at('info', /unknown or expired device/)[0], {
    protocol: 'osmand',
    identifier: 'nobody',
    remote: '127.0.0.1',
  });
  t.is((await fetch(`${base}/?id=x&lat=abc&lon=1`)).status, 400);
  t.like(log.at('warn', 'malformed frame')[0], {
    protocol: 'osmand',
    reason: 'osmand: lat is not a number',
    method: 'GET',
    url: '/?id=x&lat=abc&lon=1',
  });
  for (let i = 0; i < 30; i++) await fetch(`${base}/?lat=1&lon=1`);
  t.is(log.at('warn', 'malformed frame').length, 20);
  clock.advance(61_000);
  t.is((await fetch(`${base}/?lat=1&lon=1`)).status, 400);
  t.like(log.at('warn', 'malformed frames not logged one by one')[0], { protocol: 'osmand', count: 11 });
  t.is(log.at('warn', 'malformed frame').length, 21, 'a new minute logs again');
});
