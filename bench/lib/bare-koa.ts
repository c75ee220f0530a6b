/**
 * The REST baselines, in their own process: bare Koa apps with @koa/router answering the same JSON
 * bodies as trackgate on the same routes, with no auth, no validation and no storage.
 * - `plain`: the idiomatic bare route, `ctx.body = object` (Koa serialises it on every request);
 * - `text`: lastLocation as text serialised once at start, its type set first: the cheapest answer
 *   Koa can give on this route, the ceiling that shows the generator is not what limits.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { serveCommands } from './child.js';

const servers: http.Server[] = [];

async function listen(app: Koa): Promise<number> {
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function bareApp(lastLocation: (ctx: Koa.Context) => void, token: object): Koa {
  const app = new Koa();
  const router = new Router({ sensitive: false });
  router.get('/api/devices/:deviceId/lastLocation', lastLocation);
  router.post('/api/Auth/Token', async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { userName?: string };
    if (!input.userName) ctx.throw(400);
    ctx.body = token;
  });
  app.use(router.routes());
  return app;
}

serveCommands({
  /** `lastLocation`: the body trackgate answered; `token`: a token-shaped body. Returns both ports. */
  async start(bodies: { lastLocation: object; token: object }): Promise<{ plain: number; text: number }> {
    const text = JSON.stringify(bodies.lastLocation);
    return {
      plain: await listen(
        bareApp((ctx) => {
          ctx.body = bodies.lastLocation;
        }, bodies.token),
      ),
      text: await listen(
        bareApp((ctx) => {
          ctx.set('Content-Type', 'application/json; charset=utf-8');
          ctx.body = text;
        }, bodies.token),
      ),
    };
  },
});
