import { addRoute, validationError } from '../route.js';
import type { RouteTable } from '../route.js';
import { errorResponseSchema, okSchema } from '../schemas/common.schemas.js';
import { applyJsonPatch } from '../patch.js';
import { groupInputSchema, groupResponse, groupsResponse, jsonPatchSchema } from '../schemas/groups-users.schemas.js';
import type { GroupsService } from '../../core/groups/groups.service.js';

const READ_ONLY = ['id', 'creation', 'lastModified'];

export function groupRoutes(api: RouteTable, groups: GroupsService): void {
  groupCollectionRoutes(api, groups);
  groupItemRoutes(api, groups);
}

/** `/api/groups`: list and create. */
function groupCollectionRoutes(api: RouteTable, groups: GroupsService): void {
  const tags = ['Groups'];
  addRoute(api, {
    method: 'get',
    path: '/api/groups',
    tags,
    summary: 'List groups',
    responses: { 200: { description: 'Groups.', schema: groupsResponse } },
    handler: async (_ctx, { principal }) => ({ body: { success: true, groups: await groups.list(principal) } }),
  });
  addRoute(api, {
    method: 'post',
    path: '/api/groups',
    tags,
    summary: 'Create a group (write)',
    body: groupInputSchema,
    responses: { 201: { description: 'Created; the group is returned flattened.', schema: groupResponse } },
    handler: async (_ctx, { principal, body }) => ({
      status: 201,
      body: { success: true, ...(await groups.create(principal, body)) },
    }),
  });
}

/** One group: get, replace, patch, delete. */
function groupItemRoutes(api: RouteTable, groups: GroupsService): void {
  const tags = ['Groups'];
  addRoute(api, {
    method: 'get',
    path: '/api/groups/{groupId}',
    tags,
    summary: 'Get a group',
    responses: {
      200: { description: 'The group, flattened.', schema: groupResponse },
      404: { description: 'No such group.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, ...(await groups.get(principal, params.groupId)) },
    }),
  });
  addRoute(api, {
    method: 'put',
    path: '/api/groups/{groupId}',
    tags,
    summary: 'Replace a group (write)',
    body: groupInputSchema,
    responses: { 200: { description: 'Updated.', schema: groupResponse }, 404: { description: 'No such group.' } },
    handler: async (_ctx, { principal, params, body }) => ({
      body: { success: true, ...(await groups.update(principal, params.groupId, body)) },
    }),
  });
  addRoute(api, {
    method: 'patch',
    path: '/api/groups/{groupId}',
    tags,
    summary: 'Change a group with JSON Patch (write)',
    body: jsonPatchSchema,
    responses: {
      200: { description: 'Updated.', schema: groupResponse },
      404: { description: 'No such group.' },
      409: { description: 'A test op failed.' },
    },
    handler: async (_ctx, { principal, params, body }) => {
      const current = await groups.get(principal, params.groupId);
      const patched = groupInputSchema.safeParse(applyJsonPatch(current, body, READ_ONLY, api.bodyLimitBytes));
      if (!patched.success) throw validationError(patched.error, 'body');
      return { body: { success: true, ...(await groups.update(principal, params.groupId, patched.data)) } };
    },
  });
  addRoute(api, {
    method: 'delete',
    path: '/api/groups/{groupId}',
    tags,
    summary: 'Delete a group (write)',
    description:
      'A group in use cannot be deleted (409 `GROUP_IN_USE`): while a user is restricted to it (`details.users`, their ids; deleting it would let them see every device, so an admin gives them another group or none first), an alert rule watches it (`details.rules`) or a forward delivers it (`details.forwards`).',
    responses: {
      200: { description: 'Deleted.', schema: okSchema },
      404: { description: 'No such group.' },
      409: {
        description: 'GROUP_IN_USE: a user, an alert rule or a forward uses the group.',
        schema: errorResponseSchema,
      },
    },
    handler: async (_ctx, { principal, params }) => {
      await groups.remove(principal, params.groupId);
      return { body: { success: true } };
    },
  });
}
