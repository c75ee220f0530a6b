/**
 * The device listeners of a start: the tracker listeners (in this process or the gateway
 * processes'), the edge gateways' link, the MQTT gateway, and the device locator that routes
 * commands to whichever holds a device's connection.
 */
import type { Config } from '../config/config.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../core/metrics/metrics.js';
import type { MqttGateway } from '../gateway/mqtt/mqtt.gateway.js';
import { routeCommands } from './commands.js';
import { createDeviceLocator } from './device-locator.js';
import { startMqtt } from './mqtt.js';
import { locatorPresence } from './presence.js';
import type { Services } from './services.js';
import type { WatchedTlsPair } from './tls-files.js';
import { startEdgeLink, startTrackers, type EdgeLink, type Trackers } from './trackers.js';

export interface Listeners {
  trackers: Trackers;
  edge?: EdgeLink;
  mqtt: MqttGateway;
  /** the tracker listeners as a start reports them: every side's connections, this process's ports */
  gateway: Trackers['gateway'];
}

/**
 * Binds the listeners in order; each one bound is pushed on `closers` at once, so a start that
 * fails half-way closes what it opened.
 */
export async function startListeners(
  config: Readonly<Config>,
  services: Services,
  clock: Clock,
  logger: Logger,
  metrics: Metrics | undefined,
  closers: (() => Promise<void>)[],
  tls?: WatchedTlsPair,
): Promise<Listeners> {
  const trackers = await startTrackers(config, services, clock, logger, metrics, tls);
  closers.push(() => trackers.gateway.stop());
  // edge gateways (`trackgate gateway --core`) on their own link
  const edge = await startEdgeLink(config, services, clock, logger);
  if (edge) closers.push(() => edge.link.close());
  // the gateway processes' (and edge gateways') listener counts, summed into this GET /metrics
  metrics?.readAtScrape({
    remoteTrackers: () => [...(trackers.link?.trackerCounts() ?? []), ...(edge?.link.trackerCounts() ?? [])],
  });
  const mqtt = await startMqtt(config, services, clock, metrics, tls);
  closers.push(() => mqtt.stop());
  // where each device is: commands, stale connections and the command upkeep all ask it
  const locator = createDeviceLocator([trackers, ...(edge ? [edge] : []), mqtt.side], services.events);
  closers.push(async () => locator.close());
  // GET /api/lastLocations: who is online, through the same locator
  services.attachPresence(
    locatorPresence(locator, {
      idleTimeoutMs: config.idleTimeoutSeconds * 1000,
      sharedStorage: config.databaseUrl !== undefined,
      now: () => clock.now().getTime(),
      mqttDevices: () => mqtt.mqtt.onlineDevices(),
    }),
  );
  closers.push(routeCommands({ commands: services.commands, events: services.events, locator, logger }));
  const gateway: Trackers['gateway'] = {
    ...locator.trackers,
    ports: { ...trackers.gateway.ports, ...(edge && { gatewayLink: edge.port }) },
    stop: () => trackers.gateway.stop(),
  };
  return { trackers, edge, mqtt: mqtt.mqtt, gateway };
}
