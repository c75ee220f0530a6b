/**
 * Issue 44: the console's fleet page with 10,000 devices, in Debian's headless Chromium
 * (playwright-core). Time to first render (navigation start to the fleet drawn, the page's
 * `fleet-rendered` mark) against a bare page in the same browser that fetches the same
 * GET /api/lastLocations through a pass-through server and writes the same 500 rows; time from a
 * REST location to the console's `fleet-live-update` mark against a plain MQTT client on the same
 * feed; best of BENCH_ROUNDS (3) each, alternating. And the JavaScript the page loads, raw and gzipped.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import mqtt from 'mqtt';
import { chromium } from 'playwright-core';
import type { Db } from '../core/db/db.js';
import * as locations from '../core/locations/locations.repository.js';
import { ROOT } from './lib/child.js';
import { ADMIN_KEY, adminToken, prepareDataDir, startServerProcess, tempDir } from './lib/trackgate.js';
import { QUICK, fmt, log, machine, printTable, type Machine } from './lib/report.js';
import { location } from './rest.bench.js';

const DEVICES = 10_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const CHROMIUM = process.env.TRACKGATE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const GOALS = { firstRenderMs: 3000, liveUpdateMs: 500, jsGzipKb: 80 };
const FIRST_FIX_MS = Date.UTC(2025, 0, 1);
const deviceId = (i: number) => `35${String(i).padStart(13, '0')}`;

export interface ConsoleResult {
  name: 'console';
  machine: Machine;
  settings: { devices: number; rounds: number };
  firstRender: { consoleMs: number; bareMs: number; ratio: number; rounds: { console: number; bare: number }[] };
  liveUpdate: { consoleMs: number; mqttClientMs: number; ratio: number; rounds: { console: number; mqtt: number }[] };
  javascript: { files: { file: string; bytes: number; gzipBytes: number }[]; bytes: number; gzipBytes: number };
  goals: typeof GOALS;
  met: boolean;
}

async function fill(db: Db, ids: string[]): Promise<void> {
  const rows: locations.LocationRow[] = ids.map((id, i) => {
    const fix = FIRST_FIX_MS + i * 1000;
    const l = location(i);
    return {
      deviceId: id,
      dateTime: fix,
      serverTime: fix,
      location: { ...l, latitude: 36 + (i % 100) * 0.07, longitude: -9 + Math.floor(i / 100) * 0.12 },
    };
  });
  for (let i = 0; i < rows.length; i += 5000)
    await db.transaction((trx) => locations.insertMany(trx, rows.slice(i, i + 5000)));
}

const BARE_PAGE = `<!doctype html><html><head><meta charset="utf-8"><script type="module" src="/bare.js"></script></head>
<body><table><tbody id="rows"></tbody></table></body></html>`;
const BARE_SCRIPT = `const esc = (s) => String(s).replace(/[&<>"]/g, (c) => '&#' + c.charCodeAt(0) + ';');
const res = await fetch('/api/lastLocations', { headers: { authorization: 'Bearer ' + sessionStorage.getItem('token') } });
const { lastLocations } = await res.json();
lastLocations.sort((a, b) => a.name.localeCompare(b.name));
document.getElementById('rows').innerHTML = lastLocations.slice(0, 500).map((e) =>
  '<tr><td>' + esc(e.name) + '</td><td>' + esc(e.status) + '</td><td>' + esc(e.lastLocation?.dateTime ?? '') +
  '</td><td>' + esc(e.lastLocation?.speed ?? '') + '</td></tr>').join('');
performance.mark('fleet-rendered');`;

/** The bare page and a pass-through of GET /api/lastLocations to trackgate (same origin for the page). */
function bareServer(upstream: string): Promise<{ base: string; close(): void }> {
  const server = http.createServer(async (req, res) => {
    if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(BARE_PAGE);
    if (req.url === '/bare.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(BARE_SCRIPT);
    const r = await fetch(upstream + req.url, { headers: { authorization: req.headers.authorization ?? '' } });
    res.writeHead(r.status, { 'content-type': 'application/json' }).end(Buffer.from(await r.arrayBuffer()));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => server.close() }),
    ),
  );
}

/** A fresh browser profile each round: nothing cached from the round before. */
async function withPage<T>(
  session: object | undefined,
  token: string,
  run: (page: import('playwright-core').Page) => Promise<T>,
) {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'trackgate-bench-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
  });
  try {
    const page = await context.newPage();
    const script = [
      session ? `sessionStorage.setItem('trackgate.console.session', ${JSON.stringify(JSON.stringify(session))});` : '',
      `sessionStorage.setItem('token', ${JSON.stringify(token)});`,
    ].join('\n');
    await page.addInitScript({ content: script });
    return await run(page);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

const markAt = (page: import('playwright-core').Page, name: string) =>
  page.waitForFunction(
    (n) => {
      const m = performance.getEntriesByName(n as string).at(-1);
      return m ? performance.timeOrigin + m.startTime : false;
    },
    name,
    { timeout: 120_000, polling: 20 },
  );

function javascript(): ConsoleResult['javascript'] {
  const dir = path.join(ROOT, 'console');
  const files = [
    path.join(ROOT, 'node_modules/leaflet/dist/leaflet.js'),
    ...['app.js', 'api.js', 'device.js', 'dom.js', 'fleet.js', 'map.js', 'mqtt-feed.js', 'unknown.js'].map((f) =>
      path.join(dir, f),
    ),
  ].map((file) => {
    const text = readFileSync(file);
    return { file: path.relative(ROOT, file), bytes: text.length, gzipBytes: gzipSync(text, { level: 9 }).length };
  });
  return {
    files,
    bytes: files.reduce((n, f) => n + f.bytes, 0),
    gzipBytes: files.reduce((n, f) => n + f.gzipBytes, 0),
  };
}

export async function run(): Promise<ConsoleResult> {
  const atStart = machine();
  const data = tempDir('console');
  const ids = Array.from({ length: DEVICES }, (_, i) => deviceId(i));
  try {
    log(`preparing: ${fmt(DEVICES)} devices, one location each`);
    await prepareDataDir(data.dir, ids, (db) => fill(db, ids));
    const server = await startServerProcess(data.dir, {
      TRACKGATE_MQTT_PORT: '0',
      TRACKGATE_MQTT_WS_PORT: '0',
      TRACKGATE_CONSOLE_TILE_URL: 'off',
    });
    const bare = await bareServer(server.base);
    try {
      const token = await adminToken(server.base);
      const expires = new Date(Date.now() + 3600_000).toISOString();
      const session = { userName: 'admin', token, expires };
      const first: { console: number; bare: number }[] = [];
      const live: { console: number; mqtt: number }[] = [];
      let n = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const bareMs = await withPage(undefined, token, async (page) => {
          await page.goto(`${bare.base}/`);
          const rendered = (await (await markAt(page, 'fleet-rendered')).jsonValue()) as number;
          return rendered - ((await page.evaluate('performance.timeOrigin')) as number);
        });
        const consoleRound = await withPage(session, token, async (page) => {
          await page.goto(`${server.base}/console/`);
          const rendered = (await (await markAt(page, 'fleet-rendered')).jsonValue()) as number;
          const firstMs = rendered - ((await page.evaluate('performance.timeOrigin')) as number);
          const fetchedMs = (await page.evaluate(
            "performance.getEntriesByName('fleet-fetched')[0].startTime",
          )) as number;
          log(`console: the fleet's answer parsed at ${fmt(fetchedMs)} ms, drawn at ${fmt(firstMs)} ms`);
          await page.locator('#feed-status', { hasText: 'Live feed: on' }).waitFor({ timeout: 120_000 });
          const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${server.ports.mqtt}`, {
            username: 'admin',
            password: ADMIN_KEY,
            clientId: `admin-bench-${round}`,
            protocolVersion: 4,
          });
          await client.subscribeAsync('live/+/locations');
          const heard = new Promise<number>((resolve) => client.once('message', () => resolve(Date.now())));
          const sent = Date.now();
          n++;
          const res = await fetch(`${server.base}/api/devices/${ids[0]}/locations`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              location: { ...location(0), dateTime: new Date(Date.now() - 1000 * n).toISOString() },
            }),
          });
          if (res.status !== 201) throw new Error(`POST location: ${res.status}`);
          const shown = (await (await markAt(page, 'fleet-live-update')).jsonValue()) as number;
          const mqttAt = await heard;
          await client.endAsync();
          return { firstMs, liveMs: shown - sent, mqttMs: mqttAt - sent };
        });
        first.push({ console: consoleRound.firstMs, bare: bareMs as number });
        live.push({ console: consoleRound.liveMs, mqtt: consoleRound.mqttMs });
        log(
          `round ${round + 1}: first render ${fmt(consoleRound.firstMs)} ms (bare ${fmt(bareMs as number)} ms), live update ${fmt(consoleRound.liveMs)} ms (MQTT client ${fmt(consoleRound.mqttMs)} ms)`,
        );
      }
      const best = <T>(xs: T[], pick: (x: T) => number) => Math.min(...xs.map(pick));
      const consoleMs = best(first, (r) => r.console);
      const bareMs = best(first, (r) => r.bare);
      const liveMs = best(live, (r) => r.console);
      const mqttMs = best(live, (r) => r.mqtt);
      const js = javascript();
      const result: ConsoleResult = {
        name: 'console',
        machine: atStart,
        settings: { devices: DEVICES, rounds: ROUNDS },
        firstRender: { consoleMs, bareMs, ratio: consoleMs / bareMs, rounds: first },
        liveUpdate: { consoleMs: liveMs, mqttClientMs: mqttMs, ratio: liveMs / Math.max(mqttMs, 1), rounds: live },
        javascript: js,
        goals: GOALS,
        met: consoleMs <= GOALS.firstRenderMs && liveMs <= GOALS.liveUpdateMs && js.gzipBytes / 1024 <= GOALS.jsGzipKb,
      };
      printTable(
        `console: fleet page, ${fmt(DEVICES)} devices, best of ${ROUNDS}`,
        ['measure', 'console', 'baseline', 'ratio', 'goal'],
        [
          [
            'first render (ms)',
            fmt(consoleMs),
            `${fmt(bareMs)} (bare page)`,
            fmt(consoleMs / bareMs, 2),
            `<= ${GOALS.firstRenderMs}`,
          ],
          [
            'live update (ms)',
            fmt(liveMs),
            `${fmt(mqttMs)} (MQTT client)`,
            fmt(liveMs / Math.max(mqttMs, 1), 2),
            `<= ${GOALS.liveUpdateMs}`,
          ],
          ['JavaScript (KB gzipped)', fmt(js.gzipBytes / 1024, 1), '', '', `<= ${GOALS.jsGzipKb}`],
          ['JavaScript (KB)', fmt(js.bytes / 1024, 1), '', '', ''],
        ],
      );
      return result;
    } finally {
      bare.close();
      await server.stop();
    }
  } finally {
    data.remove();
  }
}
