/** The docs page at /docs: Swagger UI served from the installed package (no CDN: machines may be offline). */
import type Router from '@koa/router';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const uiDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>trackgate API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"><link rel="icon" href="/docs/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div><script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true });`;

export function docsRoutes(router: Router, document: () => object): void {
  // The service's root is where a person lands first: send a browser to the docs page; a client
  // that does not follow redirects still reads, as JSON, where the docs and the document are.
  router.get('/', (ctx) => {
    ctx.redirect('/docs');
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = JSON.stringify({ success: true, docs: '/docs', openapi: '/api/openapi.json', health: '/api/health' });
  });
  router.get('/api/openapi.json', (ctx) => {
    ctx.body = document();
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = INIT;
  });
  router.get('/docs/:asset', async (ctx, next) => {
    const type = ASSETS[ctx.params.asset];
    if (!type) return next();
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = await readFile(path.join(uiDir, ctx.params.asset));
  });
}
