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
export function freeTcpPort(host: string): Promise<number> {
  const server = net.createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function listenStream(onSocket: (socket: net.Socket) => void, o: StreamOptions): Promise<Listener> {
  const server = o.tls
    ? tls.createServer({ cert: o.tls.cert, key: o.tls.key, handshakeTimeout: 30_000 }, onSocket)
    : net.createServer(onSocket);
  if (o.tls?.onError) server.on('tlsClientError', o.tls.onError);
  server.maxConnections = o.maxConnections ?? 200_000;
  return listen(server, o);
}
