import { addRoute } from '../route.js';
import type { RouteTable } from '../route.js';
import {
  commandResponse,
  commandsResponse,
  deviceLogResponse,
  sendCommandResponse,
  sendCommandSchema,
} from '../schemas/commands.schemas.js';
import type { CommandsService } from '../../core/commands/commands.service.js';
import { DomainError } from '../../core/errors.js';

export function commandRoutes(api: RouteTable, commands: CommandsService): void {
  const tags = ['Commands'];
  addRoute(api, {
    method: 'post',
    path: '/api/devices/{deviceId}/sendCommand',
    tags,
    summary: 'Send a command to a device',
    description:
      'Needs `execute` or `admin`. A connected device gets the command at once and the answer waits up to TRACKGATE_COMMAND_WAIT seconds (default 15) for its reply: `result` is the reply, or says none came in time (the command stays `sent`; a later reply is recorded with it). ' +
      "A device that is not connected gets it, in order, when it next identifies itself, until `ttl` runs out. `Text` is checked with the protocol's encoder: a text it cannot carry is a 400 naming the reason (EMPTY, DELIMITER, TOO_LONG, CHARSET, DEVICE_ID); a protocol without commands (OsmAnd, OwnTracks) is 409 COMMAND_UNSUPPORTED. An MQTT device gets `{id, command, format}` at QoS 1 on `devices/{deviceId}/commands` once it subscribes there, and answers `{id, result}` on `devices/{deviceId}/commandResults`. " +
      'A reply that answers no command is kept in the device log (`GET /api/devices/{deviceId}/log`). ' +
      "`sms: true` sends the text to the device's `min` through TRACKGATE_SMS_URL (409 SMS_UNAVAILABLE without either).",
    body: sendCommandSchema,
    responses: {
      200: { description: 'Sent, answered or queued: see `result` and `command.status`.', schema: sendCommandResponse },
      403: { description: 'The user has neither `execute` nor `admin`.' },
      404: { description: 'No such device in your account.' },
      409: { description: 'COMMAND_UNSUPPORTED, or SMS_UNAVAILABLE.' },
      502: { description: 'SMS_FAILED: the SMS gateway did not take the command.' },
    },
    handler: async (_ctx, { principal, params, body }) => {
      const { result, command } = await commands.send(principal, params.deviceId, body);
      return { body: { success: true, result, command } };
    },
  });
  addRoute(api, {
    method: 'get',
    path: '/api/devices/{deviceId}/commands',
    tags,
    summary: "ext: a device's commands, newest first",
    description: 'The latest 200 commands with their status and answers.',
    responses: {
      200: { description: 'Commands.', schema: commandsResponse },
      404: { description: 'No such device in your account.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, commands: await commands.list(principal, params.deviceId) },
    }),
  });
  addRoute(api, {
    method: 'delete',
    path: '/api/devices/{deviceId}/commands/{commandId}',
    tags,
    summary: 'ext: cancel a queued command',
    description:
      'Needs `execute` or `admin`. Only a `queued` command can be cancelled (409 COMMAND_NOT_QUEUED otherwise).',
    responses: {
      200: { description: 'Cancelled.', schema: commandResponse },
      404: { description: 'No such device or command.' },
      409: { description: 'The command is no longer queued.' },
    },
    handler: async (_ctx, { principal, params }) => {
      const id = Number(params.commandId);
      if (!Number.isSafeInteger(id) || id < 1)
        throw new DomainError(
          'COMMAND_NOT_FOUND',
          `Command ${JSON.stringify(params.commandId)} of device "${params.deviceId}" was not found.`,
        );
      return { body: { success: true, command: await commands.cancel(principal, params.deviceId, id) } };
    },
  });
  addRoute(api, {
    method: 'get',
    path: '/api/devices/{deviceId}/log',
    tags,
    summary: "ext: a device's log, newest first",
    description:
      'What the device said that belongs to no stored report and no command: today its unsolicited replies (a reply that matches no command sent to it is kept here rather than dropped). ' +
      `The latest 200 entries; the newest 500 per device are kept.`,
    responses: {
      200: { description: 'Log entries.', schema: deviceLogResponse },
      404: { description: 'No such device in your account.' },
    },
    handler: async (_ctx, { principal, params }) => ({
      body: { success: true, log: await commands.log(principal, params.deviceId) },
    }),
  });
}
