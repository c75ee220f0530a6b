/**
 * `npm run bench` runs every benchmark; `npm run bench -- rest` (or tcp-ingest, idle-connections)
 * runs the ones named (rest, tcp-ingest, idle-connections, alerts, mqtt-ingest, soak, rules-ingest, forward-ingest, idle-100k, pg-ingest, storage-size, pg-partition-drop, last-locations, retention-ingest, reports, tls-ingest, console). Each prints its table; the figures are also written as JSON to
 * bench/results/<name>-<timestamp>.json (and <name>-latest.json), which git ignores.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib/child.js';
import { log } from './lib/report.js';

const BENCHMARKS: Record<string, () => Promise<{ run(): Promise<object> }>> = {
  rest: () => import('./rest.bench.js'),
  'tcp-ingest': () => import('./tcp-ingest.bench.js'),
  'idle-connections': () => import('./idle-connections.bench.js'),
  alerts: () => import('./alerts.bench.js'),
  'mqtt-ingest': () => import('./mqtt-ingest.bench.js'),
  soak: () => import('./soak.bench.js'),
  'rules-ingest': () => import('./rules-ingest.bench.js'),
  'forward-ingest': () => import('./forward-ingest.bench.js'),
  'idle-100k': () => import('./idle-100k.bench.js'),
  'pg-ingest': () => import('./pg-ingest.bench.js'),
  'storage-size': () => import('./storage-size.bench.js'),
  'pg-partition-drop': () => import('./pg-partition-drop.bench.js'),
  'last-locations': () => import('./last-locations.bench.js'),
  'retention-ingest': () => import('./retention-ingest.bench.js'),
  reports: () => import('./reports.bench.js'),
  'tls-ingest': () => import('./tls-ingest.bench.js'),
  console: () => import('./console.bench.js'),
};

async function main(): Promise<void> {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = asked.filter((a) => !(a in BENCHMARKS));
  if (unknown.length) {
    console.error(`unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    process.exit(2);
  }
  const names = asked.length ? asked : Object.keys(BENCHMARKS);
  const command = `npm run bench${asked.length ? ` -- ${asked.join(' ')}` : ''}`;
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  let failed = false;
  for (const name of names) {
    log(`=== ${name} ===`);
    const t0 = performance.now();
    try {
      const result = await (await BENCHMARKS[name]()).run();
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const json = JSON.stringify({ command, ...result }, null, 2);
      writeFileSync(path.join(dir, `${name}-${stamp}.json`), json);
      writeFileSync(path.join(dir, `${name}-latest.json`), json);
      log(
        `=== ${name}: ${((performance.now() - t0) / 1000).toFixed(0)} s, results in bench/results/${name}-latest.json ===`,
      );
    } catch (e) {
      failed = true;
      console.error(`benchmark ${name} failed:`, e);
    }
  }
  process.exit(failed ? 1 : 0);
}

void main();
