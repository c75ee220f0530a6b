/**
 * The REST baseline: a bare Koa app with @koa/router answering the same JSON bodies as trackgate
 * on the same routes (no auth, no validation, no storage), in its own process.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { serveCommands } from './child.js';

let server: http.Server | undefined;

serveCommands({
  /** `lastLocation`: the body trackgate answered; `token`: a token-shaped body. Returns the port. */
  async start(bodies: { lastLocation: object; token: object }): Promise<number> {
    const app = new Koa();
    const router = new Router({ sensitive: false });
    router.get('/api/devices/:deviceId/lastLocation', (ctx) => {
      ctx.body = bodies.lastLocation;
    });
    router.post('/api/Auth/Token', async (ctx) => {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { userName?: string };
      if (!input.userName) ctx.throw(400);
      ctx.body = bodies.token;
    });
    app.use(router.routes());
    server = http.createServer(app.callback());
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  },
});
