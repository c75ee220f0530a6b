import { addRoute, validationError } from '../route.js';
import type { RouteTable } from '../route.js';
import { okSchema } from '../schemas/common.schemas.js';
import { jsonPatchSchema } from '../schemas/groups-users.schemas.js';
import { applyJsonPatch } from '../patch.js';
import { forwardInputSchema, forwardResponse, forwardsResponse } from '../schemas/forwards.schemas.js';
import { presentForward, type ForwardsService } from '../../core/forward/forwards.service.js';
import { FORWARD_BATCH_SIZE, FORWARD_WEBHOOK_DELAY_MS } from '../../core/forward/forward.runner.js';
import { WEBHOOK_MAX_MESSAGES } from '../../core/forward/forwarder.webhook.js';

const ADMIN =
  "Needs `admin`, and a user not restricted to a group (a forward carries the whole account's data): 403 otherwise.";

const TARGET_400 =
  'VALIDATION_FAILED names the field; for `url` also a server forwards may not reach: a loopback, link-local, private or other special-purpose address (or a host name resolving to one) that TRACKGATE_FORWARD_ALLOW does not name, or a port of this service on its own machine.';

const DELIVERY =
  'Every location and alert the account stores (from trackers, MQTT or REST; corrections of a stored location too, identical resends not), after it is committed, as `{id, event: "location" | "alert", deviceId, location | alert}` in the REST shapes. ' +
  '`id` is stable: delivery is at least once, in order per device, so a receiver drops a repeat by its id. ' +
  `A \`webhook\` gets \`POST\` JSON arrays of up to ${WEBHOOK_MAX_MESSAGES} messages and at most 1 MiB of body (bytes of UTF-8, the Content-Length; a single larger message goes alone), with \`User-Agent: trackgate/<version>\`, \`X-Trackgate-Forward: <forward id>\` and, with a \`secret\`, \`X-Trackgate-Signature: sha256=<hex HMAC-SHA256 of the body>\`; any 2xx accepts the batch. ` +
  `A webhook's batch goes once ${FORWARD_BATCH_SIZE.toLocaleString('en-US')} messages wait (the most a forward reads at a time; its POSTs go one after the other) or ${FORWARD_WEBHOOK_DELAY_MS} ms after the first of them was stored. ` +
  '`mqtt` publishes each message at QoS 1 to the topic template; a message is delivered on PUBACK. `amqp` publishes persistent messages on a confirm channel to `exchange` with the routing-key template; delivered on confirm. ' +
  'Anything else (an error status, no connection or answer within TRACKGATE_FORWARD_TIMEOUT_MS, an address refused at the connect) is tried again with a backoff from 0.5 s doubling to 60 s, while messages wait in the database; `status.lastError` says why (a status as its code and standard name, never the body). ' +
  'A forward stored with settings the API refuses (before a check existed, or written in the database directly) is not delivered at all: `status.lastError` names the field and the problem, its messages wait, and a `PUT` or `PATCH` that corrects it delivers them. ' +
  'Undelivered messages older than TRACKGATE_FORWARD_RETENTION_DAYS (default 7) or beyond the newest TRACKGATE_FORWARD_MAX_PENDING (default 1,000,000) of the account are dropped, logged and counted in `status.dropped`. ' +
  'A new forward starts with what is stored from then on.';

export function forwardRoutes(api: RouteTable, forwards: ForwardsService): void {
  forwardCollectionRoutes(api, forwards);
  forwardItemRoutes(api, forwards);
}

/** `/api/forwards`: list and create. */
function forwardCollectionRoutes(api: RouteTable, forwards: ForwardsService): void {
  const tags = ['Forwards'];
  addRoute(api, {
    method: 'get',
    path: '/api/forwards',
    tags,
    summary: "ext: the account's forwards",
    description: ADMIN,
    responses: {
      200: { description: 'Forwards, oldest first, with their status.', schema: forwardsResponse },
      403: { description: 'Not an admin of the whole account.' },
    },
    handler: async (_ctx, { principal }) => ({
      body: { success: true, forwards: (await forwards.list(principal)).map(presentForward) },
    }),
  });
  addRoute(api, {
    method: 'post',
    path: '/api/forwards',
    tags,
    summary: 'ext: create a forward',
    description: `${ADMIN}\n\n${DELIVERY}`,
    body: forwardInputSchema,
    responses: {
      201: { description: 'Created.', schema: forwardResponse },
      400: { description: TARGET_400 },
      403: { description: 'Not an admin of the whole account.' },
    },
    handler: async (_ctx, { principal, body }) => ({
      status: 201,
      body: { success: true, forward: presentForward(await forwards.create(principal, body)) },
    }),
  });
}

/** One forward: get, replace, patch, delete. */
function forwardItemRoutes(api: RouteTable, forwards: ForwardsService): void {
  const tags = ['Forwards'];
  addRoute(api, {
    method: 'get',
    path: '/api/forwards/{forwardId}',
    tags,
    summary: 'ext: get a forward and its status',
    description: ADMIN,
    responses: {
      200: { description: 'The forward.', schema: forwardResponse },
      404: { description: 'FORWARD_NOT_FOUND: no such forward in your account.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, forward: presentForward(await forwards.get(principal, params.forwardId)) },
    }),
  });
  addRoute(api, {
    method: 'put',
    path: '/api/forwards/{forwardId}',
    tags,
    summary: 'ext: replace a forward',
    description: `${ADMIN} Fields left out take their defaults (a secret left out is removed; \`***\` keeps it).\n\n${DELIVERY}`,
    body: forwardInputSchema,
    responses: {
      200: { description: 'Updated.', schema: forwardResponse },
      400: { description: TARGET_400 },
      404: { description: 'FORWARD_NOT_FOUND.' },
    },
    handler: async (_ctx, { principal, params, body }) => ({
      body: { success: true, forward: presentForward(await forwards.update(principal, params.forwardId, body)) },
    }),
  });
  addRoute(api, {
    method: 'patch',
    path: '/api/forwards/{forwardId}',
    tags,
    summary: 'ext: change a forward with JSON Patch',
    description: `${ADMIN} The patch applies to the forward as GET shows it (credentials as \`***\`, which keeps them); the result is checked as PUT checks it (\`id\` and \`status\` are read-only).`,
    body: jsonPatchSchema,
    responses: {
      200: { description: 'Updated.', schema: forwardResponse },
      400: { description: TARGET_400 },
      404: { description: 'FORWARD_NOT_FOUND.' },
      409: { description: 'A test op failed.' },
    },
    handler: async (_ctx, { principal, params, body }) => {
      const current = presentForward(await forwards.get(principal, params.forwardId));
      const doc = applyJsonPatch(current, body, ['id', 'status'], api.bodyLimitBytes);
      const { id: _id, status: _status, ...rest } = doc;
      const r = forwardInputSchema.safeParse(rest);
      if (!r.success) throw validationError(r.error, 'body');
      return {
        body: { success: true, forward: presentForward(await forwards.update(principal, params.forwardId, r.data)) },
      };
    },
  });
  addRoute(api, {
    method: 'delete',
    path: '/api/forwards/{forwardId}',
    tags,
    summary: 'ext: delete a forward',
    description: `${ADMIN} Its undelivered messages are dropped with it.`,
    responses: { 200: { description: 'Deleted.', schema: okSchema }, 404: { description: 'FORWARD_NOT_FOUND.' } },
    handler: async (_ctx, { principal, params }) => {
      await forwards.remove(principal, params.forwardId);
      return { body: { success: true } };
    },
  });
}
