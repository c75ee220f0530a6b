/**
 * Commands to MQTT devices (docs/contract.md §3 "MQTT"; docs/commands.md): published at QoS 1 to
 * `devices/{deviceId}/commands`, answered on `devices/{deviceId}/commandResults`.
 * The queue is delivered as for a tracker (gateway/shared/connection-commands.ts), once a client
 * of the device has a subscription covering its commands topic, so nothing is marked sent while
 * nobody reads. Any client of the device may answer (a technician with mosquitto_pub); a command
 * may arrive twice after a reconnection, and the device tells it by its `id`.
 */
import type { Aedes, Client, PublishPacket } from 'aedes';
import type { CommandsService } from '../../core/commands/commands.service.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { CommandRecord } from '../../core/model/command.js';
import { ConnectionCommands } from '../shared/connection-commands.js';
import { commandsTopic } from './mqtt.topics.js';

/** The protocol name MQTT devices have (mqtt.auth.ts PROTOCOL). */
const PROTOCOL = 'mqtt';

/** One answer of the device, as `devices/{id}/commandResults` carries it. */
export interface MqttCommandResult {
  id: number;
  result: string;
}

export interface MqttCommandsOptions {
  broker: Aedes;
  commands: CommandsService;
  clock: Clock;
  logger: Logger;
  /** how long a command without an answer holds back the next one (TRACKGATE_COMMAND_WAIT) */
  waitMs: number;
}

export interface MqttCommands {
  /** A client of the device now has a subscription covering its commands topic: its queue is delivered to it. */
  ready(client: Client, deviceId: string): void;
  /** The client is gone: what it was sent and did not answer goes back to the queue at the device's next identification. */
  gone(client: Client): void;
  /** Delivers the device's queued commands if a client of it takes commands here; whether one does. */
  deliver(deviceId: string): boolean;
  /** The devices with a client that takes commands here. */
  connectedDevices(): string[];
  /** The device's answers (from `devices/{id}/commandResults`), recorded before the publish is acknowledged. */
  results(deviceId: string, results: MqttCommandResult[]): Promise<void>;
  stop(): void;
}

/** The payload a command is published with: `{id, command, format}`. */
export function commandPayload(c: Pick<CommandRecord, 'id' | 'command' | 'format'>): Buffer {
  return Buffer.from(JSON.stringify({ id: c.id, command: c.command, format: c.format }));
}

/** A device's clients that take its commands, and its one delivery (see createMqttCommands). */
interface DeviceEntry {
  clients: Set<Client>;
  commands: ConnectionCommands;
}

const live = (clients: Set<Client>): boolean => [...clients].some((c) => !c.closed);

/** Publishes a command to the device's topic; false when no client of the device lives to receive it. */
function publishCommand(
  o: MqttCommandsOptions,
  entry: DeviceEntry | undefined,
  deviceId: string,
  payload: Buffer,
): boolean {
  if (!entry || !live(entry.clients)) return false;
  const packet: PublishPacket = {
    cmd: 'publish',
    topic: commandsTopic(deviceId),
    payload,
    qos: 1,
    retain: false,
    dup: false,
  };
  o.broker.publish(packet, (err) => {
    if (err)
      o.logger.warn(
        { deviceId, err: err.message },
        'mqtt: publishing a command failed; it is delivered again at the next connection',
      );
  });
  return true;
}

/** An answer that names a command not in flight here: the command it names, if the device was sent it; else the device's log. */
async function answerById(o: MqttCommandsOptions, deviceId: string, id: number, text: string): Promise<void> {
  if (await o.commands.answeredById(deviceId, id, text)) return;
  o.logger.info(
    { protocol: PROTOCOL, deviceId, command: id, text: text.slice(0, 200) },
    'device reply that answers no command sent to it; kept in its log',
  );
  await o.commands.unsolicited(deviceId, { protocol: PROTOCOL, text });
}

/** A new delivery of the device's queue, through its first live client's connection. */
function deviceDelivery(
  o: MqttCommandsOptions,
  deviceId: string,
  client: Client,
  write: (bytes: Buffer) => boolean,
): ConnectionCommands {
  return new ConnectionCommands({
    commands: o.commands,
    protocolName: PROTOCOL,
    clock: o.clock,
    logger: o.logger,
    waitMs: o.waitMs,
    deviceId,
    encode: (c) => ({ bytes: commandPayload(c), match: { commandId: c.id } }),
    unmatched: (r) => answerById(o, deviceId, r.commandId!, r.text),
    write,
    where: () => ({ protocol: PROTOCOL, deviceId, clientId: client.id }),
  });
}

export function createMqttCommands(o: MqttCommandsOptions): MqttCommands {
  /**
   * deviceId -> the device's clients that take its commands, and its one delivery. A command is
   * published to the device's topic, which every one of them receives: the delivery lives while
   * any of them does. A client that joins live ones (a technician's mosquitto_sub beside the
   * device) changes nothing of it, nor does one that leaves while another stays; when the last
   * one is gone, what was sent and not answered goes back to the queue, for the next client.
   */
  const byDevice = new Map<string, DeviceEntry>();

  return {
    ready(client, deviceId) {
      const current = byDevice.get(deviceId);
      if (current && (current.clients.has(client) || live(current.clients))) {
        current.clients.add(client);
        current.commands.kick();
        return;
      }
      // none of the device's clients lives on: a new delivery, which sends again what was in flight
      current?.commands.close();
      const commands = deviceDelivery(o, deviceId, client, (bytes) =>
        publishCommand(o, byDevice.get(deviceId), deviceId, bytes),
      );
      byDevice.set(deviceId, { clients: new Set([client]), commands });
      commands.kick();
    },

    gone(client) {
      for (const [deviceId, entry] of byDevice) {
        if (!entry.clients.delete(client) || entry.clients.size > 0) continue;
        entry.commands.close();
        byDevice.delete(deviceId);
      }
    },

    deliver(deviceId) {
      const entry = byDevice.get(deviceId);
      if (!entry || !live(entry.clients)) return false;
      entry.commands.kick();
      return true;
    },

    connectedDevices() {
      return [...byDevice.keys()];
    },

    async results(deviceId, results) {
      const answers = results.map((r) => ({ commandId: r.id, text: r.result }));
      const entry = byDevice.get(deviceId);
      if (entry) return entry.commands.answer(answers);
      // answered after its client went, or from another client (mosquitto_sub takes, mosquitto_pub answers)
      for (const a of answers) await answerById(o, deviceId, a.commandId, a.text);
    },

    stop() {
      for (const entry of byDevice.values()) entry.commands.close();
      byDevice.clear();
    },
  };
}
