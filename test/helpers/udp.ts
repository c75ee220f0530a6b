/** A datagram sent to 127.0.0.1:port from a socket of its own, and the first answer within `ms` (undefined: none). */
import dgram from 'node:dgram';

export function udpExchange(port: number, datagram: Buffer, ms: number): Promise<Buffer | undefined> {
  const sock = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      sock.close();
      resolve(undefined);
    }, ms);
    sock.once('message', (m) => {
      clearTimeout(timer);
      sock.close();
      resolve(m);
    });
    sock.send(datagram, port, '127.0.0.1');
  });
}
