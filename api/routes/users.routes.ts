import { addRoute, validationError } from '../route.js';
import type { RouteTable } from '../route.js';
import { okSchema } from '../schemas/common.schemas.js';
import { applyJsonPatch } from '../patch.js';
import {
  countriesResponse,
  jsonPatchSchema,
  timeZonesResponse,
  userInputSchema,
  userResponse,
  usersResponse,
} from '../schemas/groups-users.schemas.js';
import type { UsersService } from '../../core/users/users.service.js';
import type { Clock } from '../../core/clock.js';
import { countryList, timeZoneList } from '../../core/reference/reference-data.js';

const READ_ONLY = ['id', 'creation', 'modification', 'lastLogin'];

export function userRoutes(api: RouteTable, users: UsersService, clock: Clock): void {
  userReferenceRoutes(api, clock);
  userCollectionRoutes(api, users);
  userItemRoutes(api, users);
}

/** Reference lists: countries and time zones. */
function userReferenceRoutes(api: RouteTable, clock: Clock): void {
  const tags = ['Users'];
  addRoute(api, {
    method: 'get',
    path: '/api/users/countries',
    tags,
    summary: 'Countries (ISO 3166-1 alpha-2 → English name)',
    responses: { 200: { description: 'Countries.', schema: countriesResponse } },
    handler: async () => ({ body: { success: true, countries: countryList() } }),
  });
  addRoute(api, {
    method: 'get',
    path: '/api/users/timeZones',
    tags,
    summary: 'Time zones (IANA id → label with its current UTC offset)',
    responses: { 200: { description: 'Time zones.', schema: timeZonesResponse } },
    handler: async () => ({ body: { success: true, timeZones: timeZoneList(clock.now()) } }),
  });
}

/** `/api/users`: list and create. */
function userCollectionRoutes(api: RouteTable, users: UsersService): void {
  const tags = ['Users'];
  addRoute(api, {
    method: 'get',
    path: '/api/users',
    tags,
    summary: 'List users',
    description: 'Admins see every user of the account; others see themselves.',
    responses: { 200: { description: 'Users.', schema: usersResponse } },
    handler: async (_ctx, { principal }) => ({ body: { success: true, users: await users.list(principal) } }),
  });
  addRoute(api, {
    method: 'post',
    path: '/api/users',
    tags,
    summary: 'Create a user (admin)',
    description: 'Returns the user flattened with its `apiKey`, shown this once.',
    body: userInputSchema,
    responses: { 201: { description: 'Created.', schema: userResponse }, 409: { description: 'userName taken.' } },
    handler: async (_ctx, { principal, body }) => {
      const created = await users.create(principal, body);
      return { status: 201, body: { success: true, ...created.user, apiKey: created.apiKey } };
    },
  });
}

/** One user: get, replace, patch, delete, new API key. */
function userItemRoutes(api: RouteTable, users: UsersService): void {
  const tags = ['Users'];
  addRoute(api, {
    method: 'get',
    path: '/api/users/{userId}',
    tags,
    summary: 'Get a user',
    responses: {
      200: { description: 'The user, flattened.', schema: userResponse },
      404: { description: 'No such user.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, ...(await users.get(principal, params.userId)) },
    }),
  });
  addRoute(api, {
    method: 'put',
    path: '/api/users/{userId}',
    tags,
    summary: 'Replace a user (admin)',
    body: userInputSchema,
    responses: { 200: { description: 'Updated.', schema: userResponse }, 404: { description: 'No such user.' } },
    handler: async (_ctx, { principal, params, body }) => ({
      body: { success: true, ...(await users.update(principal, params.userId, body)) },
    }),
  });
  addRoute(api, {
    method: 'patch',
    path: '/api/users/{userId}',
    tags,
    summary: 'Change a user with JSON Patch (admin)',
    body: jsonPatchSchema,
    responses: {
      200: { description: 'Updated.', schema: userResponse },
      404: { description: 'No such user.' },
      409: { description: 'A test op failed.' },
    },
    handler: async (_ctx, { principal, params, body }) => {
      const current = await users.get(principal, params.userId);
      const patched = userInputSchema.safeParse(applyJsonPatch(current, body, READ_ONLY, api.bodyLimitBytes));
      if (!patched.success) throw validationError(patched.error, 'body');
      return { body: { success: true, ...(await users.update(principal, params.userId, patched.data)) } };
    },
  });
  addRoute(api, {
    method: 'delete',
    path: '/api/users/{userId}',
    tags,
    summary: 'Delete a user (admin)',
    responses: { 200: { description: 'Deleted.', schema: okSchema }, 404: { description: 'No such user.' } },
    handler: async (_ctx, { principal, params }) => {
      await users.remove(principal, params.userId);
      return { body: { success: true } };
    },
  });
  addRoute(api, {
    method: 'post',
    path: '/api/users/{userId}/apiKey',
    tags,
    summary: 'ext: issue a new API key',
    description:
      'Admins for any user of the account, anyone for themselves. The old key and every token made with it stop working at once.',
    responses: {
      200: { description: 'The user with its new `apiKey`.', schema: userResponse },
      404: { description: 'No such user.' },
    },
    handler: async (_ctx, { principal, params }) => {
      const r = await users.newApiKey(principal, params.userId);
      return { body: { success: true, ...r.user, apiKey: r.apiKey } };
    },
  });
}
