import test from 'ava';
import { createLastLocationCache } from '../../../core/locations/last-location.cache.js';

test('last-location.cache: remembers what was read, and forgets a device after a commit that changes it', (t) => {
  const cache = createLastLocationCache();
  cache.remember('d1', { accountId: 'a', data: '{"x":1}' }, cache.epoch());
  t.deepEqual(cache.get('d1'), { accountId: 'a', data: '{"x":1}' });
  cache.forget('d1');
  t.is(cache.get('d1'), undefined);
});

test('last-location.cache: a read that overlapped a commit is not remembered', (t) => {
  const cache = createLastLocationCache();
  const before = cache.epoch();
  cache.forget('d2'); // a commit of any device lands between the read and remember()
  cache.remember('d1', { accountId: 'a', data: '{"old":true}' }, before);
  t.is(cache.get('d1'), undefined);
  cache.remember('d1', { accountId: 'a', data: '{"new":true}' }, cache.epoch());
  t.deepEqual(cache.get('d1'), { accountId: 'a', data: '{"new":true}' });
});

test('last-location.cache: bounded: past its size it starts again empty', (t) => {
  const cache = createLastLocationCache(3);
  for (const id of ['a', 'b', 'c', 'd']) cache.remember(id, { accountId: 'x', data: null }, cache.epoch());
  t.is(cache.get('a'), undefined);
  t.deepEqual(cache.get('d'), { accountId: 'x', data: null });
});
