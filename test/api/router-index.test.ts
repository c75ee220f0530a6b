/**
 * api/router-index.ts: the indexed `match` answers exactly what @koa/router's own answers (the same
 * layers, in the same order, the same `route` flag) for paths of every kind, and routes added after
 * the index was built are found.
 */
import test from 'ava';
import Router from '@koa/router';
import { indexRouter } from '../../api/router-index.js';

function routes(): Router {
  const r = new Router({ sensitive: false });
  const h = async () => {};
  r.use(h); // middleware: every path
  r.get('/api/health', h);
  r.post('/api/Auth/Token', h);
  r.get('/api/devices', h);
  r.post('/api/devices', h);
  r.get('/api/devices/:deviceId', h);
  r.patch('/api/devices/:deviceId', h);
  r.get('/api/devices/:deviceId/lastLocation', h);
  r.post('/api/devices/:deviceId/locations', h);
  r.get('/api/devices/:deviceId/locations/export', h);
  r.get('/api/lastLocations', h);
  r.get('/api/:anything/probe', h); // a parameter in the second segment: tested for every path
  r.get('/metrics', h);
  r.get('/docs', h);
  r.get('/docs/*rest', h);
  r.all('/api/reports/trips', h);
  r.use('/console', h); // a prefix
  r.get('/', h);
  return r;
}

const PATHS = [
  '/',
  '/api',
  '/api/',
  '/api/health',
  '/api/health/',
  '/API/HEALTH',
  '/api/Auth/Token',
  '/api/auth/token',
  '/api/devices',
  '/api/devices/',
  '/api/devices/350000000001000',
  '/api/Devices/350000000001000/LastLocation',
  '/api/devices/x/lastLocation',
  '/api/devices/x/lastLocation/',
  '/api/devices/x/locations',
  '/api/devices/x/locations/export',
  '/api/devices/x/nothing',
  '/api/devices%2Fx',
  '/api/lastLocations',
  '/api/other/probe',
  '/api/devices/probe',
  '/metrics',
  '/metrics/',
  '/metrics/x',
  '/docs',
  '/docs/openapi.json',
  '/console',
  '/console/app.js',
  '/api/reports/trips',
  '/nothing/at/all',
  '//double',
  '',
];

const names = (layers: { path: unknown; methods: string[] }[]) =>
  layers.map((l) => `${l.methods.join('|')} ${String(l.path)}`);

test('router-index: the indexed match is the router’s own, for every path and method', (t) => {
  const plain = routes();
  const indexed = routes();
  indexRouter(indexed);
  for (const path of PATHS)
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE', 'get']) {
      const a = plain.match(path, method);
      const b = indexed.match(path, method);
      t.deepEqual(names(b.path), names(a.path), `${method} ${path}: path`);
      t.deepEqual(names(b.pathAndMethod), names(a.pathAndMethod), `${method} ${path}: pathAndMethod`);
      t.is(b.route, a.route, `${method} ${path}: route`);
    }
});

test('router-index: a route added after the first request is found', (t) => {
  const r = routes();
  indexRouter(r);
  t.false(r.match('/api/late/route', 'GET').route);
  r.get('/api/late/route', async () => {});
  t.true(r.match('/api/late/route', 'GET').route);
});
