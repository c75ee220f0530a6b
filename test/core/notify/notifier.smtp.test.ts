import test from 'ava';
import net from 'node:net';
import { formatAlertEmail } from '../../../core/notify/message.format.js';
import { createSmtpNotifier } from '../../../core/notify/notifier.smtp.js';
import { closedPort, startSmtpReceiver } from '../../helpers/receivers.js';

const MAP = 'https://www.openstreetmap.org/?mlat=40.41680&mlon=-3.70380#map=16/40.41680/-3.70380';

test('notifier.smtp: a formatted alert arrives with To, Subject, device name, local time and map link', async (t) => {
  const rx = await startSmtpReceiver();
  const notifier = createSmtpNotifier({ url: rx.url, from: 'trackgate <alerts@example.com>' });
  t.teardown(async () => {
    await notifier.close();
    await rx.close();
  });
  const mail = formatAlertEmail({
    deviceName: 'Truck 1',
    deviceId: '356307042441013',
    alertName: 'SOSButton',
    text: 'SOS button pressed',
    dateTime: new Date('2026-03-01T12:30:05Z'),
    latitude: 40.4168,
    longitude: -3.7038,
    timeZone: 'Europe/Madrid',
  });
  await notifier.send({
    channel: 'Email',
    to: 'ops@example.com',
    ...mail,
    deviceId: '356307042441013',
    alertName: 'SOSButton',
  });

  t.is(rx.mails.length, 1);
  const got = rx.mails[0];
  t.deepEqual(got.recipients, ['ops@example.com']);
  t.is(got.from, 'alerts@example.com');
  t.is(got.headers.to, 'ops@example.com');
  t.is(got.headers.from, 'trackgate <alerts@example.com>');
  t.is(got.headers.subject, 'SOSButton: Truck 1 - SOS button pressed');
  for (const body of [got.text, got.html]) {
    t.true(body.includes('Truck 1'));
    t.true(body.includes('2026-03-01 13:30:05 Europe/Madrid'));
  }
  t.true(got.text.includes(MAP), got.text);
  t.true(got.html.includes(MAP.replace('&', '&amp;')));
});

test('notifier.smtp: a refused recipient makes send throw with the server answer', async (t) => {
  const rx = await startSmtpReceiver({ rejectRecipients: true });
  const notifier = createSmtpNotifier({ url: rx.url, from: 'alerts@example.com' });
  t.teardown(async () => {
    await notifier.close();
    await rx.close();
  });
  const err = await t.throwsAsync(
    notifier.send({ channel: 'Email', to: 'gone@example.com', subject: 's', text: 't', deviceId: 'd', alertName: 'a' }),
  );
  t.regex(err?.message ?? '', /550|unavailable|recipient/i);
});

test('notifier.smtp: an unreachable server makes send throw', async (t) => {
  const notifier = createSmtpNotifier({ url: `smtp://127.0.0.1:${await closedPort()}`, from: 'alerts@example.com' });
  t.teardown(() => notifier.close());
  await t.throwsAsync(
    notifier.send({ channel: 'Email', to: 'ops@example.com', subject: 's', text: 't', deviceId: 'd', alertName: 'a' }),
    { message: /ECONNREFUSED|connect/i },
  );
});

test('notifier.smtp: refused connections through its own sockets leave no pool slot taken; sends work once the server is up', async (t) => {
  const port = await closedPort();
  const openSocket = (host: string, p: number) => net.connect({ host, port: p, noDelay: true }).on('error', () => {});
  const notifier = createSmtpNotifier({
    url: `smtp://127.0.0.1:${port}`,
    from: 'alerts@example.com',
    timeoutMs: 30_000,
    openSocket,
  });
  const mail = {
    channel: 'Email' as const,
    to: 'ops@example.com',
    subject: 's',
    text: 't',
    deviceId: 'd',
    alertName: 'a',
  };
  for (let i = 0; i < 5; i++)
    await t.throwsAsync(
      notifier.send(mail),
      { message: /ECONNREFUSED/ },
      `refusal ${i + 1}, more than the pool's 3 connections`,
    );
  const rx = await startSmtpReceiver({ port });
  t.teardown(async () => {
    await notifier.close();
    await rx.close();
  });
  await notifier.send(mail);
  t.is(rx.mails.length, 1);
});

test('notifier.smtp: only smtp:// and smtps:// URLs are accepted', (t) => {
  t.throws(() => createSmtpNotifier({ url: 'http://mail.example.com', from: 'a@example.com' }), {
    message: /smtp:\/\//,
  });
});
