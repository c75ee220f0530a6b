import test from 'ava';
import { createDevice, startServer, type TestServer } from '../helpers/server.js';
import {
  startSmtpReceiver,
  startSmsReceiver,
  closedPort,
  type SmtpReceiver,
  type HttpReceiver,
} from '../helpers/receivers.js';
import { ManualClock } from '../../core/clock.js';
import { TrackerClient } from '../helpers/tracker-client.js';
import * as F from '../helpers/frames.js';

interface Setup {
  s: TestServer;
  smtp: SmtpReceiver;
  sms: HttpReceiver;
  clock: ManualClock;
}

async function setup(
  t: { teardown(fn: () => unknown): void },
  env: Record<string, string> = {},
  start = '2026-03-01T12:00:00Z',
): Promise<Setup> {
  const smtp = await startSmtpReceiver();
  const sms = await startSmsReceiver();
  const clock = new ManualClock(start);
  const s = await startServer('sqlite', {
    clock,
    env: {
      TRACKGATE_SMTP_URL: smtp.url,
      TRACKGATE_SMS_URL: sms.url,
      TRACKGATE_TOKEN_TTL: String(31 * 24 * 3600),
      ...env,
    },
  });
  t.teardown(async () => {
    await s.stop();
    await smtp.close();
    await sms.close();
  });
  return { s, smtp, sms, clock };
}

const device = (s: TestServer, body: Record<string, unknown>) =>
  createDevice(s, String(body.id), { name: 'Truck 7', ...body });

const raise = (s: TestServer, id: string, alertName = 'SOSButton') =>
  s.request('POST', `/api/devices/${id}/alerts`, {
    token: s.adminToken,
    body: { alert: { alertName, text: 'Driver pressed SOS', latitude: 40.4168, longitude: -3.7038 } },
  });

test('notify: an alert sends one e-mail per address and one SMS per number, readable, and counts them', async (t) => {
  const { s, smtp, sms } = await setup(t);
  await s.request('PUT', '/api/account', { token: s.adminToken, body: { timeZone: 'Europe/Madrid' } });
  await device(s, { id: 'd1', alertEmails: ['ops@example.com', 'boss@example.com'], alertPhones: ['+34600111222'] });
  const r = await raise(s, 'd1');
  t.is(r.status, 201);
  t.deepEqual(r.body.alerts[0].notifications, ['Email', 'SMS']);
  t.deepEqual(r.body.alerts[0].suppressed, {});
  await s.running.services.notifications.drain();
  t.deepEqual(smtp.mails.map((m) => m.recipients[0]).sort(), ['boss@example.com', 'ops@example.com']);
  const mail = smtp.mails[0];
  t.regex(mail.headers.subject ?? '', /SOSButton/);
  t.regex(mail.text, /Truck 7/);
  t.regex(mail.text, /2026-03-01 13:00:00/, 'time in the account time zone (Madrid is UTC+1 in March)');
  t.regex(mail.text, /openstreetmap\.org\/\?mlat=40\.41680&mlon=-3\.70380/);
  t.is(sms.requests.length, 1);
  t.like(sms.requests[0].body, { to: '+34600111222', deviceId: 'd1', alertName: 'SOSButton' });
  t.true((sms.requests[0].body as { text: string }).text.length <= 160);
  const d = await s.request('GET', '/api/devices/d1', { token: s.adminToken });
  t.like(d.body.device, { emailsSentToday: 2, smsSentToday: 1 });
});

test('notify: at the daily limit nothing more of that kind is sent; raising the limit applies at once', async (t) => {
  const { s, smtp, sms } = await setup(t);
  await device(s, {
    id: 'd1',
    alertEmails: ['a@example.com', 'b@example.com'],
    alertPhones: ['+34600111222'],
    dailyEmailLimit: 3,
    dailySmsLimit: 1,
  });
  const first = await raise(s, 'd1');
  t.deepEqual(first.body.alerts[0].notifications, ['Email', 'SMS']);
  const second = await raise(s, 'd1');
  t.deepEqual(second.body.alerts[0].notifications, ['Email'], 'one e-mail left (3rd of 3), no SMS');
  t.deepEqual(second.body.alerts[0].suppressed, { SMS: 'dailyLimitReached' });
  const third = await raise(s, 'd1');
  t.deepEqual(third.body.alerts[0].notifications, []);
  t.deepEqual(third.body.alerts[0].suppressed, { Email: 'dailyLimitReached', SMS: 'dailyLimitReached' });
  await s.running.services.notifications.drain();
  t.is(smtp.mails.length, 3);
  t.is(sms.requests.length, 1);
  t.like((await s.request('GET', '/api/devices/d1', { token: s.adminToken })).body.device, {
    emailsSentToday: 3,
    smsSentToday: 1,
  });
  await s.request('PATCH', '/api/devices/d1', {
    token: s.adminToken,
    body: [{ op: 'replace', path: '/dailySmsLimit', value: 2 }],
  });
  const fourth = await raise(s, 'd1');
  t.deepEqual(fourth.body.alerts[0].notifications, ['SMS'], 'a raised limit allows more today');
  await s.running.services.notifications.drain();
  t.is(sms.requests.length, 2);
  const stored = await s.request('POST', '/api/devices/d1/alerts', {
    token: s.adminToken,
    body: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
  });
  t.deepEqual(
    stored.body.alerts.map((a: { notifications: string[] }) => a.notifications),
    [['Email', 'SMS'], ['Email'], [], ['SMS']],
    'what each alert used is stored',
  );
});

test('notify: the day starts again at midnight in the account time zone, DST included', async (t) => {
  // New York moves to summer time on 2026-03-08; midnight that night is 05:00Z, the next is 04:00Z.
  const { s, smtp, clock } = await setup(t, {}, '2026-03-08T04:30:00Z');
  await s.request('PUT', '/api/account', { token: s.adminToken, body: { timeZone: 'America/New_York' } });
  await device(s, { id: 'd1', alertEmails: ['a@example.com'], dailyEmailLimit: 1 });
  t.deepEqual((await raise(s, 'd1')).body.alerts[0].notifications, ['Email'], '23:30 on the 7th in New York');
  clock.set('2026-03-08T04:59:00Z');
  t.deepEqual(
    (await raise(s, 'd1')).body.alerts[0].suppressed,
    { Email: 'dailyLimitReached', SMS: 'noRecipients' },
    '23:59 on the 7th: still at the limit',
  );
  clock.set('2026-03-08T05:00:00Z');
  t.like(
    (await s.request('GET', '/api/devices/d1', { token: s.adminToken })).body.device,
    { emailsSentToday: 0 },
    'the counter started again at local midnight',
  );
  t.deepEqual((await raise(s, 'd1')).body.alerts[0].notifications, ['Email'], 'a new day in New York');
  clock.set('2026-03-09T03:59:00Z');
  t.deepEqual(
    (await raise(s, 'd1')).body.alerts[0].notifications,
    [],
    'still the 8th: the 23-hour DST day has not ended',
  );
  clock.set('2026-03-09T04:00:00Z');
  t.deepEqual(
    (await raise(s, 'd1')).body.alerts[0].notifications,
    ['Email'],
    'midnight of the 9th is 04:00Z after the change',
  );
  await s.running.services.notifications.drain();
  t.is(smtp.mails.length, 3);
});

test('notify: suppressed says why a channel sent nothing; an expired device sends nothing', async (t) => {
  const { s, smtp, sms, clock } = await setup(t, { TRACKGATE_SMS_URL: '' });
  await device(s, { id: 'none', alertEmails: [] });
  const r = await raise(s, 'none');
  t.deepEqual(r.body.alerts[0].notifications, []);
  t.deepEqual(r.body.alerts[0].suppressed, { Email: 'noRecipients', SMS: 'notConfigured' });
  await device(s, {
    id: 'old',
    alertEmails: ['a@example.com'],
    alertPhones: ['+34600111222'],
    expires: '2026-03-01T13:00:00Z',
  });
  clock.set('2026-03-01T13:00:01Z');
  const expired = await raise(s, 'old');
  t.is(expired.status, 201, 'the alert is stored');
  t.deepEqual(expired.body.alerts[0].suppressed, { Email: 'deviceExpired', SMS: 'deviceExpired' });
  await s.running.services.notifications.drain();
  t.is(smtp.mails.length, 0);
  t.is(sms.requests.length, 0);
});

test('notify: 200 concurrent alerts on a device with limit 10 send exactly 10 e-mails', async (t) => {
  const { s, smtp } = await setup(t);
  await device(s, { id: 'd1', alertEmails: ['a@example.com'], dailyEmailLimit: 10 });
  const results = await Promise.all(Array.from({ length: 200 }, () => raise(s, 'd1')));
  t.true(results.every((r) => r.status === 201));
  t.is(results.filter((r) => r.body.alerts[0].notifications.includes('Email')).length, 10);
  await s.running.services.notifications.drain();
  t.is(smtp.mails.length, 10);
});

test('notify: a tracker alarm is notified through the same path as a REST alert', async (t) => {
  const { s, smtp } = await setup(t, { TRACKGATE_GT06_PORT: '0' });
  await device(s, { id: '356307042441013', alertEmails: ['ops@example.com'] });
  const c = await TrackerClient.connect(s.running.ports.gt06);
  t.teardown(() => c.end());
  c.write(F.gt06Login('356307042441013', 1));
  await c.read(10);
  c.write(F.gt06Alarm({ time: new Date('2026-03-01T11:59:00Z'), lat: 40.4, lon: -3.7 }, 2));
  await c.read(10);
  await s.running.services.notifications.drain();
  t.is(smtp.mails.length, 1);
  t.regex(smtp.mails[0].headers.subject ?? '', /SOSButton/);
});

test('notify: failed deliveries are retried with backoff and still delivered after a restart, once', async (t) => {
  const deadSmtp = `smtp://127.0.0.1:${await closedPort()}`;
  const failingSms = await startSmsReceiver({ status: 500 });
  t.teardown(() => failingSms.close());
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const first = await startServer('sqlite', {
    clock,
    env: { TRACKGATE_SMTP_URL: deadSmtp, TRACKGATE_SMS_URL: failingSms.url, TRACKGATE_TOKEN_TTL: '86400' },
  });
  await device(first, {
    id: 'd1',
    alertEmails: ['ops@example.com'],
    alertPhones: ['+34600111222'],
    dailyEmailLimit: 5,
  });
  const r = await raise(first, 'd1');
  t.deepEqual(r.body.alerts[0].notifications, ['Email', 'SMS']);
  await first.running.services.notifications.drain();
  t.is(failingSms.requests.length, 1, 'tried once, answered 500');
  await first.running.services.notifications.drain();
  t.is(failingSms.requests.length, 1, 'not retried before its backoff');
  await first.running.stop();

  const smtp = await startSmtpReceiver();
  const sms = await startSmsReceiver();
  t.teardown(async () => {
    await smtp.close();
    await sms.close();
  });
  clock.advance(60_000);
  const second = await startServer('sqlite', {
    clock,
    storageEnv: first.storageEnv,
    env: { TRACKGATE_SMTP_URL: smtp.url, TRACKGATE_SMS_URL: sms.url, TRACKGATE_TOKEN_TTL: '86400' },
  });
  t.teardown(() => second.stop());
  await second.running.services.notifications.drain();
  t.is(smtp.mails.length, 1, 'delivered after the restart');
  t.is(sms.requests.length, 1);
  clock.advance(3600_000);
  await second.running.services.notifications.drain();
  t.is(smtp.mails.length, 1, 'a delivered message is never sent twice');
  t.like(
    (await second.request('GET', '/api/devices/d1', { token: second.adminToken })).body.device,
    { emailsSentToday: 1, smsSentToday: 1 },
    'in-process counters survive the restart',
  );
});

test('notify: a message that finally fails frees its place in the day count', async (t) => {
  const failingSms = await startSmsReceiver({ status: 500 });
  t.teardown(() => failingSms.close());
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const s = await startServer('sqlite', {
    clock,
    env: { TRACKGATE_SMS_URL: failingSms.url, TRACKGATE_TOKEN_TTL: '86400' },
  });
  t.teardown(() => s.stop());
  await device(s, { id: 'd1', alertPhones: ['+34600111222'], dailySmsLimit: 1 });
  await raise(s, 'd1');
  t.like((await s.request('GET', '/api/devices/d1', { token: s.adminToken })).body.device, { smsSentToday: 1 });
  for (let i = 0; i < 10; i++) {
    await s.running.services.notifications.drain();
    clock.advance(11 * 60_000);
  }
  t.is(failingSms.requests.length, 8, 'tried 8 times');
  t.like(
    (await s.request('GET', '/api/devices/d1', { token: s.adminToken })).body.device,
    { smsSentToday: 0 },
    'the place is free again',
  );
  t.deepEqual((await raise(s, 'd1')).body.alerts[0].notifications, ['SMS']);
});

test("notify: a CheckArea rule's e-mails and SMS name the rule and say entering or leaving, in the subject too", async (t) => {
  const { s, smtp, sms } = await setup(t);
  await device(s, { id: 'van', name: 'Van 7', alertEmails: ['ops@example.com'], alertPhones: ['+34600111222'] });
  const zone = await s.request('POST', '/api/zones', {
    token: s.adminToken,
    body: { name: 'Depot', type: 'circle', center: { latitude: 40.41, longitude: -3.71 }, radius: 500 },
  });
  t.is(zone.status, 201, JSON.stringify(zone.body));
  const rule = await s.request('POST', '/api/alertRules', {
    token: s.adminToken,
    body: {
      name: 'Depot watch',
      alertName: 'CheckArea',
      params: { zone: zone.body.zone.id },
      devices: ['van'],
      notify: { email: true, sms: true },
    },
  });
  t.is(rule.status, 201, JSON.stringify(rule.body));
  const at = (latitude: number, dateTime: string) =>
    s.request('POST', '/api/devices/van/locations', {
      token: s.adminToken,
      body: { location: { dateTime, latitude, longitude: -3.71, speed: 20 } },
    });
  t.is((await at(40.41, '2026-03-01T11:50:00Z')).status, 201);
  t.is((await at(40.5, '2026-03-01T11:55:00Z')).status, 201);
  await s.running.rules.idle();
  await s.running.services.notifications.drain();
  t.deepEqual(smtp.mails.map((m) => m.headers.subject).sort(), [
    'CheckArea "Depot watch": Van 7 - Entered the zone "Depot"',
    'CheckArea "Depot watch": Van 7 - Left the zone "Depot"',
  ]);
  t.regex(smtp.mails[0].text, /^Rule: "Depot watch" \(CheckArea\)$/m);
  const texts = sms.requests.map((r) => (r.body as { text: string }).text).sort();
  t.is(texts.length, 2);
  t.regex(texts[0], /^CheckArea "Depot watch" Van 7: Entered the zone "Depot" 2026-03-01 /);
  t.regex(texts[1], /^CheckArea "Depot watch" Van 7: Left the zone "Depot" 2026-03-01 /);
});
