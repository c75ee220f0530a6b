import v8 from 'node:v8';
import vm from 'node:vm';
import test from 'ava';
import { createDevice, startServer } from '../helpers/server.js';
import { insertRows, streamExport } from '../helpers/export-stream.js';

const MIB = 2 ** 20;
const BIG_ROWS = 1_000_000;

/**
 * A full garbage collection, for measuring from a clean heap: what the insert left for the
 * collector would otherwise be counted in the baseline, and when V8 collects it is its own choice.
 */
v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc') as () => void;

// A file of its own: ava runs each file in its own process, so no other test's server shares this one's memory.
test('api.locations.export (sqlite): a 1,000,000-row export streams with flat memory', async (t) => {
  // Time-boxed for CI: the insert and the export take about 20 s on a quiet two-core machine.
  t.timeout(180_000);
  const s = await startServer('sqlite');
  t.teardown(() => s.stop());
  await createDevice(s, 'big');
  const t0 = Date.parse('2025-01-01T00:00:00Z');
  const began = performance.now();
  await insertRows(s, 'big', t0, BIG_ROWS);
  const inserted = performance.now();

  collect();
  const baseline = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const from = new Date(t0).toISOString();
  const to = new Date(t0 + BIG_ROWS * 1000).toISOString();
  const { bytes, lines, status, complete } = await streamExport(
    s,
    `/api/devices/big/locations/export?from=${from}&to=${to}&format=csv`,
  );
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const exported = performance.now();
  const growth = peak - baseline;
  collect();
  const kept = process.memoryUsage().heapUsed - heapBefore;
  t.log(
    `insert ${Math.round(inserted - began)} ms; export ${Math.round(exported - inserted)} ms, ${(bytes / MIB).toFixed(0)} MiB, RSS +${(growth / MIB).toFixed(1)} MiB (from ${(baseline / MIB).toFixed(0)} MiB), heap kept ${(kept / MIB).toFixed(1)} MiB`,
  );
  t.is(status, 200);
  t.true(complete);
  t.is(lines, BIG_ROWS + 1, 'the header and every row');
  t.true(bytes > 100 * MIB, `the file is larger than the memory bound (${bytes} bytes)`);
  t.true(
    growth < 64 * MIB,
    `RSS grew ${(growth / MIB).toFixed(1)} MiB while ${(bytes / MIB).toFixed(0)} MiB were sent`,
  );
  t.true(kept < 8 * MIB, `the export left ${(kept / MIB).toFixed(1)} MiB live on the heap`);
});
