/**
 * A real trackgate (REST API, SQLite) with the MQTT gateway started on its services, every
 * listener on port 0, and real clients: MQTT.js and the Debian mosquitto_pub / mosquitto_sub.
 */
import { execFile } from 'node:child_process';
import type { ExecutionContext } from 'ava';
import mqtt, { type MqttClient, type IClientOptions } from 'mqtt';
import { startServer, type TestServer } from '../../helpers/server.js';
import { startMqttGateway, type MqttGateway, type MqttGatewayOptions } from '../../../gateway/mqtt/mqtt.gateway.js';
import { systemClock } from '../../../core/clock.js';
import { silentLogger, type Logger } from '../../../core/logger.js';
import { PATIENCE_MS } from '../../helpers/wait.js';

export const PASSWORD = 'device-secret-1';

export interface Harness {
  s: TestServer;
  gw: MqttGateway;
  port: number;
  /** creates a device with an MQTT password through the REST API */
  device(id: string, extra?: Record<string, unknown>): Promise<void>;
  /** an MQTT.js client over TCP that does not reconnect; closed at teardown */
  connect(options: IClientOptions & { url?: string }): Promise<MqttClient>;
  lastLocation(deviceId: string): Promise<{ status: number; body: any }>;
}

export async function startHarness(
  t: ExecutionContext,
  options: Partial<MqttGatewayOptions> = {},
  env?: Record<string, string>,
  server: { logger?: Logger } = {},
): Promise<Harness> {
  const s = await startServer('sqlite', { env, ...server });
  const gw = await startMqttGateway({
    host: '127.0.0.1',
    port: 0,
    wsPort: 0,
    tlsPort: 'off',
    ...s.running.services,
    clock: systemClock,
    logger: silentLogger,
    ...options,
  });
  const clients: MqttClient[] = [];
  t.teardown(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
    await gw.stop();
    await s.stop();
  });
  const port = gw.ports.mqtt;
  return {
    s,
    gw,
    port,
    async device(id, extra = {}) {
      const r = await s.request('POST', '/api/devices', {
        token: s.adminToken,
        body: { id, name: id, mqttPassword: PASSWORD, ...extra },
      });
      if (r.status !== 201) throw new Error(`device ${id}: ${r.status} ${JSON.stringify(r.body)}`);
    },
    async connect(o) {
      const { url, ...rest } = o;
      const client = await mqtt.connectAsync(url ?? `mqtt://127.0.0.1:${port}`, {
        reconnectPeriod: 0,
        connectTimeout: PATIENCE_MS,
        ...rest,
      });
      clients.push(client);
      return client;
    },
    lastLocation: (deviceId) => s.request('GET', `/api/devices/${deviceId}/lastLocation`, { token: s.adminToken }),
  };
}

/** Why an MQTT.js connection was refused: the CONNACK return code. */
export async function connackCode(url: string, options: IClientOptions): Promise<number | undefined> {
  try {
    const c = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: PATIENCE_MS, ...options });
    await c.endAsync(true);
    return 0;
  } catch (e) {
    return (e as { code?: number }).code;
  }
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a mosquitto command-line client (never against 1883: that is the local Mosquitto). */
export function mosquitto(
  command: 'mosquitto_pub' | 'mosquitto_sub',
  args: string[],
  timeoutMs = PATIENCE_MS,
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(`/usr/bin/${command}`, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Resolves when the client's connection closes (or rejects after `ms`). */
export function closed(client: MqttClient, ms = PATIENCE_MS): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!client.connected) return resolve();
    const timer = setTimeout(() => reject(new Error('the connection stayed open')), ms);
    client.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** An API user made through REST (`read` unless told otherwise), with the API key it was given. */
export async function apiUser(
  h: Harness,
  email: string,
  o: { privileges?: string[]; group?: string; token?: string } = {},
): Promise<{ id: string; userName: string; apiKey: string }> {
  const body = {
    name: email,
    email,
    country: 'ES',
    timeZone: 'UTC',
    privileges: o.privileges ?? ['read'],
    group: o.group,
  };
  const r = await h.s.request('POST', '/api/users', { token: o.token ?? h.s.adminToken, body });
  if (r.status !== 201) throw new Error(`user ${email}: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.id as string, userName: r.body.userName as string, apiKey: r.body.apiKey as string };
}

/** The JSON messages a client receives, in order, and a way to wait for a condition on them. */
export function messages(c: MqttClient): {
  seen: { topic: string; body: any }[];
  until(pred: () => boolean, ms?: number): Promise<boolean>;
} {
  const seen: { topic: string; body: any }[] = [];
  c.on('message', (topic, payload) => seen.push({ topic, body: JSON.parse(payload.toString()) }));
  return {
    seen,
    async until(pred: () => boolean, ms = PATIENCE_MS): Promise<boolean> {
      const end = Date.now() + ms;
      while (Date.now() < end && !pred()) await sleep(20);
      return pred();
    },
  };
}
