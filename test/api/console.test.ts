/** The console's static route (docs/console.md): types, headers, and nothing served outside its files. */
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type TestServer } from '../helpers/server.js';
import { consoleFiles, tileSource } from '../../api/console.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A request sent byte for byte (fetch would normalise `..` and encoded slashes away): its status line. */
function rawGet(port: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () =>
      s.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    s.on('data', (d) => (text += d.toString('latin1')));
    s.on('end', () => resolve(text.split('\r\n')[0]));
    s.on('error', reject);
  });
}

let server: TestServer;
test.before(async () => {
  server = await startServer('sqlite');
});
test.after.always(() => server?.stop());

test('console: the page, its scripts, styles and Leaflet, each with its type', async (t) => {
  const expect: Record<string, string> = {
    '/console/': 'text/html; charset=utf-8',
    '/console/index.html': 'text/html; charset=utf-8',
    '/console/app.js': 'text/javascript; charset=utf-8',
    '/console/mqtt-feed.js': 'text/javascript; charset=utf-8',
    '/console/console.css': 'text/css; charset=utf-8',
    '/console/vendor/leaflet.js': 'text/javascript; charset=utf-8',
    '/console/vendor/leaflet.css': 'text/css; charset=utf-8',
    '/console/vendor/images/layers.png': 'image/png',
  };
  for (const [p, type] of Object.entries(expect)) {
    const res = await fetch(server.base + p);
    t.is(res.status, 200, p);
    t.is(res.headers.get('content-type'), type, p);
    t.is(res.headers.get('x-content-type-options'), 'nosniff', p);
    t.true((await res.arrayBuffer()).byteLength > 0, p);
  }
  const page = await (await fetch(`${server.base}/console/`)).text();
  t.regex(page, /<script type="module" src="app.js"><\/script>/);
  t.notRegex(page, /<script>|<style|style="|https?:\/\/[^"]*\.js/, 'no inline script or style, nothing from a CDN');
});

test('console: /console goes to /console/', async (t) => {
  const res = await fetch(`${server.base}/console`, { redirect: 'manual' });
  t.is(res.status, 302);
  t.is(res.headers.get('location'), '/console/');
});

test('console: a policy that allows no inline script, with the tile server for images', async (t) => {
  const csp = (await fetch(`${server.base}/console/`)).headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self'(;|$)/);
  t.regex(csp, /style-src 'self'(;|$)/);
  t.regex(csp, /img-src 'self' data: https:\/\/tile\.openstreetmap\.org(;|$)/);
  t.regex(csp, /connect-src 'self'(;|$)/, 'no MQTT WebSocket port in this test: the API only');
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /unsafe/);
  const config = await (await fetch(`${server.base}/console/config.json`)).json();
  t.deepEqual(config, {
    success: true,
    tileUrl: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png',
    mqttWsPort: null,
    mqttWsPath: null,
  });
});

test('console: paths outside its files are 404, however they are spelled', async (t) => {
  for (const p of ['/console/nothing.js', '/console/vendor/leaflet-src.js', '/console/vendor/']) {
    const res = await fetch(server.base + p);
    t.is(res.status, 404, p);
    t.is(((await res.json()) as { code?: string }).code, 'NOT_FOUND', p);
  }
  const port = server.running.ports.http;
  for (const target of [
    '/console/../package.json',
    '/console/../../package.json',
    '/console/..%2fpackage.json',
    '/console/%2e%2e/%2e%2e/package.json',
    '/console/vendor/../../api/console.ts',
    '/console/vendor/..%2f..%2fpackage.json',
    '/console/app.js%00.html',
    '/console//etc/passwd',
    '/console/%5c..%5cpackage.json',
  ]) {
    t.regex(await rawGet(port, target), /^HTTP\/1\.1 404 /, target);
  }
});

test('console: the table of files holds the console folder and Leaflet only', (t) => {
  const files = consoleFiles();
  for (const [url, file] of files) {
    t.true(url.startsWith('/console/'), url);
    const inside = [path.join(root, 'console'), path.join(root, 'node_modules', 'leaflet', 'dist')];
    t.true(
      inside.some((dir) => file.startsWith(dir + path.sep)),
      `${url} -> ${file}`,
    );
  }
  t.true(files.has('/console/index.html'));
});

test('console: the tile server named in img-src', (t) => {
  t.is(tileSource('https://{s}.tile.example.org/{z}/{x}/{y}.png'), ' https://*.tile.example.org');
  t.is(tileSource('http://127.0.0.1:8081/tiles/{z}/{x}/{y}.png'), ' http://127.0.0.1:8081');
  t.is(tileSource(undefined), '');
});

test('console: no tiles when the tile URL is off', async (t) => {
  const s = await startServer('sqlite', { env: { TRACKGATE_CONSOLE_TILE_URL: 'off', TRACKGATE_MQTT_WS_PORT: '0' } });
  t.teardown(() => s.stop());
  const res = await fetch(`${s.base}/console/`);
  const csp = res.headers.get('content-security-policy') ?? '';
  const ws = s.running.ports['mqtt/ws'];
  t.regex(csp, /img-src 'self' data:(;|$)/);
  const own = `ws://127.0.0.1:${s.running.ports.http}`;
  t.true(csp.includes(`connect-src 'self' ${own} ws://127.0.0.1:${ws} wss://127.0.0.1:${ws}`), csp);
  t.deepEqual(await (await fetch(`${s.base}/console/config.json`)).json(), {
    success: true,
    tileUrl: null,
    mqttWsPort: ws,
    mqttWsPath: '/mqtt',
  });
});

test('console: found from dist/ after `npm run build`', async (t) => {
  const built = path.join(root, 'dist', 'api', 'console.js');
  const fresh = await new Promise<boolean>((resolve) =>
    execFile(process.execPath, ['bin/build-check.js'], { cwd: root }, (e) => resolve(!e)),
  );
  if (!existsSync(built) || !fresh) {
    if (process.env.CI) t.fail('CI: dist/ is built by npm ci; it must hold the console route');
    else t.log('dist/ is not built or is older than the sources: run npm run build to check this');
    t.pass();
    return;
  }
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', `import(${JSON.stringify(built)}).then((m) => console.log(m.consoleDir()))`],
      { cwd: root },
      (e, stdout) => (e ? reject(e) : resolve(stdout.trim())),
    ),
  );
  t.is(out, path.join(root, 'console'));
});
