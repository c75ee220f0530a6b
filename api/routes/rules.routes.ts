import { addRoute, validationError } from '../route.js';
import type { RouteTable } from '../route.js';
import type { z } from '../schemas/zod.js';
import { okSchema } from '../schemas/common.schemas.js';
import { jsonPatchSchema } from '../schemas/groups-users.schemas.js';
import { applyJsonPatch, type PatchOp } from '../patch.js';
import {
  alertRuleInputSchema,
  alertRuleResponse,
  alertRulesResponse,
  zoneInputSchema,
  zoneResponse,
  zonesResponse,
} from '../schemas/rules.schemas.js';
import { presentZone, type ZonesService } from '../../core/rules/zones.service.js';
import {
  describeRuleParams,
  MAX_RULES_PER_ACCOUNT,
  MAX_RULES_PER_DEVICE,
  presentAlertRule,
  type AlertRulesService,
} from '../../core/rules/alert-rules.service.js';

const READ_ONLY = ['id'];

/** The resource as GET shows it, patched, then validated like PUT. */
function patched<S extends z.ZodType>(
  schema: S,
  current: Record<string, unknown>,
  ops: PatchOp[],
  maxPlacedBytes: number,
): z.infer<S> {
  const r = schema.safeParse(applyJsonPatch(current, ops, READ_ONLY, maxPlacedBytes));
  if (!r.success) throw validationError(r.error, 'body');
  return r.data;
}

const ADMIN =
  'Needs `admin`, and a user not restricted to a group (zones and rules belong to the whole account): 403 otherwise.';

const ZONE_RULES =
  'A `circle` has `center` {latitude -90..90, longitude -180..180} and `radius` in metres (1 to 1,000,000); a point on the circle is inside. ' +
  'A `polygon` has `polygon`: a closed ring of [longitude, latitude] pairs (GeoJSON order), 4 to 10,000 points with the last repeating the first (an open ring is refused, not closed for you), no point repeating the one before, no edge crossing or touching another; a point on an edge is inside. ' +
  "Each type refuses the other's fields. A polygon is read in the plane of longitude and latitude: rings across the antimeridian or around a pole are not supported (split the zone); circles work everywhere. " +
  '400 VALIDATION_FAILED names the field (`radius`, `center.latitude`, `polygon[3][1]`, `polygon`).';

const RULE_LIMITS =
  `An account has at most ${MAX_RULES_PER_ACCOUNT} rules, and at most ${MAX_RULES_PER_DEVICE} enabled rules watch one device (listed in \`devices\` or a member of \`group\`, counted when a rule is stored): ` +
  'beyond, 409 RULE_LIMIT_REACHED with the limit in `details.limit` (and the device in `details.device`, the field that names it in `details.field`).';
const LIMIT_REACHED = {
  description: `RULE_LIMIT_REACHED: the account has ${MAX_RULES_PER_ACCOUNT} rules already, or a device the rule would watch is watched by ${MAX_RULES_PER_DEVICE} enabled rules.`,
};

const RULE_RULES =
  "A rule watches `devices` (ids of the account's devices), a `group` (one of the account's groups) or both; an unknown id is 400 naming `devices[i]` or `group`. " +
  '`enabled` defaults to true; `minDurationSeconds` 0 (default) to 86,400; `schedule` {days: ISO weekdays 1..7, at least one; from, to: "HH:MM" in the account\'s time zone, default "00:00"; `to` before `from` spans midnight, equal is the whole day}, absent: always; ' +
  '`notify` {email (default true), sms (default false)}: both false stores the alert and shows it live only; `command` {command, format Text (default) | Hex | Base64, delaySeconds 0 (default) to 86,400}. ' +
  "A device deleted leaves the rules' `devices` lists; a group a rule watches cannot be deleted (409 GROUP_IN_USE), nor a zone a rule uses (409 ZONE_IN_USE). " +
  `${RULE_LIMITS}\n\n` +
  '`params` by `alertName` (a param the name does not take is refused; defaults are stored and shown):\n' +
  describeRuleParams();

export function ruleRoutes(api: RouteTable, zones: ZonesService, alertRules: AlertRulesService): void {
  zoneRoutes(api, zones);
  alertRuleRoutes(api, alertRules);
}

function zoneRoutes(api: RouteTable, zones: ZonesService): void {
  zoneCollectionRoutes(api, zones);
  zoneItemRoutes(api, zones);
}

/** `/api/zones`: list and create. */
function zoneCollectionRoutes(api: RouteTable, zones: ZonesService): void {
  const tags = ['Zones'];
  addRoute(api, {
    method: 'get',
    path: '/api/zones',
    tags,
    summary: "ext: the account's zones",
    description: ADMIN,
    responses: {
      200: { description: 'Zones, oldest first.', schema: zonesResponse },
      403: { description: 'Not an admin of the whole account.' },
    },
    handler: async (_ctx, { principal }) => ({
      body: { success: true, zones: (await zones.list(principal)).map(presentZone) },
    }),
  });
  addRoute(api, {
    method: 'post',
    path: '/api/zones',
    tags,
    summary: 'ext: create a zone',
    description: `${ADMIN}\n\n${ZONE_RULES}`,
    body: zoneInputSchema,
    responses: {
      201: { description: 'Created.', schema: zoneResponse },
      403: { description: 'Not an admin of the whole account.' },
    },
    handler: async (_ctx, { principal, body }) => ({
      status: 201,
      body: { success: true, zone: presentZone(await zones.create(principal, body)) },
    }),
  });
}

/** One zone: get, replace, patch, delete. */
function zoneItemRoutes(api: RouteTable, zones: ZonesService): void {
  const tags = ['Zones'];
  addRoute(api, {
    method: 'get',
    path: '/api/zones/{zoneId}',
    tags,
    summary: 'ext: get a zone',
    description: ADMIN,
    responses: {
      200: { description: 'The zone.', schema: zoneResponse },
      404: { description: 'ZONE_NOT_FOUND: no such zone in your account.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, zone: presentZone(await zones.get(principal, params.zoneId)) },
    }),
  });
  addRoute(api, {
    method: 'put',
    path: '/api/zones/{zoneId}',
    tags,
    summary: 'ext: replace a zone',
    description: `${ADMIN}\n\n${ZONE_RULES}`,
    body: zoneInputSchema,
    responses: { 200: { description: 'Updated.', schema: zoneResponse }, 404: { description: 'ZONE_NOT_FOUND.' } },
    handler: async (_ctx, { principal, params, body }) => ({
      body: { success: true, zone: presentZone(await zones.update(principal, params.zoneId, body)) },
    }),
  });
  addRoute(api, {
    method: 'patch',
    path: '/api/zones/{zoneId}',
    tags,
    summary: 'ext: change a zone with JSON Patch',
    description: `${ADMIN} The patch applies to the zone as GET shows it; the result is checked as PUT checks it (\`id\` is read-only).`,
    body: jsonPatchSchema,
    responses: {
      200: { description: 'Updated.', schema: zoneResponse },
      404: { description: 'ZONE_NOT_FOUND.' },
      409: { description: 'A test op failed.' },
    },
    handler: async (_ctx, { principal, params, body }) => {
      const current = presentZone(await zones.get(principal, params.zoneId));
      const input = patched(zoneInputSchema, current, body, api.bodyLimitBytes);
      return { body: { success: true, zone: presentZone(await zones.update(principal, params.zoneId, input)) } };
    },
  });
  addRoute(api, {
    method: 'delete',
    path: '/api/zones/{zoneId}',
    tags,
    summary: 'ext: delete a zone',
    description: `${ADMIN} A zone an alert rule uses is not deleted: 409 ZONE_IN_USE names the rules (\`details.rules\`).`,
    responses: {
      200: { description: 'Deleted.', schema: okSchema },
      404: { description: 'ZONE_NOT_FOUND.' },
      409: { description: 'ZONE_IN_USE.' },
    },
    handler: async (_ctx, { principal, params }) => {
      await zones.remove(principal, params.zoneId);
      return { body: { success: true } };
    },
  });
}

function alertRuleRoutes(api: RouteTable, alertRules: AlertRulesService): void {
  alertRuleCollectionRoutes(api, alertRules);
  alertRuleItemRoutes(api, alertRules);
}

/** `/api/alertRules`: list and create. */
function alertRuleCollectionRoutes(api: RouteTable, alertRules: AlertRulesService): void {
  const tags = ['Alert rules'];
  addRoute(api, {
    method: 'get',
    path: '/api/alertRules',
    tags,
    summary: "ext: the account's alert rules",
    description: ADMIN,
    responses: {
      200: { description: 'Rules, oldest first.', schema: alertRulesResponse },
      403: { description: 'Not an admin of the whole account.' },
    },
    handler: async (_ctx, { principal }) => ({
      body: { success: true, alertRules: (await alertRules.list(principal)).map(presentAlertRule) },
    }),
  });
  addRoute(api, {
    method: 'post',
    path: '/api/alertRules',
    tags,
    summary: 'ext: create an alert rule',
    description: `${ADMIN}\n\n${RULE_RULES}`,
    body: alertRuleInputSchema,
    responses: {
      201: { description: 'Created.', schema: alertRuleResponse },
      403: { description: 'Not an admin of the whole account.' },
      409: LIMIT_REACHED,
    },
    handler: async (_ctx, { principal, body }) => ({
      status: 201,
      body: { success: true, alertRule: presentAlertRule(await alertRules.create(principal, body)) },
    }),
  });
}

/** One alert rule: get, replace, patch, delete. */
function alertRuleItemRoutes(api: RouteTable, alertRules: AlertRulesService): void {
  const tags = ['Alert rules'];
  addRoute(api, {
    method: 'get',
    path: '/api/alertRules/{ruleId}',
    tags,
    summary: 'ext: get an alert rule',
    description: ADMIN,
    responses: {
      200: { description: 'The rule.', schema: alertRuleResponse },
      404: { description: 'RULE_NOT_FOUND: no such rule in your account.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, alertRule: presentAlertRule(await alertRules.get(principal, params.ruleId)) },
    }),
  });
  addRoute(api, {
    method: 'put',
    path: '/api/alertRules/{ruleId}',
    tags,
    summary: 'ext: replace an alert rule',
    description: `${ADMIN} Fields left out take their defaults.\n\n${RULE_RULES}`,
    body: alertRuleInputSchema,
    responses: {
      200: { description: 'Updated.', schema: alertRuleResponse },
      404: { description: 'RULE_NOT_FOUND.' },
      409: LIMIT_REACHED,
    },
    handler: async (_ctx, { principal, params, body }) => ({
      body: { success: true, alertRule: presentAlertRule(await alertRules.update(principal, params.ruleId, body)) },
    }),
  });
  addRoute(api, {
    method: 'patch',
    path: '/api/alertRules/{ruleId}',
    tags,
    summary: 'ext: change an alert rule with JSON Patch',
    description: `${ADMIN} The patch applies to the rule as GET shows it; the result is checked as PUT checks it (\`id\` is read-only). Fields GET leaves out (no devices, group, schedule or command) are added with \`add\`.`,
    body: jsonPatchSchema,
    responses: {
      200: { description: 'Updated.', schema: alertRuleResponse },
      404: { description: 'RULE_NOT_FOUND.' },
      409: { description: `A test op failed, or ${LIMIT_REACHED.description}` },
    },
    handler: async (_ctx, { principal, params, body }) => {
      const current = presentAlertRule(await alertRules.get(principal, params.ruleId));
      const input = patched(alertRuleInputSchema, current, body, api.bodyLimitBytes);
      return {
        body: { success: true, alertRule: presentAlertRule(await alertRules.update(principal, params.ruleId, input)) },
      };
    },
  });
  addRoute(api, {
    method: 'delete',
    path: '/api/alertRules/{ruleId}',
    tags,
    summary: 'ext: delete an alert rule',
    description: ADMIN,
    responses: { 200: { description: 'Deleted.', schema: okSchema }, 404: { description: 'RULE_NOT_FOUND.' } },
    handler: async (_ctx, { principal, params }) => {
      await alertRules.remove(principal, params.ruleId);
      return { body: { success: true } };
    },
  });
}
