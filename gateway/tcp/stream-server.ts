/**
 * A raw TCP (or TLS) server that hands every accepted socket to a handler, tracks its sockets so
 * stop() closes them, and reports the actual port (0 picks a free one). Trackers and MQTT both
 * listen through it.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';

export interface StreamListener {
  port: number;
  close(): Promise<void>;
}

export interface StreamOptions {
  port: number;
  host: string;
  /** PEM certificate and key: serve TLS */
  tls?: { cert: Buffer; key: Buffer; onError?: (e: Error) => void };
  maxConnections?: number;
}

export function listenStream(onSocket: (socket: net.Socket) => void, o: StreamOptions): Promise<StreamListener> {
  const sockets = new Set<net.Socket>();
  const server = o.tls
    ? tls.createServer({ cert: o.tls.cert, key: o.tls.key, handshakeTimeout: 30_000 }, onSocket)
    : net.createServer(onSocket);
  // Track the raw sockets (for TLS, before the handshake) so stop() can close them all.
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  if (o.tls?.onError) server.on('tlsClientError', o.tls.onError);
  server.maxConnections = o.maxConnections ?? 200_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: o.port, host: o.host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}
