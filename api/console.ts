/**
 * The web console at /console/ (docs/console.md): static files of the repository's console/ folder
 * and Leaflet from the installed package (no CDN: the box may be offline). Only the files listed
 * when the app is made are served, so no request path can reach outside them.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleSettings {
  /** a Leaflet tile URL template; undefined: the map has no tiles */
  tileUrl?: string;
  /** the MQTT-over-WebSocket port the live feed is read from, once it is bound; undefined: none (the console polls) */
  mqttWsPort(): number | undefined;
  /** the path of this origin that takes MQTT over WebSocket (`/mqtt`), once the broker runs: the console's live feed */
  mqttWsPath?(): string | undefined;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** The console's folder: beside api/ in the source tree, two levels up from dist/api/ after `npm run build`. */
export function consoleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../console'), path.resolve(here, '../../console')];
  const found = candidates.find((dir) => existsSync(path.join(dir, 'index.html')));
  if (!found) throw new Error(`the console's files are missing (looked in ${candidates.join(', ')})`);
  return found;
}

/** Every file under `dir` with a type we serve, by its path below `prefix` ('/console/app.js' -> file). */
function listFiles(dir: string, prefix: string, into: Map<string, string>): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) listFiles(full, `${prefix}${entry.name}/`, into);
    else if (entry.isFile() && TYPES[path.extname(entry.name)]) into.set(`${prefix}${entry.name}`, full);
  }
}

/** The console's files and Leaflet's: URL path -> file. */
export function consoleFiles(dir = consoleDir()): Map<string, string> {
  const files = new Map<string, string>();
  listFiles(dir, '/console/', files);
  const leaflet = path.join(path.dirname(createRequire(import.meta.url).resolve('leaflet/package.json')), 'dist');
  files.set('/console/vendor/leaflet.js', path.join(leaflet, 'leaflet.js'));
  files.set('/console/vendor/leaflet.css', path.join(leaflet, 'leaflet.css'));
  listFiles(path.join(leaflet, 'images'), '/console/vendor/images/', files);
  return files;
}

/** `https://{s}.tile.example.org/{z}/{x}/{y}.png` -> `https://*.tile.example.org`, for img-src. */
export function tileSource(tileUrl: string | undefined): string {
  if (!tileUrl) return '';
  const m = /^(https?:\/\/)([^/?#]+)/i.exec(tileUrl);
  return m ? ` ${m[1]}${m[2].replace(/\{[a-z]+\}/gi, '*')}` : '';
}

/**
 * No inline script or style anywhere, so scripts and styles come from this origin only; images
 * from here and the tile server; connections to the API, this origin's `/mqtt` and the MQTT WebSocket port.
 */
function policy(ctx: Context, settings: ConsoleSettings): string {
  const port = settings.mqttWsPort();
  const host = ctx.hostname.includes(':') ? `[${ctx.hostname}]` : ctx.hostname;
  const safe = /^[\w.:[\]-]+$/;
  const ws = port !== undefined && safe.test(host) ? ` ws://${host}:${port} wss://${host}:${port}` : '';
  // the page's own origin as ws(s):, which not every browser counts as 'self'
  const own =
    settings.mqttWsPath?.() && safe.test(ctx.host) ? ` ${ctx.protocol === 'https' ? 'wss' : 'ws'}://${ctx.host}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data:${tileSource(settings.tileUrl)}`,
    `connect-src 'self'${own}${ws}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function consoleRoutes(router: Router, settings: ConsoleSettings): void {
  const files = consoleFiles();
  // the router takes '/console/' here too (trailing slashes are optional): only the bare path is sent on
  router.get('/console', (ctx, next) => (ctx.path === '/console' ? ctx.redirect('/console/') : next()));
  router.get('/console/config.json', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      success: true,
      tileUrl: settings.tileUrl ?? null,
      mqttWsPort: settings.mqttWsPort() ?? null,
      mqttWsPath: settings.mqttWsPath?.() ?? null,
    };
  });
  router.get('/console/{*path}', async (ctx, next) => {
    const file = files.get(ctx.path === '/console/' ? '/console/index.html' : ctx.path);
    if (!file) return next();
    ctx.type = TYPES[path.extname(file)];
    ctx.set('Content-Security-Policy', policy(ctx, settings));
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = await readFile(file);
  });
}
