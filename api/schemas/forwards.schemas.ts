/**
 * Forwards (docs/contract.md "Forwards", *ext*). These schemas check the shape; URL schemes per type,
 * templates, the group and write-only credentials are checked by core/forward/forwards.service.ts.
 */
import { z } from './zod.js';
import { usageFields } from './common.schemas.js';

const TYPES = ['webhook', 'mqtt', 'amqp'] as const;
const EVENTS = ['locations', 'alerts'] as const;

export const forwardInputSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    type: z.enum(TYPES).openapi({
      description: '`webhook` (http:// or https:// URL), `mqtt` (mqtt:// or mqtts://) or `amqp` (amqp:// or amqps://).',
    }),
    url: z
      .string()
      .min(1)
      .max(2000)
      .openapi({
        description:
          "Where to deliver: a URL of the type's scheme with a server (host name or address; `mqtt://` alone is refused) and a port, when given, of 1 to 65535 (400 VALIDATION_FAILED naming `url` otherwise). Credentials in it (`amqp://user:pass@host:5672/vhost`) are write-only: read back with the password as `***`; giving `***` back keeps the stored password (same scheme, server and user name only). " +
          "Where forwards may connect is the operator's (TRACKGATE_FORWARD_ALLOW): by default loopback, unspecified, link-local, private (10/8, 172.16/12, 192.168/16, fc00::/7), carrier-grade NAT (100.64/10) and multicast addresses are refused in any spelling (`2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`), and so are this service's own ports on any address of its machine: 400 VALIDATION_FAILED naming `url` and the setting. A host name is resolved and each address it gives checked, here and again at every connect (a name that comes to resolve to such an address fails its delivery, saying so in `status.lastError`).",
        example: 'https://erp.example.com/trackgate',
      }),
    events: z
      .array(z.enum(EVENTS))
      .max(2)
      .nullable()
      .optional()
      .openapi({ description: 'What to deliver: `locations`, `alerts` or both (default both).' }),
    group: z.string().min(1).max(64).nullable().optional().openapi({
      description:
        'Only the devices of this group of the account (its members when each message is sent); absent: every device of the account.',
    }),
    enabled: z.boolean().nullable().optional().openapi({
      description:
        'Default true. A disabled forward keeps no backlog: enabled again, it starts with what is stored from then on.',
    }),
    topic: z.string().nullable().optional().openapi({
      description:
        'mqtt: the topic template (default `trackgate/{deviceId}/{event}`); amqp: the routing-key template (default `trackgate.{deviceId}.{event}`). `{deviceId}` and `{event}` (location | alert) are replaced. At most 500 characters; for amqp, an AMQP routing key holds at most 255 bytes: the template with `{deviceId}` as a device id of 64 characters and `{event}` as `location` must fit in 255 bytes of UTF-8 (400 VALIDATION_FAILED naming `topic` otherwise). A webhook has none.',
    }),
    exchange: z.string().nullable().optional().openapi({
      description:
        'amqp only, at most 255 bytes of UTF-8: the exchange (default `amq.topic`; `""` is the default exchange, where the routing key names a queue). It must exist: trackgate does not declare it.',
    }),
    secret: z.string().nullable().optional().openapi({
      description:
        'webhook only, 16 to 500 characters: signs each request (`X-Trackgate-Signature: sha256=<hex HMAC-SHA256 of the body>`). Write-only: read back as `***`; `***` given back keeps it.',
    }),
  })
  .openapi('ForwardInput');

export const forwardSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(TYPES),
    url: z.string().openapi({ description: 'With its password shown as `***`.' }),
    events: z.array(z.enum(EVENTS)),
    group: z.string().optional(),
    enabled: z.boolean(),
    topic: z.string().optional(),
    exchange: z.string().optional(),
    secret: z.literal('***').optional().openapi({ description: 'Present when a secret is set.' }),
    status: z
      .object({
        pending: z.number().int().openapi({ description: 'Messages stored and not yet delivered (0 while disabled).' }),
        lastDeliveredAt: z.string().nullable().openapi({ description: 'When the target last took a batch.' }),
        lastError: z.string().nullable().openapi({
          description:
            'Why the last attempt failed, while it fails; null once delivery works. A status the target answered is shown as its code and standard name, never its body. For a forward stored with settings the API refuses (before a check existed, or written in the database directly), why it is not delivered at all, naming the field, until a PUT or PATCH corrects it.',
        }),
        dropped: z.number().int().openapi({
          description:
            'Messages retention dropped before the target took them (TRACKGATE_FORWARD_RETENTION_DAYS, TRACKGATE_FORWARD_MAX_PENDING).',
        }),
      })
      .openapi('ForwardStatus'),
  })
  .openapi('Forward');
export const forwardsResponse = z
  .object({ success: z.literal(true), forwards: z.array(forwardSchema), ...usageFields })
  .openapi('ForwardsResponse');
export const forwardResponse = z
  .object({ success: z.literal(true), forward: forwardSchema, ...usageFields })
  .openapi('ForwardResponse');
