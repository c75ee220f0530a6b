/**
 * Zones and alert rules (docs/contract.md "Alert rules and zones", *ext*). These schemas check the
 * shape; ranges, the params each alert name takes and references to the account's zones, devices
 * and groups are checked by the services in core/rules, one place for every caller.
 */
import { z } from './zod.js';
import { usageFields } from './common.schemas.js';
import { RULE_ALERT_NAMES } from '../../core/model/alert-rule.js';
import { COMMAND_FORMATS } from '../../core/model/command.js';

const centerSchema = z.object({
  latitude: z.number().openapi({ description: '-90 to 90.' }),
  longitude: z.number().openapi({ description: '-180 to 180.' }),
});

export const zoneInputSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    type: z.enum(['circle', 'polygon']),
    center: centerSchema
      .nullable()
      .optional()
      .openapi({ description: 'circle: its centre (required); a polygon has none.' }),
    radius: z
      .number()
      .nullable()
      .optional()
      .openapi({ description: 'circle: its radius in metres, 1 to 1,000,000 (required); a polygon has none.' }),
    polygon: z
      .array(z.array(z.number()))
      .max(100_000)
      .nullable()
      .optional()
      .openapi({
        description:
          'polygon: a closed ring of [longitude, latitude] pairs (GeoJSON order): 4 to 10,000 points, the last one repeating the first (a ring that is not closed is refused, not closed for you), no point repeating the one before it, and no edge crossing or touching another. Either direction. Rings across the antimeridian or around a pole are not supported: split the zone.',
        example: [
          [-3.71, 40.41],
          [-3.69, 40.41],
          [-3.69, 40.43],
          [-3.71, 40.41],
        ],
      }),
  })
  .openapi('ZoneInput');

export const zoneSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(['circle', 'polygon']),
    center: centerSchema.optional(),
    radius: z.number().optional(),
    polygon: z.array(z.array(z.number())).optional(),
  })
  .openapi('Zone');
export const zonesResponse = z
  .object({ success: z.literal(true), zones: z.array(zoneSchema), ...usageFields })
  .openapi('ZonesResponse');
export const zoneResponse = z
  .object({ success: z.literal(true), zone: zoneSchema, ...usageFields })
  .openapi('ZoneResponse');

const paramsSchema = z
  .object({
    speed: z.number().optional().openapi({ description: 'km/h.' }),
    zone: z.string().optional().openapi({ description: "The id of one of the account's zones." }),
    minutes: z.number().optional(),
    attribute: z.string().optional(),
    value: z.union([z.string(), z.number(), z.boolean()]).optional(),
  })
  .catchall(z.unknown())
  .openapi('AlertRuleParams', {
    description:
      'What the rule compares with; which params apply depends on `alertName` (see the endpoint descriptions). A param the alert name does not take is refused.',
  });

const scheduleSchema = z
  .object({
    days: z
      .array(z.number().int())
      .max(100)
      .openapi({ description: 'ISO weekdays, 1 = Monday … 7 = Sunday; at least one.' }),
    from: z.string().optional().openapi({
      description: '"HH:MM" in the account\'s time zone, from this minute on (default "00:00").',
      example: '08:00',
    }),
    to: z.string().optional().openapi({
      description:
        '"HH:MM", until this minute (not included; default "00:00"). `to` before `from` spans midnight; `to` equal to `from` is the whole day.',
      example: '18:00',
    }),
  })
  .openapi('AlertRuleSchedule');

const notifySchema = z
  .object({
    email: z.boolean().optional().openapi({ description: "E-mail the device's alert addresses (default true)." }),
    sms: z.boolean().optional().openapi({ description: "SMS the device's alert phones (default false)." }),
  })
  .openapi('AlertRuleNotify');

const commandSchema = z
  .object({
    command: z.string().openapi({
      description: 'As for sendCommand: text for `Text`, the bytes for `Hex` or `Base64`; 1 to 4,096 characters.',
    }),
    format: z
      .enum(COMMAND_FORMATS as [string, ...string[]])
      .optional()
      .openapi({ description: 'Text (default), Hex or Base64.' }),
    delaySeconds: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'Seconds after the alert, 0 to 86,400 (default 0).' }),
  })
  .openapi('AlertRuleCommand');

export const alertRuleInputSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    alertName: z.enum(RULE_ALERT_NAMES),
    devices: z
      .array(z.string().min(1).max(64))
      .max(100_000)
      .nullable()
      .optional()
      .openapi({ description: "Ids of the account's devices the rule watches." }),
    group: z.string().min(1).max(64).nullable().optional().openapi({
      description:
        "The id of one of the account's groups whose devices the rule watches. A rule needs devices, a group or both.",
    }),
    enabled: z.boolean().optional().openapi({ description: 'Default true.' }),
    params: paramsSchema.nullable().optional(),
    minDurationSeconds: z.number().int().nullable().optional().openapi({
      description: 'The condition must hold this long before the alert is raised: 0 (default, at once) to 86,400.',
    }),
    schedule: scheduleSchema.nullable().optional().openapi({ description: 'When the rule applies; absent: always.' }),
    notify: notifySchema.nullable().optional().openapi({
      description:
        'The channels, within the device\'s daily limits; absent: {"email": true, "sms": false}. Both false: the alert is stored and shown live only.',
    }),
    command: commandSchema
      .nullable()
      .optional()
      .openapi({ description: 'Sent to the device through the commands path, `delaySeconds` after the alert.' }),
  })
  .openapi('AlertRuleInput');

export const alertRuleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    alertName: z.enum(RULE_ALERT_NAMES),
    devices: z.array(z.string()).optional(),
    group: z.string().optional(),
    enabled: z.boolean(),
    params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    minDurationSeconds: z.number().int(),
    schedule: z.object({ days: z.array(z.number().int()), from: z.string(), to: z.string() }).optional(),
    notify: z.object({ email: z.boolean(), sms: z.boolean() }),
    command: z
      .object({
        command: z.string(),
        format: z.enum(COMMAND_FORMATS as [string, ...string[]]),
        delaySeconds: z.number().int(),
      })
      .optional(),
  })
  .openapi('AlertRule');
export const alertRulesResponse = z
  .object({ success: z.literal(true), alertRules: z.array(alertRuleSchema), ...usageFields })
  .openapi('AlertRulesResponse');
export const alertRuleResponse = z
  .object({ success: z.literal(true), alertRule: alertRuleSchema, ...usageFields })
  .openapi('AlertRuleResponse');
