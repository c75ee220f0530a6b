/**
 * Raw MQTT sockets (packets from test/helpers/mqtt-packets.ts), for clients real libraries will
 * not imitate: one that never reads, one that declares a packet larger than anything it sends.
 */
import net from 'node:net';

/** A connected TCP socket. */
export function rawConnect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Resolves with the milliseconds it took the peer to close the socket, or rejects after `ms`. */
export function socketClosed(
  socket: net.Socket | { once(e: 'close', f: () => void): unknown },
  ms: number,
): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the connection stayed open for ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}
