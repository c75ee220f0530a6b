/** Starts a real trackgate (every listener on port 0) and talks to it over real HTTP. */
import type { ExecutionContext, TestFn } from 'ava';
import { loadConfig, PROTOCOL_DEFAULT_PORTS } from '../../config/config.js';
import { startTrackgate, type Running } from '../../main.js';
import type { Clock } from '../../core/clock.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { createStorage, type Backend } from './backends.js';
import { until } from './wait.js';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdef';

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface TestServer {
  running: Running;
  base: string;
  /** the storage settings, to start a second instance on the same database */
  storageEnv: Record<string, string>;
  adminToken: string;
  request(
    method: string,
    path: string,
    options?: { body?: unknown; raw?: string; token?: string; headers?: Record<string, string> },
  ): Promise<Reply>;
  token(userName: string, apiKey: string): Promise<string>;
  stop(): Promise<void>;
}

/** Loopback, HTTP on a free port, MQTT and every tracker listener off unless `extra` turns them on. */
export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  const ports: Record<string, string> = {};
  for (const p of Object.keys(PROTOCOL_DEFAULT_PORTS)) ports[`TRACKGATE_${p.toUpperCase()}_PORT`] = 'off';
  return {
    TRACKGATE_HOST: '127.0.0.1',
    TRACKGATE_HTTP_PORT: '0',
    TRACKGATE_MQTT_PORT: 'off',
    TRACKGATE_MQTT_WS_PORT: 'off',
    TRACKGATE_MQTT_TLS_PORT: 'off',
    TRACKGATE_ADMIN_API_KEY: ADMIN_KEY,
    TRACKGATE_LOG_LEVEL: 'silent',
    // every listener in the test's process (test/gateway/ipc/ starts gateway processes)
    TRACKGATE_GATEWAY_PROCESSES: '0',
    ...ports,
    ...extra,
  };
}

export async function startServer(
  backend: Backend,
  options: { env?: Record<string, string>; clock?: Clock; storageEnv?: Record<string, string>; logger?: Logger } = {},
): Promise<TestServer> {
  const storage = options.storageEnv ? undefined : await createStorage(backend);
  const storageEnv = options.storageEnv ?? storage!.env;
  const config = loadConfig(testEnv({ ...storageEnv, ...options.env }));
  const running = await startTrackgate(config, { logger: options.logger ?? silentLogger, clock: options.clock });
  const base = `http://127.0.0.1:${running.ports.http}`;

  async function request(
    method: string,
    path: string,
    o: { body?: unknown; raw?: string; token?: string; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: string | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: kept as text for the assertion to show */
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  async function token(userName: string, apiKey: string): Promise<string> {
    const r = await request('POST', '/api/Auth/Token', { body: { userName, apiKey } });
    if (r.status !== 200) throw new Error(`token for ${userName}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.token as string;
  }

  const adminToken = await token('admin', ADMIN_KEY);
  return {
    running,
    base,
    adminToken,
    request,
    token,
    storageEnv,
    async stop() {
      await running.stop();
      await storage?.cleanup();
    },
  };
}

/** What a test gives its clean-ups to (ava's `t`). */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * The two ways trackgate serves tracker sockets: in the core's own process (a one-core box, and
 * most tests), and in gateway processes, the default on a box with two cores or more. The tracker
 * end-to-end suites run in both.
 */
export interface GatewayMode {
  name: string;
  env: Record<string, string>;
}
export const GATEWAY_MODES: readonly GatewayMode[] = [
  { name: 'in the core', env: { TRACKGATE_GATEWAY_PROCESSES: '0' } },
  { name: 'in a gateway process', env: { TRACKGATE_GATEWAY_PROCESSES: '1' } },
];

/** A test of a tracker suite, registered once per gateway mode (the mode is named in its title). */
export function testInGatewayModes(
  test: TestFn,
  title: string,
  fn: (t: ExecutionContext, mode: GatewayMode) => Promise<void>,
): void {
  for (const mode of GATEWAY_MODES) test(`${title} [${mode.name}]`, (t) => fn(t, mode));
}

/** A server stopped when the test ends. */
export async function startTestServer(
  t: Teardown,
  options: Parameters<typeof startServer>[1] & { backend?: Backend } = {},
): Promise<TestServer> {
  const s = await startServer(options.backend ?? 'sqlite', options);
  t.teardown(() => s.stop());
  return s;
}

/** Creates a device of the first account (201, or the test fails with the answer). */
export async function createDevice(s: TestServer, id: string, body: Record<string, unknown> = {}): Promise<void> {
  const r = await s.request('POST', '/api/devices', { token: s.adminToken, body: { id, name: id, ...body } });
  if (r.status !== 201) throw new Error(`device ${id}: ${r.status} ${JSON.stringify(r.body)}`);
}

/**
 * Waits until the core knows the device is connected to it. In a gateway process the connection is
 * reported over the link a moment after the frame that made it, and a command sent in between is
 * queued (delivered when the report arrives) instead of waiting for the answer.
 */
export async function untilConnected(s: TestServer, id: string): Promise<void> {
  await until(`${id} connected`, () => s.running.gateway.connectedDevices().includes(id));
}
