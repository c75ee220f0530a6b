/**
 * createApi(deps) -> the Koa app of the REST API (CONTRACT.md §2): envelope, errors with stable
 * codes, bearer tokens, per-user request limits and usage, every endpoint, OpenAPI and docs.
 */
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import koaJwt from 'koa-jwt';
import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { newRegistry } from './schemas/zod.js';
import { STATUS_BY_CODE, STORAGE_RETRY_AFTER_SECONDS, storageUnavailableBody, type ErrorBody } from './errors.js';
import { DomainError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RequestLimiter } from '../core/quota/rate-limiter.js';
import type { TokenClaims, TokensService } from '../core/auth/tokens.service.js';
import type { DevicesService } from '../core/devices/devices.service.js';
import type { LocationsService } from '../core/locations/locations.service.js';
import type { AlertsService } from '../core/alerts/alerts.service.js';
import type { GroupsService } from '../core/groups/groups.service.js';
import type { UsersService } from '../core/users/users.service.js';
import type { AccountsService } from '../core/accounts/accounts.service.js';
import type { Principal } from '../core/model/user.js';
import type { UnknownDevice } from '../core/devices/unknown-devices.repository.js';
import { authRoutes } from './routes/auth.routes.js';
import { deviceRoutes } from './routes/devices.routes.js';
import { groupRoutes } from './routes/groups.routes.js';
import { userRoutes } from './routes/users.routes.js';
import { accountRoutes, systemRoutes } from './routes/system.routes.js';
import { docsRoutes } from './docs.js';
import { answerJson, type RouteTable } from './route.js';

export interface ApiDeps {
  clock: Clock;
  logger: Logger;
  bodyLimitBytes: number;
  limiter: RequestLimiter;
  tokens: TokensService;
  devices: DevicesService;
  locations: LocationsService;
  alerts: AlertsService;
  groups: GroupsService;
  users: UsersService;
  accounts: AccountsService;
  ping: () => Promise<void>;
  unknownDevices: (limit?: number) => Promise<UnknownDevice[]>;
  onTimeZoneChanged?: (accountId: string) => void;
  version?: string;
}

const AUTH_MESSAGES: Record<string, string> = {
  missing: 'Send a token in the header "Authorization: Bearer <token>"; get one from POST /api/Auth/Token.',
  TokenExpiredError: 'The token has expired; request a new one from POST /api/Auth/Token.',
  revoked: 'The token is no longer valid (its API key was replaced or its user changed); request a new one.',
  invalid: 'The token is not valid; request a new one from POST /api/Auth/Token.',
};

function authFailure(err: { message?: string; originalError?: { name?: string; message?: string } }): string {
  if (err.message === 'Token not found') return AUTH_MESSAGES.missing;
  if (err.originalError?.name === 'TokenExpiredError') return AUTH_MESSAGES.TokenExpiredError;
  if (err.originalError?.message === 'Token revoked') return AUTH_MESSAGES.revoked;
  return AUTH_MESSAGES.invalid;
}

export function createApi(deps: ApiDeps): Koa {
  const app = new Koa({ proxy: false });
  const registry = newRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });

  // Errors: one envelope for everything, never a stack.
  app.use(async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new DomainError('NOT_FOUND', `There is no endpoint ${ctx.method} ${ctx.path}; see /api/openapi.json.`);
      }
    } catch (e) {
      const err = e as Error & { status?: number; expose?: boolean; originalError?: { name?: string; message?: string } };
      let body: ErrorBody;
      // koa-jwt turns a failed revocation lookup into a 401: an outage there is still a 503.
      const outage = err instanceof DomainError ? undefined : (storageUnavailableBody(err) ?? storageUnavailableBody(err.originalError));
      if (outage) {
        deps.logger.warn({ err: err.message, method: ctx.method, path: ctx.path }, 'request failed: storage unavailable');
        ctx.status = 503;
        ctx.set('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
        body = outage;
      } else if (err instanceof DomainError) {
        ctx.status = STATUS_BY_CODE[err.code];
        body = { success: false, error: err.message, code: err.code, ...(err.details ? { details: err.details } : {}) };
        if (err.code === 'RATE_LIMITED') ctx.set('Retry-After', String(err.details?.retryAfterSeconds ?? 60));
      } else if (err.status === 401) {
        ctx.status = 401;
        body = { success: false, error: authFailure(err), code: 'INVALID_TOKEN' };
      } else if (err.status === 405 || err.status === 501) {
        ctx.status = err.status;
        body = { success: false, error: `${ctx.method} is not allowed on ${ctx.path}.`, code: 'NOT_FOUND' };
      } else if (err.status && err.status >= 400 && err.status < 500 && err.expose) {
        ctx.status = err.status;
        body = { success: false, error: err.message, code: 'VALIDATION_FAILED' };
      } else {
        deps.logger.error({ err, method: ctx.method, path: ctx.path }, 'request failed');
        ctx.status = 500;
        body = { success: false, error: 'Something went wrong on our side; it has been logged. Try again.', code: 'INTERNAL' };
      }
      if (ctx.status === 401) ctx.set('WWW-Authenticate', 'Bearer realm="trackgate", error="invalid_token"');
      answerJson(ctx, body);
    }
  });

  // Bearer tokens through koa-jwt: HS256 only; a revoked key, a deleted or disabled user is a 401.
  const jwtOptions: Record<string, unknown> = {
    secret: deps.tokens.secret,
    algorithms: ['HS256'],
    key: 'claims',
    debug: true,
    isRevoked: async (ctx: Context, claims: object) => {
      const principal = await deps.tokens.principalFor(claims as TokenClaims);
      ctx.state.principal = principal;
      return principal === null;
    },
  };
  // jsonwebtoken reads clockTimestamp from these options on every verify: expiry follows our Clock.
  Object.defineProperty(jwtOptions, 'clockTimestamp', { enumerable: true, get: () => Math.floor(deps.clock.now().getTime() / 1000) });
  const requireToken = koaJwt(jwtOptions as unknown as Parameters<typeof koaJwt>[0]);

  // A token verified once is remembered by its exact string (a forged token is another string);
  // its expiry is still checked against the clock, and revocation through the principal, each time.
  const verified = new Map<string, TokenClaims>();
  async function authenticate(ctx: Context): Promise<Principal> {
    const header = ctx.get('authorization');
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    const known = token ? verified.get(token) : undefined;
    if (known && known.exp * 1000 > deps.clock.now().getTime()) {
      const principal = await deps.tokens.principalFor(known);
      if (principal) return principal;
    }
    // koa-jwt throws 401 unless the token verifies and isRevoked (above) found its principal.
    await requireToken(ctx, async () => {
      if (verified.size >= 50_000) verified.clear();
      verified.set(token, ctx.state.claims as TokenClaims);
    });
    return ctx.state.principal as Principal;
  }

  /**
   * The guard of every route with auth: a valid bearer token, then the per-user request limit
   * (429 + Retry-After). Leaves the principal and its usage in ctx.state; addRoute puts the usage
   * into the answer.
   */
  async function guard(ctx: Context): Promise<void> {
    const principal = await authenticate(ctx);
    ctx.state.principal = principal;
    const usage = await deps.limiter.hit(principal.userId, deps.clock.now());
    ctx.state.usage = usage;
    if (!usage.allowed) {
      throw new DomainError('RATE_LIMITED', 'Too many requests this minute; wait for the next minute.', { retryAfterSeconds: usage.retryAfterSeconds });
    }
  }

  // One router for the whole API: a request is matched once.
  const api: RouteTable = { router: new Router({ sensitive: false }), registry, guard, bodyLimitBytes: deps.bodyLimitBytes };
  systemRoutes(api, { ping: deps.ping });
  authRoutes(api, deps.tokens);
  deviceRoutes(api, deps);
  groupRoutes(api, deps.groups);
  userRoutes(api, deps.users, deps.clock);
  accountRoutes(api, deps.accounts, deps.unknownDevices, deps.onTimeZoneChanged);

  let document: object | undefined;
  docsRoutes(api.router, () => {
    document ??= new OpenApiGeneratorV31(registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        title: 'trackgate REST API',
        version: deps.version ?? '0.1.0',
        description: 'Wire-compatible with the Plaspy REST API (see CONTRACT.md). Fields marked ext are trackgate additions. Every response has `success`; failures add `error` and a stable `code`. Authenticated responses carry `apiUsage` (this minute) and `apiDailyUsage` (today, UTC).',
      },
    });
    return document;
  });

  app.use(api.router.routes());
  app.use(api.router.allowedMethods({ throw: true }));
  return app;
}
