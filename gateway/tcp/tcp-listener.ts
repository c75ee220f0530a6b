/** One TCP server per protocol: every accepted socket becomes a DeviceConnection. */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { DeviceConnection, type ConnectionOptions } from './device-connection.js';

export function startTcpListener(o: ConnectionOptions, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    new DeviceConnection(socket, o);
  });
  server.maxConnections = 200_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}
