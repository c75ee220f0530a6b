/**
 * "Listen, then report the port", for every socket trackgate serves on: tracker TCP, UDP and
 * HTTP, the three MQTT sockets, and the REST API's server in server/api-server.ts. Port 0 picks a free port,
 * so the port reported is the one bound; a port that cannot be bound (EADDRINUSE) rejects with
 * the error, for the start-up to fail and say so.
 *
 * close() stops accepting and destroys the connections still open, so a stop never waits for an
 * idle tracker or a keep-alive client.
 */
import type { Socket as DatagramSocket } from 'node:dgram';
import type { AddressInfo, Server, Socket } from 'node:net';

export interface Listener {
  /** the port actually bound */
  port: number;
  close(): Promise<void>;
}

export interface ListenOptions {
  port: number;
  host: string;
}

/** pending connections the kernel queues per listener: trackers reconnect in bursts after an outage */
const BACKLOG = 4096;

/** Binds a server (net, tls or http; or a UDP socket) and reports the port it got. */
export function listen(server: Server | DatagramSocket, o: ListenOptions): Promise<Listener> {
  return 'bind' in server ? bindDatagram(server, o) : listenStream(server, o);
}

function listenStream(server: Server, o: ListenOptions): Promise<Listener> {
  // Every accepted socket (for TLS, the raw one before the handshake), so close() can end them all.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: o.port, host: o.host, backlog: BACKLOG }, () => {
      server.off('error', reject);
      resolve({ port: (server.address() as AddressInfo).port, close });
    });
  });
}

function bindDatagram(socket: DatagramSocket, o: ListenOptions): Promise<Listener> {
  const close = () => new Promise<void>((resolve) => socket.close(() => resolve()));
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(o.port, o.host, () => {
      socket.off('error', reject);
      resolve({ port: socket.address().port, close });
    });
  });
}
