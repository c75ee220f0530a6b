/**
 * createApi(deps) -> the Koa app of the REST API (docs/contract.md §2): envelope, errors with stable
 * codes, bearer tokens, per-user request limits and usage, every endpoint, OpenAPI and docs.
 */
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import { indexRouter } from './router-index.js';
import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { newRegistry } from './schemas/zod.js';
import { STATUS_BY_CODE, STORAGE_RETRY_AFTER_SECONDS, storageUnavailableBody, type ErrorBody } from './errors.js';
import { DomainError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RequestLimiter } from '../core/quota/rate-limiter.js';
import type { TokenFailure, TokensService } from '../core/auth/tokens.service.js';
import type { DevicesService } from '../core/devices/devices.service.js';
import type { FleetService } from '../core/devices/fleet.service.js';
import type { LocationsService } from '../core/locations/locations.service.js';
import type { AlertsService } from '../core/alerts/alerts.service.js';
import type { HistoryExportService } from '../core/export/history-export.service.js';
import type { GroupsService } from '../core/groups/groups.service.js';
import type { UsersService } from '../core/users/users.service.js';
import type { AccountsService } from '../core/accounts/accounts.service.js';
import type { CommandsService } from '../core/commands/commands.service.js';
import type { ZonesService } from '../core/rules/zones.service.js';
import type { AlertRulesService } from '../core/rules/alert-rules.service.js';
import type { ForwardsService } from '../core/forward/forwards.service.js';
import type { ReportsService } from '../core/reports/reports.service.js';
import type { Principal } from '../core/model/user.js';
import type { Metrics } from '../core/metrics/metrics.js';
import { monotonicMs, UNMATCHED_ROUTE } from '../core/metrics/counts.js';
import type { SightingScope, UnknownDevice } from '../core/devices/unknown-devices.repository.js';
import { authRoutes } from './routes/auth.routes.js';
import { deviceRoutes } from './routes/devices.routes.js';
import { fleetRoutes } from './routes/fleet.routes.js';
import { commandRoutes } from './routes/commands.routes.js';
import { groupRoutes } from './routes/groups.routes.js';
import { userRoutes } from './routes/users.routes.js';
import { ruleRoutes } from './routes/rules.routes.js';
import { forwardRoutes } from './routes/forwards.routes.js';
import { reportRoutes } from './routes/reports.routes.js';
import { accountRoutes, metricsRoute, STARTING_MESSAGE, systemRoutes } from './routes/system.routes.js';
import { docsRoutes } from './docs.js';
import { consoleRoutes, type ConsoleSettings } from './console.js';
import { answerJson, type RouteTable } from './route.js';
import { clientAddress } from './client-address.js';

export interface ApiDeps {
  clock: Clock;
  logger: Logger;
  bodyLimitBytes: number;
  limiter: RequestLimiter;
  tokens: TokensService;
  devices: DevicesService;
  /** ext: GET /api/lastLocations */
  fleet: FleetService;
  locations: LocationsService;
  historyExport: HistoryExportService;
  alerts: AlertsService;
  groups: GroupsService;
  users: UsersService;
  accounts: AccountsService;
  commands: CommandsService;
  zones: ZonesService;
  alertRules: AlertRulesService;
  forwards: ForwardsService;
  /** ext: GET /api/reports/trips, stops, summary */
  reports: ReportsService;
  ping: () => Promise<void>;
  /** why storage refuses writes while it still answers reads (a full disk, a read-only file system), if it does */
  writesFailing?: () => string | undefined;
  /** why free space where the database lives is too low (below TRACKGATE_DISK_ERROR), if it is */
  storageLow?: () => string | undefined;
  /** true until start-up is done (every listener bound, the first account made): the API answers 503 STARTING meanwhile */
  starting?: () => boolean;
  /** recent sightings of trackers refused at the gateway; the API always passes the caller's scope */
  unknownDevices: (limit: number, scope: SightingScope) => Promise<UnknownDevice[]>;
  onTimeZoneChanged?: (accountId: string) => void;
  version?: string;
  /** the web console at /console/ (docs/console.md); absent: not served */
  console?: ConsoleSettings;
  /** GET /metrics and the count of every request; absent (TRACKGATE_METRICS=off): neither */
  metrics?: Pick<Metrics, 'http' | 'scrape'>;
  /** reverse proxies whose X-Forwarded-For names the client (TRACKGATE_TRUSTED_PROXIES; client-address.ts) */
  trustedProxies?: readonly string[];
}

/** The 401 answer for each reason the token verifier (core/auth/tokens.service.ts) gives. */
export const TOKEN_FAILURE_MESSAGES: Record<TokenFailure, string> = {
  missing: 'Send a token in the header "Authorization: Bearer <token>"; get one from POST /api/Auth/Token.',
  expired: 'The token has expired; request a new one from POST /api/Auth/Token.',
  revoked: 'The token is no longer valid (its API key was replaced or its user changed); request a new one.',
  invalid: 'The token is not valid; request a new one from POST /api/Auth/Token.',
};

/**
 * RFC 6750 §3.1: a request without credentials gets the challenge alone, one with a bad token
 * also `error="invalid_token"`.
 */
const CHALLENGE = 'Bearer realm="trackgate"';
const CHALLENGE_INVALID = `${CHALLENGE}, error="invalid_token"`;

/**
 * The token of an `Authorization` header (RFC 6750 §2.1; the scheme is case-insensitive): '' when
 * there is no header, undefined when it holds no bearer token.
 */
function bearerToken(header: string): string | undefined {
  if (!header) return '';
  const token = /^bearer\s/i.test(header) ? header.slice(7).trim() : '';
  return token || undefined;
}

/** The OpenAPI document's introduction: complete on its own (the README of the repository says more). */
const API_DESCRIPTION = [
  'Wire-compatible with the Plaspy REST API: a client written against it works by changing only the base address. Fields and endpoints marked *ext* are trackgate additions; a strict client ignores them.',
  '',
  '**Authentication**: `POST /api/Auth/Token` with `{"userName", "apiKey"}` answers `{success, token, expires}`; send `Authorization: Bearer <token>` with every other request and ask for a new token before `expires`. Repeated failures from one address are answered 429 for a while (behind a reverse proxy the service is set to trust, the address is the client named by `X-Forwarded-For`). A request without a valid token gets 401 `INVALID_TOKEN` with `WWW-Authenticate: Bearer` and *ext* `details.reason`: `missing`, `invalid` (not a token of this service: bad signature, another algorithm than HS256, malformed), `expired`, or `revoked` (a new API key was issued, or the user was disabled, deleted or is outside its `from`..`expires` window).',
  '',
  "**Envelope**: every body is JSON with `success`. A failure adds `error` (a sentence a person can act on) and a stable machine `code`; 400 answers name the field in `details.field`. Every authenticated answer, errors included, carries `apiUsage` (this user's requests this minute) and `apiDailyUsage` (today, UTC).",
  '',
  `**Codes**: ${Object.entries(STATUS_BY_CODE)
    .map(([code, status]) => `\`${code}\` ${status}`)
    .join(', ')}. A known path with another method answers 405 \`METHOD_NOT_ALLOWED\` with an \`Allow\` header.`,
  '',
  "**Privileges**: `admin` ⊇ `write` ⊇ `read`; a user without any privilege is refused (403) everywhere. A user with a `group` sees only that group's devices. Anything of another account answers 404.",
  '',
  '**Transport**: the same API over HTTPS (TLS 1.2 or later) when the service has a certificate, and over plain HTTP unless that is turned off; send API keys and tokens over HTTPS only. *ext* The live feed (MQTT over WebSocket, sub-protocol `mqtt`, logged in with the user name and the API key or a token) is also served at `/mqtt` of the same origin: `wss://` beside HTTPS, `ws://` beside HTTP.',
  '',
  '**PATCH** takes an RFC 6902 JSON Patch array, applied to the resource as GET shows it and then validated like PUT; read-only fields cannot change, whatever the path (a whole-document replace included).',
  '',
  'More (configuration, the tracker gateway, MQTT): the README of the trackgate repository.',
].join('\n');

/** Error codes of a client that closed its connection before the answer ended. */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Every request, errors included, by the route pattern that took it (the label stays bounded). */
function countRequests(http: NonNullable<ApiDeps['metrics']>['http']): Koa.Middleware {
  return async (ctx: Context, next: Next) => {
    const start = monotonicMs();
    try {
      await next();
    } finally {
      http
        .route((ctx as { routerPath?: string }).routerPath ?? UNMATCHED_ROUTE, ctx.method)
        .answered(ctx.status, start);
    }
  };
}

/** The envelope of a failed request: sets its status and headers, logs what is not the caller's doing. */
function errorAnswer(ctx: Context, e: unknown, logger: Logger): ErrorBody {
  const err = e as Error & { status?: number; expose?: boolean };
  let body: ErrorBody;
  const outage = err instanceof DomainError ? undefined : storageUnavailableBody(err);
  if (outage) {
    logger.warn(
      { err: err.message, method: ctx.method, path: ctx.path, remoteAddress: ctx.ip },
      'request failed: storage unavailable',
    );
    ctx.status = 503;
    ctx.set('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
    body = outage;
  } else if (err instanceof DomainError) {
    ctx.status = STATUS_BY_CODE[err.code];
    body = { success: false, error: err.message, code: err.code, ...(err.details ? { details: err.details } : {}) };
    if (err.code === 'RATE_LIMITED') ctx.set('Retry-After', String(err.details?.retryAfterSeconds ?? 60));
    if (err.code === 'STARTING') ctx.set('Retry-After', '1');
  } else if (err.status && err.status >= 400 && err.status < 500 && err.expose) {
    ctx.status = err.status;
    body = { success: false, error: err.message, code: 'VALIDATION_FAILED' };
  } else {
    logger.error({ err, method: ctx.method, path: ctx.path, remoteAddress: ctx.ip }, 'request failed');
    ctx.status = 500;
    body = {
      success: false,
      error: 'Something went wrong on our side; it has been logged. Try again.',
      code: 'INTERNAL',
    };
  }
  if (ctx.status === 401) {
    const missing = err instanceof DomainError && err.details?.reason === 'missing';
    ctx.set('WWW-Authenticate', missing ? CHALLENGE : CHALLENGE_INVALID);
  }
  return body;
}

/** Errors: one envelope for everything, never a stack. */
function handleErrors(deps: ApiDeps): Koa.Middleware {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if ((ctx.status === 404 || ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        // No route took the request. The answer still carries the caller's usage (docs/contract.md §2:
        // every authenticated response), so a valid token is looked at, and counted, here too.
        await noteUsage(deps, ctx);
        const allow = ctx.response.get('Allow');
        if (allow) {
          throw new DomainError(
            'METHOD_NOT_ALLOWED',
            `${ctx.method} is not allowed on ${ctx.path}; it takes ${allow}.`,
            { allow: allow.split(', ') },
          );
        }
        ctx.remove('Allow');
        throw new DomainError(
          'NOT_FOUND',
          `There is no endpoint ${ctx.method} ${ctx.path}; see /docs or /api/openapi.json.`,
        );
      }
    } catch (e) {
      answerJson(ctx, errorAnswer(ctx, e, deps.logger));
    }
  };
}

/**
 * The bearer token's principal, from the one token verifier (core's tokens.verify, which MQTT
 * logins use too); a 401 worded by the verifier's reason otherwise.
 */
async function authenticate(deps: ApiDeps, ctx: Context): Promise<Principal> {
  const token = bearerToken(ctx.get('authorization'));
  const checked = token === undefined ? undefined : await deps.tokens.verify(token);
  if (checked?.ok) return checked.principal;
  const reason = checked?.reason ?? 'invalid';
  throw new DomainError('INVALID_TOKEN', TOKEN_FAILURE_MESSAGES[reason], { reason });
}

/**
 * The guard of every route with auth: a valid bearer token, then the per-user request limit
 * (429 + Retry-After). Leaves the principal and its usage in ctx.state; addRoute puts the usage
 * into the answer.
 */
async function guard(deps: ApiDeps, ctx: Context): Promise<void> {
  const principal = await authenticate(deps, ctx);
  ctx.state.principal = principal;
  const usage = await deps.limiter.hit(principal.userId, deps.clock.now());
  ctx.state.usage = usage;
  if (!usage.allowed) {
    throw new DomainError('RATE_LIMITED', 'Too many requests this minute; wait for the next minute.', {
      retryAfterSeconds: usage.retryAfterSeconds,
    });
  }
  // No privilege is no access: reads need `read` as much as writes need theirs.
  if (principal.privileges.size === 0) {
    throw new DomainError(
      'FORBIDDEN',
      'Your user has no privileges; ask an admin of your account to grant "read" or more.',
    );
  }
}

/**
 * For answers no route gave (unknown path, method not allowed): the usage of a caller whose
 * token is valid, counted like any request. A missing or bad token changes nothing here.
 */
async function noteUsage(deps: ApiDeps, ctx: Context): Promise<void> {
  if (ctx.state.usage || !ctx.get('authorization')) return;
  try {
    const principal = await authenticate(deps, ctx);
    ctx.state.usage = await deps.limiter.hit(principal.userId, deps.clock.now());
  } catch {
    // not authenticated: the answer goes out without usage
  }
}

/**
 * The API listens before the tracker listeners and the first account exist: until start-up is
 * done a token request with the admin's right key would be refused (and counted as a failure)
 * because the admin is not made yet. Health says "starting"; the rest of /api/ answers 503.
 */
function refuseWhileStarting(starting: () => boolean): Koa.Middleware {
  return async (ctx: Context, next: Next) => {
    const path = ctx.path.toLowerCase();
    if (starting() && path.startsWith('/api/') && path !== '/api/health' && path !== '/api/openapi.json') {
      throw new DomainError('STARTING', STARTING_MESSAGE);
    }
    await next();
  };
}

/** Every endpoint, on the one router; then /docs and the OpenAPI document made of their schemas (once, when first asked). */
function registerRoutes(api: RouteTable, deps: ApiDeps): void {
  systemRoutes(api, {
    ping: deps.ping,
    writesFailing: deps.writesFailing,
    starting: deps.starting,
    storageLow: deps.storageLow,
  });
  if (deps.metrics) metricsRoute(api, deps.metrics.scrape);
  authRoutes(api, deps.tokens);
  fleetRoutes(api, deps);
  deviceRoutes(api, deps);
  commandRoutes(api, deps.commands);
  groupRoutes(api, deps.groups);
  userRoutes(api, deps.users, deps.clock);
  ruleRoutes(api, deps.zones, deps.alertRules);
  forwardRoutes(api, deps.forwards);
  reportRoutes(api, deps.reports);
  accountRoutes(api, deps.accounts, deps.unknownDevices, deps.onTimeZoneChanged);
  if (deps.console) consoleRoutes(api.router, deps.console);

  let document: object | undefined;
  docsRoutes(api.router, () => {
    document ??= new OpenApiGeneratorV31(api.registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        title: 'trackgate REST API',
        version: deps.version ?? '0.1.0',
        description: API_DESCRIPTION,
      },
    });
    return document;
  });
}

export function createApi(deps: ApiDeps): Koa {
  const app = new Koa({ proxy: false });
  const registry = newRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });

  // What fails after an answer has begun (a streamed file): handleErrors cannot answer it any more, and Koa
  // would print a stack to stderr. A client that went away is no failure of ours. Koa reports a
  // stream's error twice (the stream's own event, then the pipe's end): logged once.
  const reported = new WeakSet<Error>();
  app.on('error', (err: Error & { code?: string }, ctx?: Context) => {
    if (reported.has(err)) return;
    reported.add(err);
    const where = { method: ctx?.method, path: ctx?.path };
    if (CLIENT_GONE.has(err.code ?? '')) deps.logger.debug(where, 'client left before the answer ended');
    else deps.logger.warn({ ...where, err: err.message }, 'answer cut short');
  });
  const proxied = clientAddress(deps.trustedProxies ?? []);
  if (proxied) app.use(proxied);
  if (deps.metrics) app.use(countRequests(deps.metrics.http));
  app.use(handleErrors(deps));
  if (deps.starting) app.use(refuseWhileStarting(deps.starting));

  // One router for the whole API: a request is matched once.
  const api: RouteTable = {
    router: new Router({ sensitive: false }),
    registry,
    guard: (ctx) => guard(deps, ctx),
    bodyLimitBytes: deps.bodyLimitBytes,
  };
  registerRoutes(api, deps);
  indexRouter(api.router);

  app.use(api.router.routes());
  // Not thrown: the router then sets `Allow`, which the error handler above turns into a 405.
  app.use(api.router.allowedMethods());
  return app;
}
