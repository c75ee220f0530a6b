/**
 * The baseline of GET /api/lastLocations, in its own process: a bare Koa app with @koa/router
 * answering the same JSON body on the same route with `ctx.body = object` (Koa serialises it on
 * every request), with no auth, no validation and no storage.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { serveCommands } from './child.js';

let server: http.Server | undefined;

serveCommands({
  /** `body`: the answer trackgate gave. Returns the port. */
  async start(o: { body: object }): Promise<number> {
    const app = new Koa();
    const router = new Router({ sensitive: false });
    router.get('/api/lastLocations', (ctx) => {
      ctx.body = o.body;
    });
    app.use(router.routes());
    server = http.createServer(app.callback());
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  },
});
