/**
 * Commands between the core's queue and the devices: checked against the device's protocol before
 * they are queued, and handed to whichever side holds the device (the device locator).
 */
import { COMMAND_UPKEEP_MS, type CommandCheck, type CommandsService } from '../core/commands/commands.service.js';
import type { CommandFormat } from '../core/model/command.js';
import type { EventBus } from '../core/events/event-bus.js';
import type { Logger } from '../core/logger.js';
import { PROTOCOL as MQTT_PROTOCOL } from '../gateway/mqtt/mqtt.auth.js';
import { getProtocol } from '../protocols/index.js';
import { CommandError } from '../protocols/types.js';
import type { DeviceLocator } from './device-locator.js';

/**
 * A command checked with the device protocol's own encoder before it is queued (core knows no
 * protocols): a protocol without `encodeCommand` carries none (OsmAnd, OwnTracks phones), and a
 * Text it cannot carry names the CommandError's reason. MQTT devices take any command: it goes in
 * JSON as it is (gateway/mqtt/mqtt.commands.ts).
 */
export function checkCommand(protocol: string, deviceId: string, format: CommandFormat, text: string): CommandCheck {
  if (protocol === MQTT_PROTOCOL) return 'ok';
  const module = getProtocol(protocol);
  if (!module?.encodeCommand) return 'unsupported';
  if (format !== 'Text') return 'ok';
  try {
    module.encodeCommand(text, { deviceId, now: new Date(0), serial: 0 });
    return 'ok';
  } catch (e) {
    if (e instanceof CommandError) return { reason: e.reason, message: e.message };
    throw e;
  }
}

/**
 * Delivers queued commands through the side that holds each device: when they are queued here,
 * when another instance queued them (relayed through Redis), and in the background upkeep. Returns
 * what stops it.
 */
export function routeCommands(o: {
  commands: CommandsService;
  events: EventBus;
  locator: DeviceLocator;
  logger: Logger;
}): () => Promise<void> {
  const deliver = (deviceId: string) => o.locator.deliverCommands(deviceId);
  o.commands.attach({ deliver });
  // a command queued on another instance (relayed through Redis) for a device connected here
  const offQueued = o.events.onCommandsQueued((deviceId, remote) => {
    if (remote) deliver(deviceId);
  });
  // Expiry in the background, and without Redis the commands queued on other instances for the
  // devices connected here: one indexed query every COMMAND_UPKEEP_MS, never two at once.
  let upkeeping = false;
  const upkeep = setInterval(() => {
    if (upkeeping) return;
    upkeeping = true;
    o.commands
      .upkeep(o.locator.connectedDevices())
      .then((ids) => ids.forEach(deliver))
      .catch((e: Error) => o.logger.warn({ err: e.message }, 'command upkeep failed; tried again shortly'))
      .finally(() => {
        upkeeping = false;
      });
  }, COMMAND_UPKEEP_MS);
  upkeep.unref();
  return async () => {
    clearInterval(upkeep);
    offQueued();
  };
}
