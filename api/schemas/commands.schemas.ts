import { z } from './zod.js';
import { usageFields } from './common.schemas.js';

export const sendCommandSchema = z
  .object({
    command: z.string().min(1).max(4096).openapi({
      description:
        'The command: text for `Text` (e.g. `getinfo`), the bytes for `Hex` (spaces and hyphens allowed) or `Base64`.',
    }),
    format: z.enum(['Text', 'Hex', 'Base64']).optional().openapi({
      description:
        "`Text` (default) is wrapped in the device protocol's own command framing; `Hex`/`Base64` bytes are written to the connection as they are.",
    }),
    sms: z.boolean().optional().openapi({
      description: "Send the text by SMS to the device's `min` through TRACKGATE_SMS_URL (default false).",
    }),
    ttl: z.number().int().min(1).max(2_592_000).optional().openapi({
      description:
        'ext: seconds the command may wait for an offline device (default 86400, at most 2592000); then it expires.',
    }),
  })
  .openapi('SendCommand');

export const commandSchema = z
  .object({
    id: z.number().int(),
    status: z.enum(['queued', 'sent', 'answered', 'expired', 'failed', 'cancelled']),
    command: z.string(),
    format: z.enum(['Text', 'Hex', 'Base64']),
    sms: z.boolean(),
    created: z.string(),
    sent: z.string().nullable(),
    answered: z.string().nullable(),
    expires: z.string().openapi({ description: 'When a command still queued expires.' }),
    attempts: z.number().int().openapi({
      description: 'Deliveries so far (a device that dropped before answering gets it again, at most 3 times).',
    }),
    result: z.string().nullable().openapi({ description: "The device's answer, or why the command failed." }),
  })
  .openapi('Command');

export const sendCommandResponse = z
  .object({
    success: z.literal(true),
    result: z.string().openapi({
      description:
        "The device's reply; or that none came within TRACKGATE_COMMAND_WAIT seconds; or that the command is queued.",
    }),
    command: commandSchema,
    ...usageFields,
  })
  .openapi('SendCommandResponse');

export const commandsResponse = z
  .object({ success: z.literal(true), commands: z.array(commandSchema), ...usageFields })
  .openapi('CommandsResponse');
export const commandResponse = z
  .object({ success: z.literal(true), command: commandSchema, ...usageFields })
  .openapi('CommandResponse');

export const deviceLogItemSchema = z
  .object({
    id: z.number().int(),
    dateTime: z.string().openapi({ description: 'When trackgate received it.' }),
    type: z.enum(['unsolicitedReply']).openapi({
      description:
        '`unsolicitedReply`: a reply to a command that matches no command sent to the device (sent before a restart, by another system, or by SMS).',
    }),
    protocol: z.string(),
    text: z.string().openapi({ description: "The reply's text." }),
    status: z.string().optional().openapi({
      description:
        'What the reply says it did, when it says (JT808 general response: ok, failed, badMessage, unsupported).',
    }),
  })
  .openapi('DeviceLogEntry');

export const deviceLogResponse = z
  .object({ success: z.literal(true), log: z.array(deviceLogItemSchema), ...usageFields })
  .openapi('DeviceLogResponse');
