import test from 'ava';
import { createSmsHttpNotifier } from '../../../core/notify/notifier.sms-http.js';
import { closedPort, startSmsReceiver } from '../../helpers/receivers.js';

const sms = {
  channel: 'SMS' as const,
  to: '+34600111222',
  text: 'SOSButton Truck 1 2026-03-01 13:30',
  deviceId: '356307042441013',
  alertName: 'SOSButton',
};

test('notifier.sms-http: POSTs the JSON body {to, text, deviceId, alertName}', async (t) => {
  const rx = await startSmsReceiver();
  t.teardown(() => rx.close());
  await createSmsHttpNotifier({ url: rx.url, timeoutMs: 5000 }).send(sms);
  t.is(rx.requests.length, 1);
  const req = rx.requests[0];
  t.is(req.method, 'POST');
  t.is(req.path, '/sms');
  t.regex(req.headers['content-type'] ?? '', /^application\/json/);
  t.deepEqual(req.body, {
    to: '+34600111222',
    text: 'SOSButton Truck 1 2026-03-01 13:30',
    deviceId: '356307042441013',
    alertName: 'SOSButton',
  });
  t.is(req.headers.authorization, undefined);
});

test('notifier.sms-http: credentials in the URL become Basic auth', async (t) => {
  const rx = await startSmsReceiver();
  t.teardown(() => rx.close());
  await createSmsHttpNotifier({ url: rx.url.replace('http://', 'http://gw:p%40ss@') }).send(sms);
  t.is(rx.requests[0].headers.authorization, `Basic ${Buffer.from('gw:p@ss').toString('base64')}`);
});

test('notifier.sms-http: a 500 answer throws with the status and the gateway body, without credentials', async (t) => {
  const rx = await startSmsReceiver({ status: 500, body: 'quota exhausted' });
  t.teardown(() => rx.close());
  const err = await t.throwsAsync(
    createSmsHttpNotifier({ url: rx.url.replace('http://', 'http://gw:secret@') }).send(sms),
  );
  t.regex(err?.message ?? '', /answered 500 Internal Server Error: quota exhausted/);
  t.false(err?.message.includes('secret'));
});

test('notifier.sms-http: any non-2xx throws, 2xx other than 200 is accepted', async (t) => {
  const notFound = await startSmsReceiver({ status: 404 });
  const accepted = await startSmsReceiver({ status: 202 });
  t.teardown(async () => {
    await notFound.close();
    await accepted.close();
  });
  await t.throwsAsync(createSmsHttpNotifier({ url: notFound.url }).send(sms), { message: /answered 404/ });
  await t.notThrowsAsync(createSmsHttpNotifier({ url: accepted.url }).send(sms));
});

test('notifier.sms-http: an unreachable gateway throws saying so', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}/sms`;
  await t.throwsAsync(createSmsHttpNotifier({ url, timeoutMs: 2000 }).send(sms), {
    message: /unreachable: ECONNREFUSED/,
  });
});

test('notifier.sms-http: a gateway slower than timeoutMs throws a timeout', async (t) => {
  const rx = await startSmsReceiver({ delayMs: 5000 });
  t.teardown(() => rx.close());
  await t.throwsAsync(createSmsHttpNotifier({ url: rx.url, timeoutMs: 100 }).send(sms), {
    message: /did not answer within 100 ms/,
  });
});
