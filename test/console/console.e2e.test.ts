/**
 * The console in headless Chromium against a real trackgate (docs/console.md): log in with the
 * keyboard, a device appears when a real tracker socket sends a frame, its track, a command the
 * tracker answers, raw frames live (a malformed one marked), an unknown identifier made a device,
 * and the page at phone width. Screenshots of each screen go to test/artefacts/console/.
 */
import test from 'ava';
import type { Page } from 'playwright-core';
import { ADMIN_KEY, startServer, type TestServer } from '../helpers/server.js';
import { artefact, browserAvailable, openBrowser } from '../helpers/browser.js';
import { TrackerClient, readTeltonikaCommand, teltonikaSession } from '../helpers/tracker-client.js';
import { teltonikaAnswer, teltonikaAvl, teltonikaLogin } from '../helpers/frames.js';
import { until } from '../helpers/wait.js';
import { certificateFiles, makeCertificate } from '../helpers/certificates.js';

const hasBrowser = browserAvailable();
const run = hasBrowser ? test.serial : test.skip;
const VAN = '356307042441013';
const PHONE = '359587010124900';
const STRANGER = '356307042449999';

let server: TestServer;
test.before(async () => {
  if (!hasBrowser) return;
  server = await startServer('sqlite', {
    env: {
      TRACKGATE_MQTT_WS_PORT: '0',
      TRACKGATE_TELTONIKA_PORT: '0',
      TRACKGATE_GPS103_PORT: '0',
      // no internet in tests: the page must work without tiles
      TRACKGATE_CONSOLE_TILE_URL: 'off',
    },
  });
});
test.after.always(() => server?.stop());

/** What the page said it could not do: script errors and refused loads (the policy's violations). */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
  });
  return problems;
}

async function logInWithKeyboard(page: Page): Promise<void> {
  await page.goto(`${server.base}/console/`);
  await page.locator('#login-user:focus').waitFor();
  await page.keyboard.type('admin');
  await page.keyboard.press('Tab');
  await page.keyboard.type(ADMIN_KEY);
  await page.keyboard.press('Enter');
  await page.locator('#feed-status', { hasText: 'Live feed: on' }).waitFor();
}

const fix = (minutesAgo: number, lat: number, lon: number, speedKmh = 40) => ({
  time: new Date(Date.now() - minutesAgo * 60_000),
  lat,
  lon,
  speedKmh,
});

run('console: log in, a tracker appears, its track, a command answered, raw frames live', async (t) => {
  const context = await openBrowser(t);
  const page = await context.newPage();
  const problems = watchProblems(page);
  const urls: string[] = [];
  page.on('request', (r) => urls.push(r.url()));
  await logInWithKeyboard(page);
  await page.screenshot({ path: artefact('console', '1-fleet-empty') });

  // a device made after the page read the fleet: the feed's first location brings it in
  t.is(
    (await server.request('POST', '/api/devices', { token: server.adminToken, body: { id: VAN, name: 'Van 7' } }))
      .status,
    201,
  );
  const tracker = await teltonikaSession(t, server.running.ports.teltonika!, VAN);
  tracker.write(teltonikaAvl([fix(30, 40.41, -3.7, 20), fix(20, 40.42, -3.69, 45), fix(10, 40.43, -3.68, 52)]));
  await tracker.read(4);
  const row = page.locator(`#fleet-rows tr[data-device="${VAN}"]`);
  await row.waitFor();
  await row.locator('td', { hasText: '● online' }).waitFor();
  t.regex((await row.textContent()) ?? '', /Van 7[\s\S]*52 km\/h/);
  await page.screenshot({ path: artefact('console', '2-fleet-device') });

  // search narrows the list; status filters
  await page.fill('#fleet-search', 'nothing-like-it');
  await page.locator('#fleet-count', { hasText: '0 of 1 devices' }).waitFor();
  await page.fill('#fleet-search', 'van');
  await page.selectOption('#fleet-status', 'online');
  await page.locator('#fleet-count', { hasText: '1 of 1 devices' }).waitFor();

  // the device: its track of the last day
  await row.locator('a').click();
  await page.locator('#device-title', { hasText: 'Van 7' }).waitFor();
  await page.locator('#track-status', { hasText: '3 positions' }).waitFor();
  t.is(await page.locator('#track-rows tr').count(), 3);
  t.true(await page.locator('#map path.leaflet-interactive, #map canvas').first().isVisible(), 'the track is drawn');
  await page.locator('#track-rows button').first().click();
  await page.screenshot({ path: artefact('console', '3-device-track') });

  // a command: queued, sent to the tracker, answered by it
  await page.click('[data-tab="commands"]');
  await page.fill('#command-text', 'getver');
  await page.click('#command-form button[type="submit"]');
  t.is(await readTeltonikaCommand(tracker), 'getver');
  tracker.write(teltonikaAnswer('Ver:03.27.07 GPS:AXN_5.10'));
  const answered = page.locator('#command-rows tr[data-status="answered"]');
  await answered.waitFor();
  t.regex((await answered.textContent()) ?? '', /getver[\s\S]*answered[\s\S]*Ver:03\.27\.07/);
  await page.screenshot({ path: artefact('console', '4-device-command') });

  // raw frames: each one the tracker sends, with what was decoded and the reply written back
  await page.click('[data-tab="frames"]');
  // a position frame: the command's answer, a frame too, may reach the page after the tab opened
  const frames = page.locator('#frames-list li[data-outcome="ok"]', { hasText: '"latitude": 40.44' });
  await until(
    'a raw frame on the page',
    async () => {
      tracker.write(teltonikaAvl([fix(1, 40.44, -3.67, 60)]));
      await tracker.read(4);
      return (await frames.count()) > 0;
    },
    undefined,
    500,
  );
  const first = frames.first();
  t.regex((await first.locator('pre.raw').textContent()) ?? '', /^00 00 00 00 /, 'the bytes in hex');
  t.regex((await first.locator('pre.decoded').textContent()) ?? '', /"latitude": 40\.44/);
  t.regex((await first.textContent()) ?? '', /Reply: 00 00 00 01/);
  await page.screenshot({ path: artefact('console', '5-device-frames') });

  // settings: a write user changes the name and a limit
  await page.click('[data-tab="settings"]');
  await page.fill('#set-name', 'Van 7 (north)');
  await page.fill('#set-sms-limit', '3');
  await page.click('#settings-save');
  await page.locator('#settings-status', { hasText: 'Saved.' }).waitFor();
  const stored = (await server.request('GET', `/api/devices/${VAN}`, { token: server.adminToken })).body.device;
  t.like(stored, { name: 'Van 7 (north)', dailySmsLimit: 3 });
  await page.locator('#device-title', { hasText: 'Van 7 (north)' }).waitFor();
  await page.screenshot({ path: artefact('console', '5b-device-settings') });

  // the list stays current while the feed is on: the newest speed
  await page.click('a[href="#/fleet"]');
  await page.locator(`#fleet-rows tr[data-device="${VAN}"] td`, { hasText: '60 km/h' }).waitFor();

  t.deepEqual(problems, [], 'no script error and nothing the policy refused');
  const token = (await page.evaluate("sessionStorage.getItem('trackgate.console.session')")) as string | null;
  t.truthy(token);
  const jwt = JSON.parse(token!).token as string;
  t.false(
    urls.some((u) => u.includes(jwt)),
    'the token is never in a URL',
  );
});

run("console: a device's trips, stops and summary over the track's range", async (t) => {
  const TRUCK = 'truck-9';
  t.is(
    (await server.request('POST', '/api/devices', { token: server.adminToken, body: { id: TRUCK, name: 'Truck 9' } }))
      .status,
    201,
  );
  // parked 20 min, 10 min driving north at 50 km/h (0.0075° a minute), parked 15 min: one trip, two stops
  const start = Date.now() - 60 * 60_000;
  const fixes: { minute: number; lat: number; speed: number }[] = [];
  for (let m = 0; m <= 20; m += 2) fixes.push({ minute: m, lat: 40.3, speed: 0 });
  for (let m = 21; m <= 30; m++) fixes.push({ minute: m, lat: 40.3 + (m - 20) * 0.0075, speed: 50 });
  for (let m = 32; m <= 45; m += 2) fixes.push({ minute: m, lat: 40.375, speed: 0 });
  for (const f of fixes) {
    const stored = await server.request('POST', `/api/devices/${TRUCK}/locations`, {
      token: server.adminToken,
      body: {
        location: {
          dateTime: new Date(start + f.minute * 60_000).toISOString(),
          latitude: f.lat,
          longitude: -3.6,
          speed: f.speed,
        },
      },
    });
    t.is(stored.status, 201, JSON.stringify(stored.body));
  }
  const context = await openBrowser(t);
  const page = await context.newPage();
  const problems = watchProblems(page);
  await logInWithKeyboard(page);
  await page.goto(`${server.base}/console/#/device/${TRUCK}`);
  await page.locator('#track-status', { hasText: `${fixes.length} positions` }).waitFor();
  await page.click('[data-tab="trips"]');
  await page.locator('#trips-status', { hasText: '1 trips, 2 stops' }).waitFor();

  // what the page shows is what the API answers for the same range
  const range = (await page.evaluate(
    `({ from: new Date(document.getElementById('track-from').value).toISOString(), to: new Date(document.getElementById('track-to').value).toISOString() })`,
  )) as { from: string; to: string };
  const q = new URLSearchParams({ deviceId: TRUCK, ...range }).toString();
  const trips = (await server.request('GET', `/api/reports/trips?${q}`, { token: server.adminToken })).body.trips;
  const summary = (await server.request('GET', `/api/reports/summary?${q}`, { token: server.adminToken })).body
    .summary[0];
  t.is(trips.length, 1);
  t.true(trips[0].distance > 7 && trips[0].distance < 9, `a trip of ${trips[0].distance} km`);
  const tripRow = (await page.locator('#trip-rows tr').first().textContent()) ?? '';
  t.true(tripRow.includes(`${trips[0].distance.toFixed(2)} km`), tripRow);
  t.regex(tripRow, /\d+ min \d\d s/, 'the duration in words');
  t.is(await page.locator('#stop-rows tr').count(), 2);
  const summaryText = (await page.locator('#trips-summary').textContent()) ?? '';
  t.true(summaryText.includes(`Distance${summary.distance.toFixed(2)} km`), summaryText);
  t.regex(summaryText, /Maximum speed50 km\/h/);

  // a trip's start marks its place on the map
  await page.locator('#trip-rows button').first().click();
  await page.screenshot({ path: artefact('console', '3b-device-trips') });

  // a range the reports refuse (more than 32 days) is said, and the track still shows
  await page.click('[data-tab="track"]');
  await page.fill('#track-from', '2026-01-01T00:00:00');
  await page.click('#track-form button[type="submit"]');
  await page.click('[data-tab="trips"]');
  await page.locator('#trips-status', { hasText: 'The trips could not be loaded' }).waitFor();
  t.deepEqual(
    problems.filter((p) => !/^400 .*\/api\/reports\//.test(p)),
    [],
    'nothing failed but the refused range',
  );
});

run('console: a user with read only sees the settings but cannot change them', async (t) => {
  const made = await server.request('POST', '/api/users', {
    token: server.adminToken,
    body: {
      name: 'Reader',
      email: 'reader@example.com',
      country: 'ES',
      timeZone: 'Europe/Madrid',
      privileges: ['read'],
    },
  });
  t.is(made.status, 201, JSON.stringify(made.body));
  const context = await openBrowser(t);
  const page = await context.newPage();
  await page.goto(`${server.base}/console/`);
  await page.fill('#login-user', 'reader@example.com');
  await page.fill('#login-key', made.body.apiKey);
  await page.click('#login-form button');
  await page.locator(`#fleet-rows tr[data-device="${VAN}"]`).waitFor();
  await page.goto(`${server.base}/console/#/device/${VAN}`);
  await page.click('[data-tab="settings"]');
  await page.locator('#settings-usage', { hasText: 'may read these settings but not change them' }).waitFor();
  t.true(await page.locator('#set-name').evaluate((el) => (el as unknown as { readOnly: boolean }).readOnly));
  t.false(await page.locator('#settings-save').isVisible());
});

run('console: a malformed frame is marked, with the reason', async (t) => {
  await server.request('POST', '/api/devices', { token: server.adminToken, body: { id: PHONE, name: 'Old phone' } });
  const context = await openBrowser(t);
  const page = await context.newPage();
  await logInWithKeyboard(page);
  await page.goto(`${server.base}/console/#/device/${PHONE}`);
  await page.locator('#device-title', { hasText: 'Old phone' }).waitFor();
  await page.click('[data-tab="frames"]');
  const gps = await TrackerClient.connect(server.running.ports.gps103!);
  t.teardown(() => gps.end());
  gps.write(`##,imei:${PHONE},A;`);
  t.is((await gps.read(4)).toString(), 'LOAD');
  const bad = page.locator('#frames-list li.malformed');
  await until(
    'a malformed frame on the page',
    async () => {
      gps.write(`imei:${PHONE},tracker,zzzz;`);
      return (await bad.count()) > 0;
    },
    undefined,
    500,
  );
  t.regex((await bad.first().textContent()) ?? '', /MALFORMED[\s\S]*Why: .*unrecognised gps103 sentence/);
  await page.screenshot({ path: artefact('console', '6-frames-malformed') });
});

run('console: an unknown identifier is listed and made a device with one button', async (t) => {
  const context = await openBrowser(t);
  const page = await context.newPage();
  await logInWithKeyboard(page);
  await page.click('#nav-unknown');
  const row = page.locator(`#unknown-rows tr[data-identifier="${STRANGER}"]`);
  await until(
    'the unknown identifier on the page',
    async () => {
      const c = await TrackerClient.connect(server.running.ports.teltonika!);
      c.write(teltonikaLogin(STRANGER));
      await c.waitClosed(2000);
      c.end();
      return (await row.count()) > 0;
    },
    undefined,
    200,
  );
  await page.screenshot({ path: artefact('console', '7-unknown') });
  await row.getByRole('button', { name: `Create device ${STRANGER}` }).click();
  await page.locator('#unknown-status', { hasText: `Device ${STRANGER} created` }).waitFor();
  t.is((await server.request('GET', `/api/devices/${STRANGER}`, { token: server.adminToken })).status, 200);
  const tracker = await teltonikaSession(t, server.running.ports.teltonika!, STRANGER);
  t.false(tracker.closed, 'the tracker is accepted now');
});

run('console: at phone width everything fits one column, nothing scrolls sideways', async (t) => {
  const context = await openBrowser(t, { width: 390, height: 844 });
  const page = await context.newPage();
  await logInWithKeyboard(page);
  await page.locator(`#fleet-rows tr[data-device="${VAN}"]`).waitFor();
  const widths = (await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as number[];
  t.true(widths[0] <= widths[1], `page ${widths[0]} px wide in a ${widths[1]} px window`);
  await page.screenshot({ path: artefact('console', '8-phone-fleet'), fullPage: true });
});

run('console: without the WebSocket port the list is read again, and says so', async (t) => {
  const plain = await startServer('sqlite', { env: { TRACKGATE_CONSOLE_TILE_URL: 'off' } });
  t.teardown(() => plain.stop());
  const context = await openBrowser(t);
  const page = await context.newPage();
  const problems = watchProblems(page);
  await page.goto(`${plain.base}/console/`);
  await page.fill('#login-user', 'admin');
  await page.fill('#login-key', ADMIN_KEY);
  await page.click('#login-form button');
  await page.locator('#feed-status', { hasText: 'not offered by this server' }).waitFor();
  await plain.request('POST', '/api/devices', { token: plain.adminToken, body: { id: 'rest-1', name: 'Courier' } });
  const at = new Date(Date.now() - 60_000).toISOString();
  const stored = await plain.request('POST', '/api/devices/rest-1/locations', {
    token: plain.adminToken,
    body: { location: { dateTime: at, latitude: 41.39, longitude: 2.17, speed: 18 } },
  });
  t.is(stored.status, 201);
  await page.locator('#fleet-rows tr[data-device="rest-1"] td', { hasText: '18 km/h' }).waitFor();
  await page.click('#fleet-rows tr[data-device="rest-1"] a');
  await page.click('[data-tab="frames"]');
  await page.locator('#frames-status', { hasText: 'need the live feed' }).waitFor();

  // a second session in the same tab: one list, still read again
  await page.click('#logout');
  await page.locator('#login-user:focus').waitFor();
  t.is(await page.evaluate("sessionStorage.getItem('trackgate.console.session')"), null, 'the token is gone');
  await page.fill('#login-user', 'admin');
  await page.fill('#login-key', ADMIN_KEY);
  await page.click('#login-form button');
  await page.click('#nav-fleet');
  await page.locator('#fleet-count', { hasText: '1 of 1 devices' }).waitFor();
  await plain.request('POST', '/api/devices/rest-1/locations', {
    token: plain.adminToken,
    body: { location: { dateTime: new Date().toISOString(), latitude: 41.4, longitude: 2.18, speed: 27 } },
  });
  await page.locator('#fleet-rows tr[data-device="rest-1"] td', { hasText: '27 km/h' }).waitFor();
  t.is(await page.locator('#fleet-rows tr').count(), 1);
  t.deepEqual(problems, []);
});

run('console: over HTTPS the live feed comes through wss:// at /mqtt of the same origin', async (t) => {
  const files = certificateFiles(t, await makeCertificate('trackgate-console'));
  const secure = await startServer('sqlite', {
    env: {
      TRACKGATE_CONSOLE_TILE_URL: 'off',
      TRACKGATE_TLS_CERT: files.certFile,
      TRACKGATE_TLS_KEY: files.keyFile,
      TRACKGATE_HTTPS_PORT: '0',
      TRACKGATE_MQTT_WS_PORT: '0',
    },
  });
  t.teardown(() => secure.stop());
  const context = await openBrowser(t, undefined, { acceptAnyCertificate: true });
  const page = await context.newPage();
  const problems = watchProblems(page);
  const sockets: string[] = [];
  page.on('websocket', (ws) => sockets.push(ws.url()));
  const origin = `https://localhost:${secure.running.ports.https}`;
  await page.goto(`${origin}/console/`);
  await page.fill('#login-user', 'admin');
  await page.fill('#login-key', ADMIN_KEY);
  await page.click('#login-form button');
  await page.locator('#feed-status', { hasText: 'Live feed: on' }).waitFor();
  t.deepEqual(sockets, [`wss://localhost:${secure.running.ports.https}/mqtt`]);
  // a device made after the page read the fleet: only the feed can bring it in (the list is read again each minute)
  await secure.request('POST', '/api/devices', { token: secure.adminToken, body: { id: 'tls-1', name: 'Tanker' } });
  await secure.request('POST', '/api/devices/tls-1/locations', {
    token: secure.adminToken,
    body: { location: { dateTime: new Date().toISOString(), latitude: 41.39, longitude: 2.17, speed: 33 } },
  });
  await page.locator('#fleet-rows tr[data-device="tls-1"] td', { hasText: '33 km/h' }).waitFor();
  await page.screenshot({ path: artefact('console', '9-https-live') });
  t.deepEqual(problems, []);
});

run('console: every control has a label, and a device is reached and worked with the keyboard alone', async (t) => {
  // made by the first test, or here when this one runs alone (409: it exists)
  await server.request('POST', '/api/devices', { token: server.adminToken, body: { id: VAN, name: 'Van 7' } });
  await server.request('POST', `/api/devices/${VAN}/locations`, {
    token: server.adminToken,
    body: { location: { dateTime: new Date(Date.now() - 60_000).toISOString(), latitude: 40.44, longitude: -3.67 } },
  });
  const context = await openBrowser(t);
  const page = await context.newPage();
  await logInWithKeyboard(page);
  await page.locator(`#fleet-rows tr[data-device="${VAN}"]`).waitFor();
  const unlabelled = (await page.evaluate(
    `[...document.querySelectorAll('input, select, textarea')].filter((el) => el.labels.length === 0).map((el) => el.id)`,
  )) as string[];
  t.deepEqual(unlabelled, [], 'inputs without a label');

  // Tab from the page's heading to the device's link, then Enter
  await page.focus('#fleet-title');
  let focused = '';
  for (let i = 0; i < 30 && focused !== VAN; i++) {
    await page.keyboard.press('Tab');
    focused = (await page.evaluate(`document.activeElement?.closest('tr')?.dataset.device ?? ''`)) as string;
  }
  t.is(focused, VAN, 'the device link is reached with Tab');
  // a live update redraws the list meanwhile: the focus stays on the device's link
  await server.request('POST', `/api/devices/${VAN}/locations`, {
    token: server.adminToken,
    body: { location: { dateTime: new Date().toISOString(), latitude: 40.45, longitude: -3.66, speed: 77 } },
  });
  await page.locator(`#fleet-rows tr[data-device="${VAN}"] td`, { hasText: '77 km/h' }).waitFor();
  t.is(
    await page.evaluate(`document.activeElement?.closest('tr')?.dataset.device ?? document.activeElement?.tagName`),
    VAN,
  );
  await page.keyboard.press('Enter');
  await page.locator('#device-title:focus').waitFor();
  t.regex((await page.locator('#device-title').textContent()) ?? '', /Van 7/);

  // the Commands page by Tab and Enter: its panel shows, the pressed state says which
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(`document.activeElement?.dataset.tab ?? ''`)) === 'commands') break;
  }
  await page.keyboard.press('Enter');
  await page.locator('[data-panel="commands"]').waitFor({ state: 'visible' });
  t.is(await page.getAttribute('[data-tab="commands"]', 'aria-pressed'), 'true');
  t.true(await page.locator('[data-panel="track"]').isHidden());
});
