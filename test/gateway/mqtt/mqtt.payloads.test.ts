import test from 'ava';
import { parseLocations, parseAlerts, excerpt } from '../../../gateway/mqtt/mqtt.payloads.js';
import { PublishBucket, Semaphore } from '../../../gateway/mqtt/publish.limits.js';
import { ManualClock } from '../../../core/clock.js';

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const loc = { dateTime: '2026-03-01T10:00:00+01:00', latitude: 1, longitude: 2 };

test('mqtt.payloads: one location or an array, REST bounds, unknown fields dropped', (t) => {
  const one = parseLocations(json({ ...loc, speed: 3, serverTime: 'x', extra: 1 }));
  t.deepEqual(one, { ok: true, value: [{ ...loc, speed: 3 }] });
  const many = parseLocations(json([loc, loc]));
  t.true(many.ok && many.value.length === 2);
  for (const bad of [
    { ...loc, latitude: 90.1 },
    { ...loc, longitude: -181 },
    { ...loc, dateTime: '2026-03-01T10:00:00' },
    { ...loc, speed: -1 },
    { ...loc, battery: 'x' },
    [],
    [loc, { latitude: 1 }],
    'x',
    null,
  ]) {
    const r = parseLocations(json(bad));
    t.false(r.ok, JSON.stringify(bad));
  }
  const r = parseLocations(Buffer.from('{"latitude": '));
  t.true(!r.ok && r.reason.startsWith('not JSON'));
  const field = parseLocations(json({ ...loc, latitude: 100 }));
  t.true(!field.ok && field.reason.startsWith('latitude'));
});

test('mqtt.payloads: alerts need an alertName', (t) => {
  t.deepEqual(parseAlerts(json({ alertName: ' SOSButton ', text: 'x' })), {
    ok: true,
    value: [{ alertName: 'SOSButton', text: 'x' }],
  });
  t.false(parseAlerts(json({ text: 'x' })).ok);
  t.false(parseAlerts(json({ alertName: 'x', latitude: 100 })).ok);
  t.is(excerpt(Buffer.from('a\nb'.repeat(100)), 5), 'a.ba.…');
});

test('publish.limits: the bucket allows a burst, then asks to wait, then refuses', (t) => {
  const clock = new ManualClock();
  const b = new PublishBucket({ perSecond: 10, burst: 2, maxDelaySeconds: 1 }, clock);
  t.is(b.take(), 0);
  t.is(b.take(), 0);
  t.is(b.take(), 100);
  for (let i = 0; i < 9; i++) b.take();
  t.is(b.take(), -1);
  clock.advance(2000);
  t.is(b.take(), 0);
});

test('publish.limits: the semaphore lets waiters in, in order', async (t) => {
  const s = new Semaphore(1);
  await s.acquire();
  const order: number[] = [];
  const a = s.acquire().then(() => order.push(1));
  const b = s.acquire().then(() => order.push(2));
  t.is(s.pending, 3);
  s.release();
  await a;
  s.release();
  await b;
  t.deepEqual(order, [1, 2]);
});
