import test from 'ava';
import { backoffMs, jittered } from '../../core/backoff.js';

test('the wait doubles from minMs with each failure in a row, up to maxMs', (t) => {
  const b = { minMs: 1000, maxMs: 30_000 };
  t.deepEqual(
    [1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(b, n)),
    [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000],
  );
  // no failure yet waits as the first one does; a very long outage stays at maxMs
  t.is(backoffMs(b, 0), 1000);
  t.is(backoffMs(b, 10_000), 30_000);
  // the doubling stops after 20 however high maxMs is
  t.is(backoffMs({ minMs: 1, maxMs: Infinity }, 100), 2 ** 20);
});

test('the jitter keeps a wait within 20% either side', (t) => {
  t.is(
    jittered(1000, () => 0),
    800,
  );
  t.is(
    jittered(1000, () => 0.5),
    1000,
  );
  t.true(Math.abs(jittered(1000, () => 0.999_999) - 1200) < 0.001);
  for (let i = 0; i < 100; i++) {
    const ms = jittered(1000);
    t.true(ms >= 800 && ms <= 1200);
  }
});
