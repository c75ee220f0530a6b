/** The MQTT gateway of the core: its TLS files checked at start, its counts read at each scrape. */
import type { Config } from '../config/config.js';
import type { Clock } from '../core/clock.js';
import type { Metrics } from '../core/metrics/metrics.js';
import { startMqttGateway, type MqttGateway } from '../gateway/mqtt/mqtt.gateway.js';
import type { DeviceSide } from './device-locator.js';
import type { Services } from './services.js';
import { watchTlsPair, type WatchedTlsPair } from './tls-files.js';

export async function startMqtt(
  config: Readonly<Config>,
  services: Services,
  clock: Clock,
  metrics?: Metrics,
  boxTls?: WatchedTlsPair,
): Promise<{ mqtt: MqttGateway; side: DeviceSide; stop(): Promise<void> }> {
  // MQTT over TLS: its own pair (its files said wrong at start), else the box's; either renewed on disk
  const own =
    config.mqttTlsCert && config.mqttTlsKey && config.mqttTlsPort !== 'off'
      ? watchTlsPair({
          prefix: 'TRACKGATE_MQTT_TLS',
          certFile: config.mqttTlsCert,
          keyFile: config.mqttTlsKey,
          intervalMs: config.tlsCheckSeconds * 1000,
          logger: services.logger,
        })
      : undefined;
  const source = own ?? (config.mqttTlsPort !== 'off' ? boxTls : undefined);
  let mqtt: MqttGateway;
  try {
    mqtt = await startMqttGateway({
      host: config.host,
      port: config.mqttPort,
      wsPort: config.mqttWsPort,
      tlsPort: config.mqttTlsPort,
      tls: source?.current(),
      maxPacketBytes: config.mqttMaxPacketBytes,
      ...services,
      commandWaitMs: config.commandWaitSeconds * 1000,
      clock,
      logger: services.logger,
      counts: metrics?.mqtt,
    });
  } catch (e) {
    own?.stop();
    throw e;
  }
  source?.onChange((pair) => mqtt.setTls(pair));
  metrics?.readAtScrape({ mqttClients: () => mqtt.connectedClients(), mqttOutcomes: () => ({ ...mqtt.stats }) });
  // an MQTT client holds its device too: commands go to it when no tracker connection does
  return {
    mqtt,
    async stop() {
      own?.stop();
      await mqtt.stop();
    },
    side: {
      kind: 'mqtt',
      deliverCommands: (deviceId) => mqtt.deliverCommands(deviceId),
      connectedDevices: () => mqtt.connectedDevices(),
    },
  };
}
