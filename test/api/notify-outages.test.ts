/**
 * Notification receivers that fail the way real ones do: an SMTP relay that refuses connections,
 * then accepts TCP and never greets, then greets but never answers the end of DATA, then works;
 * an SMS gateway that takes the request and never answers. Nothing may stop the outbox worker,
 * and shutdown must not wait on a receiver.
 */
import test from 'ava';
import http from 'node:http';
import net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createDevice, startServer, type TestServer } from '../helpers/server.js';
import { closedPort, startSmtpReceiver, type SmtpReceiver } from '../helpers/receivers.js';
import { ManualClock } from '../../core/clock.js';
import { capturingLogger } from '../helpers/capture-logger.js';
import { PATIENCE_MS, timed, until } from '../helpers/wait.js';

/**
 * The send timeout of the tests whose receivers fail: short, so that a receiver that never answers
 * fails a try soon, and still long enough for a working receiver to be done within it on a busy
 * machine (500 ms was not: a good relay's e-mail timed out and was tried again).
 */
const SEND_TIMEOUT_MS = 5000;
/** a send timeout no test waits out: a stop that returns at all did not wait for the send */
const NEVER_MS = '600000';

type SmtpMode = 'refuse' | 'silent' | 'stall' | 'ok';

/**
 * One SMTP address whose behaviour the test switches: `refuse` (nothing listens), `silent` (TCP
 * accepted, no greeting ever), `stall` (a real SMTP session that never answers the end of DATA),
 * `ok` (a real receiver that records each mail).
 */
async function flakySmtp(): Promise<{
  url: string;
  good: SmtpReceiver;
  set(mode: SmtpMode): Promise<void>;
  dataStarted(): number;
  close(): Promise<void>;
}> {
  const port = await closedPort();
  const good = await startSmtpReceiver();
  const goodPort = Number(new URL(good.url).port);
  let stalled = 0;
  const stall = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream) {
      stalled++;
      stream.resume();
    },
  });
  await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
  const stallPort = (stall.server.address() as net.AddressInfo).port;
  let mode: SmtpMode = 'refuse';
  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (mode === 'silent') return;
    const back = net.connect({ host: '127.0.0.1', port: mode === 'stall' ? stallPort : goodPort });
    back.on('error', () => socket.destroy());
    socket.on('close', () => back.destroy());
    back.on('close', () => socket.destroy());
    socket.pipe(back).pipe(socket);
  });
  const listening = () => front.listening;
  return {
    url: `smtp://127.0.0.1:${port}`,
    good,
    dataStarted: () => stalled,
    async set(next) {
      mode = next;
      if (next === 'refuse' && listening()) await new Promise<void>((resolve) => front.close(() => resolve()));
      if (next !== 'refuse' && !listening())
        await new Promise<void>((resolve) => front.listen(port, '127.0.0.1', resolve));
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (listening()) await new Promise<void>((resolve) => front.close(() => resolve()));
      await new Promise<void>((resolve) => stall.close(() => resolve()));
      await good.close();
    },
  };
}

/** An SMS gateway that reads each request and, while `hang` is set, never answers it. */
async function hangingSms(): Promise<{ url: string; received: string[]; hang: boolean; close(): Promise<void> }> {
  const received: string[] = [];
  const gateway = { url: '', received, hang: true, close: async () => {} };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      received.push(body);
      if (!gateway.hang) res.end('queued');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/sms`;
  gateway.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return gateway;
}

const device = (s: TestServer, body: Record<string, unknown>) => createDevice(s, String(body.id), body);

const raise = async (s: TestServer, id: string): Promise<number> => {
  const r = await s.request('POST', `/api/devices/${id}/alerts`, {
    token: s.adminToken,
    body: { alert: { alertName: 'SOSButton', text: 'Driver pressed SOS' } },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return r.body.alerts[0].id as number;
};

/** trackgate sending e-mail through a flakySmtp() (refusing at first), on a manual clock, logging to a capturing logger */
async function withFlakySmtp(t: { teardown(fn: () => unknown): void }) {
  const smtp = await flakySmtp();
  t.teardown(() => smtp.close());
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const log = capturingLogger();
  const s = await startServer('sqlite', {
    clock,
    logger: log,
    env: {
      TRACKGATE_SMTP_URL: smtp.url,
      TRACKGATE_NOTIFY_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
      TRACKGATE_TOKEN_TTL: '86400',
    },
  });
  t.teardown(() => s.stop());
  return { smtp, clock, log, s };
}

const outboxRows = (s: TestServer) =>
  s.running.db('outbox').select('device_id', 'status', 'attempts', 'lease_until', 'next_attempt_at').orderBy('id');

test('notify: an SMTP relay that refuses, then never greets, then stalls in DATA stops nothing; once it answers every alert is delivered once', async (t) => {
  const { smtp, clock, log, s } = await withFlakySmtp(t);
  for (const id of ['d1', 'd2', 'd3', 'd4']) await device(s, { id, alertEmails: ['ops@example.com'] });
  const kick = () => s.running.services.notifications.kick();
  const attempts = async (n: number) =>
    (await outboxRows(s)).every((r: { attempts: number }) => Number(r.attempts) >= n);

  for (const id of ['d1', 'd2', 'd3']) await raise(s, id);
  await until('three refused attempts', () => log.entries.filter((e) => /will retry/.test(e.msg)).length >= 3);

  await smtp.set('silent');
  clock.advance(60_000);
  kick();
  await until('second attempts, against a server that never greets', () => attempts(2));

  await smtp.set('stall');
  clock.advance(120_000);
  kick();
  await until('third attempts, against a server that never answers DATA', () => attempts(3));
  t.true(smtp.dataStarted() >= 3, 'the stalled server did get as far as DATA');
  const pending = await outboxRows(s);
  t.true(
    pending.every((r: { status: string; lease_until: unknown }) => r.status === 'pending' && r.lease_until === null),
    'each failed try gave its lease back',
  );

  await smtp.set('ok');
  const later = await raise(s, 'd4');
  clock.advance(300_000);
  kick();
  await until('every alert delivered', () => smtp.good.mails.length >= 4);
  await s.running.services.notifications.drain();
  t.is(smtp.good.mails.length, 4, 'once each');
  t.deepEqual(
    (await outboxRows(s)).map((r: { status: string }) => r.status),
    ['sent', 'sent', 'sent', 'sent'],
  );
  for (const id of ['d1', 'd2', 'd3', 'd4'])
    t.like((await s.request('GET', `/api/devices/${id}`, { token: s.adminToken })).body.device, { emailsSentToday: 1 });

  const retries = log.entries.filter((e) => /will retry/.test(e.msg));
  t.true(
    retries.every((l) => l.level === 'warn'),
    'failures are logged at warn',
  );
  t.is(retries.length, 9, 'three failed tries for each of the first three alerts');
  t.true(retries.some((l) => /ECONNREFUSED/.test(String(l.err))));
  t.true(retries.some((l) => /Greeting never received|did not accept|timeout/i.test(String(l.err))));
  const delivered = log.entries.filter((e) => /e-mail delivered/.test(e.msg));
  t.is(delivered.length, 4);
  t.true(delivered.every((l) => l.level === 'info'));
  t.like(
    delivered.find((l) => l.alert === later),
    { device: 'd4', channel: 'Email', recipients: 1 },
  );
  t.false(JSON.stringify(delivered).includes('Driver pressed SOS'), 'the message itself is not logged');
});

test('notify: stop() returns within a bound while an e-mail hangs in DATA, and the message is sent after the next start', async (t) => {
  const smtp = await flakySmtp();
  t.teardown(() => smtp.close());
  await smtp.set('stall');
  const first = await startServer('sqlite', {
    env: { TRACKGATE_SMTP_URL: smtp.url, TRACKGATE_NOTIFY_TIMEOUT_MS: NEVER_MS },
  });
  await device(first, { id: 'd1', alertEmails: ['ops@example.com'] });
  await raise(first, 'd1');
  await until('the e-mail is stuck in DATA', () => smtp.dataStarted() >= 1);
  // the send would hang for 10 minutes: a stop that waited for it would not be done within PATIENCE_MS
  await timed(PATIENCE_MS, 'stop', () => first.running.stop());
  t.pass('stopped while the e-mail hangs');

  await smtp.set('ok');
  const second = await startServer('sqlite', { storageEnv: first.storageEnv, env: { TRACKGATE_SMTP_URL: smtp.url } });
  t.teardown(() => second.stop());
  await until('delivered after the restart', () => smtp.good.mails.length >= 1);
  await second.running.services.notifications.drain();
  t.is(smtp.good.mails.length, 1);
  t.like((await outboxRows(second))[0], { status: 'sent' });
});

test('notify: an SMS gateway that never answers holds up neither e-mail nor its own retry', async (t) => {
  const sms = await hangingSms();
  const smtp = await startSmtpReceiver();
  t.teardown(async () => {
    await sms.close();
    await smtp.close();
  });
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const log = capturingLogger();
  const s = await startServer('sqlite', {
    clock,
    logger: log,
    env: {
      TRACKGATE_SMTP_URL: smtp.url,
      TRACKGATE_SMS_URL: sms.url,
      TRACKGATE_NOTIFY_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
      TRACKGATE_TOKEN_TTL: '86400',
    },
  });
  t.teardown(() => s.stop());
  await device(s, { id: 'phone', alertPhones: ['+34600111222'] });
  await device(s, { id: 'mail', alertEmails: ['ops@example.com'] });
  await raise(s, 'phone');
  await until('the SMS gateway has the request', () => sms.received.length >= 1);
  await raise(s, 'mail');
  await until('the e-mail goes out', () => smtp.mails.length >= 1);
  t.false(
    log.entries.some((e) => /will retry/.test(e.msg)),
    'while the SMS still hangs',
  );
  await until(
    'the hanging SMS counts as failed',
    () => log.entries.filter((e) => /will retry/.test(e.msg)).length >= 1,
  );
  t.regex(
    String(log.entries.find((e) => /will retry/.test(e.msg))?.err),
    new RegExp(`did not answer within ${SEND_TIMEOUT_MS} ms`),
  );

  sms.hang = false;
  clock.advance(60_000);
  s.running.services.notifications.kick();
  await until(
    'the SMS is delivered once the gateway answers',
    () => log.entries.filter((e) => /SMS delivered/.test(e.msg)).length >= 1,
  );
  t.is(sms.received.length, 2, 'tried twice');
  t.like((await s.request('GET', '/api/devices/phone', { token: s.adminToken })).body.device, { smsSentToday: 1 });
});

test('notify: stop() returns within a bound while an SMS request hangs', async (t) => {
  const sms = await hangingSms();
  t.teardown(() => sms.close());
  const s = await startServer('sqlite', { env: { TRACKGATE_SMS_URL: sms.url, TRACKGATE_NOTIFY_TIMEOUT_MS: NEVER_MS } });
  await device(s, { id: 'phone', alertPhones: ['+34600111222'] });
  await raise(s, 'phone');
  await until('the SMS gateway has the request', () => sms.received.length >= 1);
  // the request would hang for 10 minutes: a stop that waited for it would not be done within PATIENCE_MS
  await timed(PATIENCE_MS, 'stop', () => s.stop());
  t.pass('stopped while the SMS hangs');
});

test('notify: a message still being sent when its lease runs out is not leased and sent again by the same worker', async (t) => {
  // The lease outlasts any send, but a clock that jumps (NTP, a suspended VM, or a test's clock)
  // can run it out mid-send: when another send then finishes, the worker leases what is due, and
  // must not take the message it is still sending. (Seen as a fourth e-mail against a limit of 3.)
  const held = new Map<string, http.ServerResponse>();
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const to = String((JSON.parse(body) as { to: string }).to);
      received.push(to);
      held.set(`${to}#${received.filter((r) => r === to).length}`, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const log = capturingLogger();
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/sms`;
  const s = await startServer('sqlite', {
    clock,
    logger: log,
    env: { TRACKGATE_SMS_URL: url, TRACKGATE_NOTIFY_TIMEOUT_MS: '20000', TRACKGATE_TOKEN_TTL: '86400' },
  });
  t.teardown(() => s.stop());
  await device(s, { id: 'phone', alertPhones: ['+34600000001', '+34600000002'], dailySmsLimit: 10 });
  await raise(s, 'phone');
  await until('both messages are at the gateway', () => received.length >= 2);

  clock.advance(10 * 60_000);
  held.get('+34600000002#1')!.end('queued');
  await until('the second message is delivered', () => log.entries.some((e) => /SMS delivered/.test(e.msg)));
  // The worker leases what is due as soon as a send ends; give a second send time to show.
  await new Promise((r) => setTimeout(r, 500));
  t.deepEqual(received, ['+34600000001', '+34600000002'], 'the message still in flight was not sent again');

  held.get('+34600000001#1')!.end('queued');
  await s.running.services.notifications.drain();
  t.is(received.length, 2, 'each message went out once');
  t.is(log.entries.filter((e) => /SMS delivered/.test(e.msg)).length, 2);
  t.like((await s.request('GET', '/api/devices/phone', { token: s.adminToken })).body.device, { smsSentToday: 2 });
});

test('notify: the messages of a device deleted while they wait for a retry are not sent once the relay answers again', async (t) => {
  const { smtp, clock, log, s } = await withFlakySmtp(t);
  for (const id of ['gone', 'kept']) await device(s, { id, alertEmails: ['ops@example.com'] });
  for (const id of ['gone', 'kept']) await raise(s, id);
  await until('both refused once', () => log.entries.filter((e) => /will retry/.test(e.msg)).length >= 2);
  t.is((await s.request('DELETE', '/api/devices/gone', { token: s.adminToken })).status, 200);

  await smtp.set('ok');
  clock.advance(300_000);
  s.running.services.notifications.kick();
  await until("the kept device's e-mail delivered", () => smtp.good.mails.length >= 1);
  await s.running.services.notifications.drain();
  t.is(smtp.good.mails.length, 1, 'nothing about the deleted device');
  t.deepEqual(
    (await outboxRows(s)).map((r: { device_id: string; status: string }) => [r.device_id, r.status]),
    [
      ['gone', 'suppressed'],
      ['kept', 'sent'],
    ],
  );
});
