/**
 * A raw TCP (or TLS) server that hands every accepted socket to a handler. Trackers and MQTT both
 * listen through it; this is the one file that creates `net` and `tls` servers.
 */
import net from 'node:net';
import tls from 'node:tls';
import { listen, type Listener } from './listen.js';

export interface StreamOptions {
  port: number;
  host: string;
  /** PEM certificate and key: serve TLS */
  tls?: { cert: Buffer; key: Buffer; onError?: (e: Error) => void };
  maxConnections?: number;
}

/** A TCP port free now on `host` (the gateway processes need one number before any of them listens: gateway/ipc/free-ports.ts). */
export async function freeTcpPort(host: string): Promise<number> {
  const probe = await listen(net.createServer(), { port: 0, host });
  await probe.close();
  return probe.port;
}

export function listenStream(onSocket: (socket: net.Socket) => void, o: StreamOptions): Promise<Listener> {
  const server = o.tls
    ? tls.createServer({ cert: o.tls.cert, key: o.tls.key, handshakeTimeout: 30_000 }, onSocket)
    : net.createServer(onSocket);
  if (o.tls?.onError) server.on('tlsClientError', o.tls.onError);
  server.maxConnections = o.maxConnections ?? 200_000;
  return listen(server, o);
}

/** Why a PEM certificate and key cannot serve TLS (not PEM, or a key of another certificate), or undefined. */
export function tlsPairProblem(cert: Buffer, key: Buffer): string | undefined {
  try {
    tls.createSecureContext({ cert, key });
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
