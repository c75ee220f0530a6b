/** One TCP server per protocol: every accepted socket becomes a DeviceConnection. */
import { DeviceConnection, type ConnectionOptions } from './device-connection.js';
import { listenStream, type StreamListener } from './stream-server.js';

export function startTcpListener(o: ConnectionOptions, port: number, host: string): Promise<StreamListener> {
  return listenStream((socket) => new DeviceConnection(socket, o), { port, host });
}
