/**
 * The REST API's servers: plain HTTP (TRACKGATE_HTTP_PORT) and HTTPS (TRACKGATE_HTTPS_PORT, the
 * box's certificate, renewed without a restart) around the one Koa app; api/ builds the app only,
 * the servers are made here, beside every other listener.
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Config } from '../config/config.js';
import type { Clock } from '../core/clock.js';
import type { Metrics } from '../core/metrics/metrics.js';
import { createApi } from '../api/app.js';
import { forwardedClient } from '../api/client-address.js';
import { listen, type Listener } from '../gateway/shared/listen.js';
import { TLS_DEFAULTS, TLS_HANDSHAKE_TIMEOUT_MS } from '../gateway/shared/stream-server.js';
import { looksLikeTlsHello, RefusalLog } from '../gateway/shared/tls-refusals.js';
import type { WebSocketUpgrades } from '../gateway/mqtt/mqtt.listeners.js';
import type { Services } from './services.js';
import type { WatchedTlsPair } from './tls-files.js';

export interface ApiServerOptions {
  clock: Clock;
  metrics?: Metrics;
  /** true until every listener is bound and the first account exists: health says "starting", the rest 503 */
  starting(): boolean;
  ping(): Promise<void>;
  /** why storage refuses writes now, if it does */
  writesFailing(): string | undefined;
  /** why free space where the database lives is too low, if it is */
  storageLow?(): string | undefined;
  /** the box's certificate: HTTPS is served with it (and each renewal) when TRACKGATE_HTTPS_PORT is on */
  tls?: WatchedTlsPair;
  /** the MQTT WebSocket port, once bound (the console's live feed) */
  mqttWsPort(): number | undefined;
  /** MQTT over WebSocket, once the broker runs (undefined while it does not, or when it is off): the REST ports' `/mqtt` */
  mqttUpgrade?(): MqttUpgrade | undefined;
}

/** what the MQTT gateway takes an upgrade request with (gateway/mqtt/mqtt.listeners.ts) */
export type MqttUpgrade = WebSocketUpgrades['upgrade'];

/** Where the REST ports take MQTT over WebSocket: the console's live feed, same origin (HTTPS too, and through a proxy). */
export const MQTT_WS_PATH = '/mqtt';

/**
 * An upgrade request on a REST port: `/mqtt` goes to the MQTT broker (which checks the WebSocket
 * handshake and then the MQTT login as on its own port), from the client behind a trusted proxy;
 * anything else is answered 404 and closed.
 */
function onUpgrade(o: ApiServerOptions, trustedProxies: readonly string[]) {
  const forwarded = forwardedClient(trustedProxies);
  return (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const upgrade = o.mqttUpgrade?.();
    const path = (req.url ?? '').split('?')[0];
    if (upgrade && path === MQTT_WS_PATH && !o.starting()) {
      // behind a trusted proxy the client's address, as for REST: what the failed-login limit counts
      const peer = req.socket.remoteAddress ?? null;
      const header = req.headers['x-forwarded-for'];
      const client =
        forwarded && peer ? forwarded(peer, Array.isArray(header) ? header.join(',') : (header ?? '')) : peer;
      return upgrade(req, socket, head, client);
    }
    socket.on('error', () => {});
    socket.end(`HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  };
}

export interface ApiServers {
  /** `http` and `https`, those that listen */
  ports: Record<string, number>;
  close(): Promise<void>;
}

/** Node's own answers to a request it cannot parse (node:_http_server socketOnError), kept beside the TLS case. */
const PARSE_ANSWERS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * A request the plain port cannot parse: a TLS handshake (`https://` to the HTTP port) is refused
 * and logged once per address; anything else gets Node's usual answer.
 */
function onClientError(refusals: RefusalLog) {
  return (e: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) => {
    if (e.rawPacket && looksLikeTlsHello(e.rawPacket)) {
      refusals.refused(socket.remoteAddress, 'a TLS handshake on the plain HTTP port (use TRACKGATE_HTTPS_PORT)', {
        port: 'http',
      });
      socket.destroy();
      return;
    }
    if (socket.writable && socket.bytesWritten === 0 && e.code !== 'ECONNRESET') {
      const status = PARSE_ANSWERS[e.code ?? ''] ?? 400;
      socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
    }
    socket.destroy(e);
  };
}

export async function listenApi(
  config: Readonly<Config>,
  services: Services,
  o: ApiServerOptions,
): Promise<ApiServers> {
  const api = createApi({
    ...services,
    clock: o.clock,
    logger: services.logger,
    bodyLimitBytes: config.bodyLimitBytes,
    starting: o.starting,
    ping: o.ping,
    writesFailing: o.writesFailing,
    storageLow: o.storageLow,
    unknownDevices: services.directory.recentUnknown,
    onTimeZoneChanged: (accountId) => services.events.accountChanged(accountId),
    metrics: o.metrics,
    trustedProxies: config.trustedProxies,
    console: {
      tileUrl: config.consoleTileUrl,
      mqttWsPort: o.mqttWsPort,
      mqttWsPath: () => (o.mqttUpgrade?.() ? MQTT_WS_PATH : undefined),
    },
  });
  const refusals = new RefusalLog(services.logger);
  const listeners: Listener[] = [];
  const ports: Record<string, number> = {};
  const close = async () => {
    await Promise.all(listeners.map((l) => l.close()));
  };
  try {
    if (config.httpPort !== 'off') {
      const server = http.createServer(api.callback());
      server.keepAliveTimeout = 65_000;
      server.on('clientError', onClientError(refusals));
      server.on('upgrade', onUpgrade(o, config.trustedProxies));
      const l = await listen(server, { port: config.httpPort, host: config.host });
      listeners.push(l);
      ports.http = l.port;
    }
    if (config.httpsPort !== 'off' && o.tls) {
      const tls = o.tls;
      const server = https.createServer(
        { ...tls.current(), ...TLS_DEFAULTS, handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS },
        api.callback(),
      );
      server.keepAliveTimeout = 65_000;
      server.on('tlsClientError', refusals.handshakeFailed({ port: 'https' }));
      server.on('upgrade', onUpgrade(o, config.trustedProxies));
      tls.onChange((pair) => server.setSecureContext({ ...pair, ...TLS_DEFAULTS }));
      const l = await listen(server, { port: config.httpsPort, host: config.host });
      listeners.push(l);
      ports.https = l.port;
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { ports, close };
}
