import { z } from '../schemas/zod.js';
import { addRoute } from '../route.js';
import type { RouteTable } from '../route.js';
import { usageFields } from '../schemas/common.schemas.js';
import type { AccountsService } from '../../core/accounts/accounts.service.js';
import type { SightingScope, UnknownDevice } from '../../core/devices/unknown-devices.repository.js';
import { requirePrivilege } from '../../core/access/access.js';
import type { ErrorCode } from '../../core/errors.js';

/** What health, and every other endpoint, answer until start-up is done. */
export const STARTING_MESSAGE =
  'trackgate is starting (listeners, gateway processes, the first account); try again in a second.';

export function systemRoutes(
  api: RouteTable,
  deps: {
    ping: () => Promise<void>;
    writesFailing?: () => string | undefined;
    starting?: () => boolean;
    /** why free space is too low although writes still succeed (core/db/disk.watch.ts), if it is */
    storageLow?: () => string | undefined;
  },
): void {
  addRoute(api, {
    method: 'get',
    path: '/api/health',
    tags: ['System'],
    summary: 'Health (no token)',
    auth: false,
    responses: {
      200: {
        description:
          'Start-up is done (every listener bound, the first account and its admin made), and storage answers and takes writes.',
        schema: z.object({ success: z.literal(true), status: z.literal('ok') }),
      },
      503: {
        description:
          'Start-up is not done yet (`status: "starting"`: the API listens before the tracker listeners, the gateway processes and the first account; every other endpoint answers 503 `STARTING` meanwhile, so a client waiting for 200 then gets a token at once). Storage does not answer (`status: "unavailable"`), or answers reads but refuses writes (`status: "degraded"`, code `STORAGE_UNAVAILABLE`: a full disk, a read-only file system; trackers get no acknowledgement meanwhile; `reason` and `error` say why, e.g. "Storage refuses writes: database or disk is full"), or still takes writes but free space where the database lives is below TRACKGATE_DISK_ERROR (`status: "degraded"`, code `STORAGE_LOW`; `reason` names the space left and the days of ingest it holds at the current rate; checked every TRACKGATE_DISK_CHECK_INTERVAL seconds, docs/operations.md "Sizing the disk"). Said from the last write of locations within 60 s (it clears with the next write that succeeds, or 60 s after the last that failed), from a write tried at start and every 5 s after while refused (it clears with the first that succeeds), and from the SQLite database file deleted or replaced while trackgate runs (every write is refused then, until a restart).',
      },
    },
    handler: async (ctx) => {
      if (deps.starting?.()) {
        ctx.set('Retry-After', '1');
        return { status: 503, body: { success: false, status: 'starting', error: STARTING_MESSAGE, code: 'STARTING' } };
      }
      try {
        await deps.ping();
      } catch {
        ctx.set('Retry-After', '5');
        return {
          status: 503,
          body: {
            success: false,
            status: 'unavailable',
            error: 'Storage does not answer.',
            code: 'STORAGE_UNAVAILABLE',
          },
        };
      }
      const failing = deps.writesFailing?.();
      if (failing) {
        ctx.set('Retry-After', '5');
        const reason = `Storage refuses writes: ${failing}`;
        return {
          status: 503,
          body: { success: false, status: 'degraded', reason, error: reason, code: 'STORAGE_UNAVAILABLE' },
        };
      }
      const low = deps.storageLow?.();
      if (low) {
        // no Retry-After: free space comes back when someone frees it
        const code: ErrorCode = 'STORAGE_LOW';
        return { status: 503, body: { success: false, status: 'degraded', reason: low, error: low, code } };
      }
      return { body: { success: true, status: 'ok' } };
    },
  });
}

/** GET /metrics (no token): the Prometheus text format; the docs/operations.md "Metrics" lists the names. */
export function metricsRoute(api: RouteTable, scrape: () => Promise<{ contentType: string; text: string }>): void {
  api.registry.registerPath({
    method: 'get',
    path: '/metrics',
    tags: ['System'],
    summary: 'ext: metrics in the Prometheus text format (no token)',
    description:
      "Prometheus exposition format 0.0.4 (`text/plain; version=0.0.4`). Every name starts with `trackgate_`: tracker connections and frames (decoded, malformed, unknown) per protocol, seconds from a frame's arrival to its acknowledgement, positions stored per protocol, rows per group-commit transaction, MQTT clients and publishes, REST requests by route pattern, method and status with their durations, the notification outbox backlog, and the process (CPU, memory, event loop, GC). `TRACKGATE_METRICS=off` removes this endpoint (404).",
    security: [],
    responses: {
      200: { description: 'The metrics.', content: { 'text/plain; version=0.0.4': { schema: z.string() } } },
    },
  });
  api.router.get('/metrics', async (ctx) => {
    const { contentType, text } = await scrape();
    ctx.set('Content-Type', contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = text;
  });
}

const accountResponse = z
  .object({
    success: z.literal(true),
    account: z.object({
      id: z.string(),
      name: z.string(),
      timeZone: z
        .string()
        .openapi({ description: "IANA zone; the day of the devices' daily limits starts at midnight here." }),
      licenses: z.object({ total: z.number().int(), used: z.number().int(), free: z.number().int() }),
    }),
    ...usageFields,
  })
  .openapi('AccountResponse');

const unknownResponse = z
  .object({
    success: z.literal(true),
    unknownDevices: z.array(
      z.object({
        identifier: z.string(),
        protocol: z.string(),
        reason: z.enum(['unknown', 'expired']),
        remoteAddress: z.string().nullable(),
        firstSeen: z.string(),
        lastSeen: z.string(),
        attempts: z.number().int(),
      }),
    ),
    ...usageFields,
  })
  .openapi('UnknownDevicesResponse');

export function accountRoutes(
  api: RouteTable,
  accounts: AccountsService,
  unknownDevices: (limit: number, scope: SightingScope) => Promise<UnknownDevice[]>,
  onTimeZoneChanged?: (accountId: string) => void,
): void {
  addRoute(api, {
    method: 'get',
    path: '/api/unknownDevices',
    tags: ['Account'],
    summary: "ext: the account's expired devices whose trackers tried to connect (admin)",
    description:
      "Most recent first, at most 500: identifier, protocol, why it was refused, remote address, first and last seen, attempts. Only the caller's account's devices (its group's, for a group-restricted admin) are listed; identifiers that match no device belong to no account and are shown to the operator only.",
    query: z.object({ limit: z.coerce.number().int().min(1).max(500).optional() }),
    responses: {
      200: { description: 'Recent unknown identifiers.', schema: unknownResponse },
      403: { description: 'Not an admin.' },
    },
    handler: async (_ctx, { principal, query }) => {
      requirePrivilege(principal, 'admin');
      return {
        body: {
          success: true,
          unknownDevices: await unknownDevices(query.limit ?? 100, {
            accountId: principal.accountId,
            groupId: principal.groupId,
          }),
        },
      };
    },
  });

  addRoute(api, {
    method: 'get',
    path: '/api/account',
    tags: ['Account'],
    summary: "ext: the caller's account: licences total, used and free",
    description: 'A device uses a licence while it is not expired; the count is right at any instant.',
    responses: { 200: { description: 'The account.', schema: accountResponse } },
    handler: async (_ctx, { principal }) => ({
      body: { success: true, account: await accounts.get(principal.accountId) },
    }),
  });
  addRoute(api, {
    method: 'put',
    path: '/api/account',
    tags: ['Account'],
    summary: "ext: set the account's time zone (admin)",
    description: 'Daily e-mail and SMS counters start again at midnight in this zone (DST included).',
    body: z.object({ timeZone: z.string().min(1).max(64) }).openapi('AccountUpdate'),
    responses: { 200: { description: 'The account.', schema: accountResponse } },
    handler: async (_ctx, { principal, body }) => {
      requirePrivilege(principal, 'admin');
      await accounts.setTimeZone(principal.accountId, body.timeZone);
      onTimeZoneChanged?.(principal.accountId);
      return { body: { success: true, account: await accounts.get(principal.accountId) } };
    },
  });
}
