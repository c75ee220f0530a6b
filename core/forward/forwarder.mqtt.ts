/**
 * MQTT forwards, with the `mqtt` package: each message is published at QoS 1 to the forward's
 * topic template (`{deviceId}`, `{event}`; default FORWARD_MQTT_TOPIC), and a batch counts as
 * delivered once the broker has answered PUBACK for every message of it. One connection per
 * forward (clean session, client id `trackgate-fwd-<forward id>-<random>`); credentials come from
 * the URL (`mqtt://user:pass@host:1883`, `mqtts://…`). When the connection fails or a PUBACK does
 * not come within the timeout the connection is dropped and the batch fails; the delivery loop
 * connects again on its next attempt (after its backoff), so reconnecting follows the loop's
 * backoff instead of the library's. The client connects to the address forward.targets.ts checked
 * (the host name resolved at each connect: checkedTarget; TLS still verifies the name).
 */
import mqtt, { type MqttClient } from 'mqtt';
import { randomBytes } from 'node:crypto';
import type { ForwardMessage } from '../model/forward.js';
import {
  FORWARD_MQTT_TOPIC,
  checkedTarget,
  expandTemplate,
  safeUrl,
  within,
  type Forwarder,
  type ForwarderSettings,
} from './forwarder.js';

export function createMqttForwarder(
  settings: ForwarderSettings & { forwardId: string; url: string; topic: string | null },
): Forwarder {
  const template = settings.topic || FORWARD_MQTT_TOPIC;
  const where = safeUrl(settings.url);
  let client: MqttClient | undefined;
  let closed = false;

  function drop(): void {
    client?.removeAllListeners();
    client?.on('error', () => {});
    client?.end(true);
    client = undefined;
  }

  async function connected(): Promise<MqttClient> {
    if (client?.connected) return client;
    drop();
    const target = await checkedTarget(settings, settings.url, where);
    const c = mqtt.connect(settings.url, {
      host: target.address,
      hostname: target.address,
      ...(target.servername && { servername: target.servername }),
      clientId: `trackgate-fwd-${settings.forwardId.slice(0, 8)}-${randomBytes(4).toString('hex')}`,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: settings.timeoutMs,
      protocolVersion: 4,
    });
    client = c;
    await within(
      new Promise<void>((resolve, reject) => {
        c.once('connect', () => resolve());
        c.once('error', (e) => reject(new Error(`${where}: ${e.message}`)));
        c.once('close', () => reject(new Error(`${where}: the connection closed`)));
      }),
      settings.timeoutMs,
      `${where}: no connection within ${settings.timeoutMs} ms`,
    ).catch((e: unknown) => {
      drop();
      throw e;
    });
    c.removeAllListeners('error');
    c.on('error', () => {});
    c.once('close', () => {
      if (client === c) client = undefined;
    });
    return c;
  }

  return {
    async send(messages: readonly ForwardMessage[]) {
      if (closed) throw new Error('the MQTT forwarder is closed');
      const c = await connected();
      try {
        await within(
          Promise.all(messages.map((m) => c.publishAsync(expandTemplate(template, m), m.json, { qos: 1 }))),
          settings.timeoutMs,
          `${where}: no PUBACK within ${settings.timeoutMs} ms`,
        );
      } catch (e) {
        drop();
        throw e instanceof Error && e.message.startsWith(where) ? e : new Error(`${where}: ${(e as Error).message}`);
      }
    },
    async close() {
      closed = true;
      drop();
    },
  };
}
