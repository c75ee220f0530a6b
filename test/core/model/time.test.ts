import test from 'ava';
import { isoUtc } from '../../../core/model/time.js';

test('isoUtc: exactly what toISOString writes, edges of days, months, leap years and the format', (t) => {
  const edges = [
    0,
    1,
    999,
    1000,
    59_999,
    86_399_999,
    86_400_000,
    Date.UTC(2000, 1, 28, 23, 59, 59, 999),
    Date.UTC(2000, 1, 29),
    Date.UTC(2000, 2, 1),
    Date.UTC(2100, 1, 28, 12),
    Date.UTC(2100, 2, 1),
    Date.UTC(2024, 11, 31, 23, 59, 59, 999),
    Date.UTC(2025, 0, 1),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
  ];
  for (const ms of edges) t.is(isoUtc(ms), new Date(ms).toISOString(), String(ms));
  for (let i = 0; i < 200_000; i++) {
    const ms = Math.floor(Math.random() * 253_402_300_800_000);
    if (isoUtc(ms) !== new Date(ms).toISOString())
      return t.fail(`${ms}: ${isoUtc(ms)} vs ${new Date(ms).toISOString()}`);
  }
  // consecutive calls on other days: the remembered day never leaks into another
  t.is(isoUtc(Date.UTC(2026, 2, 1, 10)), '2026-03-01T10:00:00.000Z');
  t.is(isoUtc(Date.UTC(2026, 2, 2, 10)), '2026-03-02T10:00:00.000Z');
  t.is(isoUtc(Date.UTC(2026, 2, 1, 11)), '2026-03-01T11:00:00.000Z');
});

test('isoUtc: outside 1970-9999 and for fractions it is toISOString itself (6-digit years, RangeError for NaN)', (t) => {
  for (const ms of [-1, -86_400_001, Date.UTC(-5, 0, 1), 253_402_300_800_000, 8.64e15, 1.5, 1_700_000_000_000.25])
    t.is(isoUtc(ms), new Date(ms).toISOString(), String(ms));
  t.throws(() => isoUtc(NaN), { instanceOf: RangeError });
  t.throws(() => isoUtc(8.64e15 + 1), { instanceOf: RangeError });
});
