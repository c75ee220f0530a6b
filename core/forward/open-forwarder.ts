/** The adapter of a forward's target type (forwarder.webhook.ts, forwarder.mqtt.ts, forwarder.amqp.ts). */
import type { Forward } from '../model/forward.js';
import type { Forwarder, ForwarderSettings } from './forwarder.js';
import { createWebhookForwarder } from './forwarder.webhook.js';
import { createMqttForwarder } from './forwarder.mqtt.js';
import { createAmqpForwarder } from './forwarder.amqp.js';

export function openForwarder(f: Forward, settings: ForwarderSettings): Forwarder {
  switch (f.type) {
    case 'webhook':
      return createWebhookForwarder({ ...settings, forwardId: f.id, url: f.url, secret: f.secret });
    case 'mqtt':
      return createMqttForwarder({ ...settings, forwardId: f.id, url: f.url, topic: f.topic });
    case 'amqp':
      return createAmqpForwarder({ ...settings, url: f.url, exchange: f.exchange, topic: f.topic });
  }
}
