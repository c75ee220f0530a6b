/**
 * Real receivers of forwards, each with names of its own: an HTTP server (node:http, port 0) whose
 * behaviour the test switches (answer 2xx, answer 500, hang), a subscriber on the Mosquitto of
 * this machine (127.0.0.1:1883) and a queue on its RabbitMQ (127.0.0.1:5672, guest/guest), bound
 * to an exchange of the test's own. Each records the messages as they arrive; `check` tells what
 * arrived against what was stored: none lost, per device in order, repeats counted.
 */
import http from 'node:http';
import { createHmac, randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import amqp from 'amqplib';

export const MOSQUITTO_URL = process.env.TRACKGATE_TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
export const RABBITMQ_URL = process.env.TRACKGATE_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * The receivers above listen on loopback, which forwards may not reach by default: a test that
 * forwards to them allows their hosts, as an operator allows a broker on the private network.
 */
export const ALLOW_RECEIVERS: readonly string[] = [
  ...new Set(['127.0.0.1', new URL(MOSQUITTO_URL).hostname, new URL(RABBITMQ_URL).hostname]),
];
export const ALLOW_RECEIVERS_ENV = { TRACKGATE_FORWARD_ALLOW: ALLOW_RECEIVERS.join(',') };

export interface ForwardedMessage {
  id: number;
  event: 'location' | 'alert';
  deviceId: string;
  location?: { dateTime: string; latitude: number; longitude: number; [k: string]: unknown };
  alert?: { id: number; alertName: string; dateTime: string; [k: string]: unknown };
}

export const uniqueName = (tag: string): string => `tg-test-${tag}-${process.pid}-${randomBytes(4).toString('hex')}`;

export type WebhookMode = 'ok' | 'error' | 'hang';

export interface WebhookReceiver {
  url: string;
  mode: WebhookMode;
  /** a body of more bytes is answered 413, whatever the mode (nginx's client_max_body_size); default no limit */
  maxBodyBytes: number;
  /** every request, with its size in bytes and what it answered */
  requests: { headers: http.IncomingHttpHeaders; body: string; bytes: number; answered: WebhookMode | 'too large' }[];
  /** the messages of the requests answered 2xx, in arrival order */
  messages: ForwardedMessage[];
  /** answers 200 to the requests held in mode 'hang' that are still open, taking their messages; how many */
  release(): number;
  /** the requests held in mode 'hang' still open */
  holding(): number;
  close(): Promise<void>;
}

/** An HTTP receiver answering per `mode`: 200, 500, or never (it holds the request open); 413 to a body over `maxBodyBytes`. */
export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const hanging = new Set<http.ServerResponse>();
  const held = new Map<http.ServerResponse, string>();
  const r: WebhookReceiver = {
    url: '',
    mode: 'ok',
    maxBodyBytes: Infinity,
    requests: [],
    messages: [],
    release: () => 0,
    holding: () => hanging.size,
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = raw.toString('utf8');
      if (raw.length > r.maxBodyBytes) {
        r.requests.push({ headers: req.headers, body, bytes: raw.length, answered: 'too large' });
        res.writeHead(413, { 'content-type': 'text/plain' });
        res.end('Request Entity Too Large');
        return;
      }
      const mode = r.mode;
      r.requests.push({ headers: req.headers, body, bytes: raw.length, answered: mode });
      if (mode === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        held.set(res, body);
        return;
      }
      if (mode === 'error') {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('receiver down for maintenance');
        return;
      }
      r.messages.push(...(JSON.parse(body) as ForwardedMessage[]));
      res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  r.url = `http://127.0.0.1:${port}${path}`;
  r.release = () => {
    let n = 0;
    for (const res of hanging) {
      if (res.destroyed) continue;
      r.messages.push(...(JSON.parse(held.get(res) ?? '[]') as ForwardedMessage[]));
      res.writeHead(200);
      res.end();
      n++;
    }
    hanging.clear();
    return n;
  };
  r.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

/** X-Trackgate-Signature as a receiver computes it. */
export const signature = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export interface BrokerReceiver {
  messages: ForwardedMessage[];
  /** topic (MQTT) or routing key (AMQP) of each message, in arrival order */
  keys: string[];
  close(): Promise<void>;
}

/** A subscriber on Mosquitto to `filter` (QoS 1). */
export async function startMqttReceiver(filter: string): Promise<BrokerReceiver> {
  const client: MqttClient = await mqtt.connectAsync(MOSQUITTO_URL, {
    clientId: uniqueName('sub'),
    clean: true,
    reconnectPeriod: 0,
  });
  const r: BrokerReceiver = { messages: [], keys: [], close: async () => void (await client.endAsync(true)) };
  client.on('message', (topic, payload) => {
    r.keys.push(topic);
    r.messages.push(JSON.parse(payload.toString('utf8')) as ForwardedMessage);
  });
  await client.subscribeAsync(filter, { qos: 1 });
  return r;
}

/** A queue of the test's own on RabbitMQ, bound to `exchange` (a topic exchange of its own, declared here) with `bindingKey`. */
export async function startAmqpReceiver(
  exchange: string,
  bindingKey = '#',
): Promise<BrokerReceiver & { queue: string; exchange: string }> {
  const conn = await amqp.connect(RABBITMQ_URL);
  const ch = await conn.createChannel();
  await ch.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
  const queue = uniqueName('queue');
  await ch.assertQueue(queue, { durable: false, exclusive: false, autoDelete: false });
  await ch.bindQueue(queue, exchange, bindingKey);
  const r: BrokerReceiver & { queue: string; exchange: string } = {
    queue,
    exchange,
    messages: [],
    keys: [],
    close: async () => {
      await ch.deleteQueue(queue).catch(() => {});
      await ch.deleteExchange(exchange).catch(() => {});
      await conn.close().catch(() => {});
    },
  };
  await ch.consume(
    queue,
    (m) => {
      if (!m) return;
      r.keys.push(m.fields.routingKey);
      r.messages.push(JSON.parse(m.content.toString('utf8')) as ForwardedMessage);
      (r as unknown as { props: unknown[] }).props ??= [];
      (r as unknown as { props: unknown[] }).props.push(m.properties);
    },
    { noAck: true },
  );
  return r;
}

/** A stored location or alert, as the test knows it: the key each forwarded message is matched by. */
export const locationKey = (deviceId: string, dateTime: string): string =>
  `L ${deviceId} ${new Date(dateTime).toISOString()}`;
export const alertKey = (deviceId: string, alertId: number): string => `A ${deviceId} ${alertId}`;

export function keyOf(m: ForwardedMessage): string {
  return m.event === 'location' ? locationKey(m.deviceId, m.location!.dateTime) : alertKey(m.deviceId, m.alert!.id);
}

export interface Checked {
  /** what was expected and never arrived */
  missing: string[];
  /** what arrived and was not expected (another account's, another kind's) */
  unexpected: string[];
  /** messages that arrived more than once (by id) */
  repeats: number;
  /** devices whose messages arrived out of stream order (ids not increasing, repeats aside) */
  outOfOrder: string[];
  /** ids seen per key: a key must always come with the same id */
  unstableIds: string[];
}

/** What arrived against what is expected (the keys of stored locations and alerts). */
export function check(arrived: readonly ForwardedMessage[], expected: Iterable<string>): Checked {
  const want = new Set(expected);
  const got = new Set<string>();
  const unexpected = new Set<string>();
  const seenIds = new Set<number>();
  const idOfKey = new Map<string, number>();
  const unstable = new Set<string>();
  const lastIdOfDevice = new Map<string, number>();
  const outOfOrder = new Set<string>();
  let repeats = 0;
  for (const m of arrived) {
    const key = keyOf(m);
    if (seenIds.has(m.id)) {
      repeats++;
      continue;
    }
    seenIds.add(m.id);
    if (idOfKey.has(key) && idOfKey.get(key) !== m.id && m.event === 'alert') unstable.add(key);
    idOfKey.set(key, m.id);
    if (!want.has(key)) unexpected.add(key);
    got.add(key);
    const last = lastIdOfDevice.get(m.deviceId) ?? -1;
    if (m.id < last) outOfOrder.add(m.deviceId);
    lastIdOfDevice.set(m.deviceId, Math.max(last, m.id));
  }
  return {
    missing: [...want].filter((k) => !got.has(k)),
    unexpected: [...unexpected],
    repeats,
    outOfOrder: [...outOfOrder],
    unstableIds: [...unstable],
  };
}
