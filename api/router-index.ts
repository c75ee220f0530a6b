/**
 * @koa/router matches a request by testing every layer's regular expression in turn (and calls
 * `debug` for each): with the API's 60-odd routes that was a tenth of the CPU of a
 * `GET lastLocation` (bench/rest.bench.ts). Here the router's `match` tests only the layers that
 * can match the request's first two path segments, in their order on the stack: a layer whose
 * path starts with two literal segments (`/api/devices/...`) is filed under them (lower case: a
 * router that ignores case matches `/API/Devices` too), and every other layer (middleware, a
 * parameter or pattern in the first two segments, a prefix match) is tested for every request, as
 * before. Each candidate is still tested by its own expression, so a wider set changes nothing:
 * the answer is the one the router's own `match` gives.
 */
import type Router from '@koa/router';

type Layer = Router['stack'][number];
type MatchResult = { path: Layer[]; pathAndMethod: Layer[]; route: boolean };

const PATTERN = /[:*(){}?+[\]\\]/;

/** The first two segments of a request path, lower case ('/api/devices'; '/metrics' for one). */
function keyOfPath(path: string): string {
  const second = path.indexOf('/', 1);
  if (second < 0) return path.toLowerCase();
  const third = path.indexOf('/', second + 1);
  const key = third < 0 ? path : path.slice(0, third);
  // '/metrics/' is '/metrics' with the trailing slash a non-strict route allows
  return (key.endsWith('/') ? key.slice(0, -1) : key).toLowerCase();
}

/** The key of the paths a layer can match, or undefined where it may match paths of any key. */
function keyOfLayer(layer: Layer): string | undefined {
  if (layer.methods.length === 0 || (layer.opts as { end?: boolean }).end === false) return undefined;
  const path = layer.path;
  if (typeof path !== 'string' || !path.startsWith('/')) return undefined;
  const segments = path.split('/').slice(1, 3);
  if (segments.some((s) => s === '' || PATTERN.test(s))) return undefined;
  return `/${segments.join('/')}`.toLowerCase();
}

/** Replaces `router.match` with one that tests only the layers a path's first two segments can reach. */
export function indexRouter(router: Router): void {
  const original = router.match.bind(router);
  let indexedLength = -1;
  let always: Layer[] = [];
  let byKey = new Map<string, Layer[]>();

  function index(): void {
    const stack = router.stack;
    const keyed = new Map<string, number[]>();
    const alwaysAt: number[] = [];
    stack.forEach((layer, i) => {
      const key = keyOfLayer(layer);
      if (key === undefined) alwaysAt.push(i);
      else keyed.set(key, [...(keyed.get(key) ?? []), i]);
    });
    byKey = new Map();
    for (const [key, at] of keyed)
      byKey.set(
        key,
        [...at, ...alwaysAt].sort((a, b) => a - b).map((i) => stack[i]),
      );
    always = alwaysAt.map((i) => stack[i]);
    indexedLength = stack.length;
  }

  router.match = ((path: string, method: string): MatchResult => {
    if (typeof path !== 'string') return original(path, method) as MatchResult;
    if (router.stack.length !== indexedLength) index();
    const layers = byKey.get(keyOfPath(path)) ?? always;
    const result: MatchResult = { path: [], pathAndMethod: [], route: false };
    const m = method.toUpperCase();
    for (const layer of layers) {
      if (!layer.match(path)) continue;
      result.path.push(layer);
      if (layer.methods.length === 0 || layer.methods.includes(m)) {
        result.pathAndMethod.push(layer);
        if (layer.methods.length > 0) result.route = true;
      }
    }
    return result;
  }) as Router['match'];
}
