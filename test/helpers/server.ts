/** Starts a real trackgate (every listener on port 0) and talks to it over real HTTP. */
import { loadConfig, PROTOCOL_DEFAULT_PORTS } from '../../config/config.js';
import { startTrackgate, type Running } from '../../main.js';
import type { Clock } from '../../core/clock.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { createStorage, type Backend } from './backends.js';

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
  request(method: string, path: string, options?: { body?: unknown; raw?: string; token?: string; headers?: Record<string, string> }): Promise<Reply>;
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

export async function startServer(backend: Backend, options: { env?: Record<string, string>; clock?: Clock; storageEnv?: Record<string, string>; logger?: Logger } = {}): Promise<TestServer> {
  const storage = options.storageEnv ? undefined : await createStorage(backend);
  const storageEnv = options.storageEnv ?? storage!.env;
  const config = loadConfig(testEnv({ ...storageEnv, ...options.env }));
  const running = await startTrackgate(config, { logger: options.logger ?? silentLogger, clock: options.clock });
  const base = `http://127.0.0.1:${running.ports.http}`;

  async function request(method: string, path: string, o: { body?: unknown; raw?: string; token?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
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
    running, base, adminToken, request, token, storageEnv,
    async stop() {
      await running.stop();
      await storage?.cleanup();
    },
  };
}
