/**
 * MQTT 3.1.1 packets written by hand (§2.2 fixed header, §3.1 CONNECT, §3.8 SUBSCRIBE), for
 * clients real libraries will not imitate: one that never reads, one that declares a packet
 * larger than anything it sends.
 */
import net from 'node:net';

/** §2.2.3 Remaining Length: 7 bits per byte, high bit set while more bytes follow. */
export function remainingLength(n: number): Buffer {
  const bytes: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    bytes.push(b);
  } while (n > 0);
  return Buffer.from(bytes);
}

const utf8 = (s: string): Buffer => {
  const b = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(b.length);
  return Buffer.concat([len, b]);
};

/** CONNECT, protocol level 4, clean session, keep alive 0 (no keep-alive timeout). */
export function connectPacket(clientId: string, userName: string, password: string): Buffer {
  const body = Buffer.concat([utf8('MQTT'), Buffer.from([4, 0b1100_0010, 0, 0]), utf8(clientId), utf8(userName), utf8(password)]);
  return Buffer.concat([Buffer.from([0x10]), remainingLength(body.length), body]);
}

/** SUBSCRIBE (packet id 1) to one filter at QoS 0. */
export function subscribePacket(filter: string): Buffer {
  const body = Buffer.concat([Buffer.from([0, 1]), utf8(filter), Buffer.from([0])]);
  return Buffer.concat([Buffer.from([0x82]), remainingLength(body.length), body]);
}

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
export function socketClosed(socket: net.Socket | { once(e: 'close', f: () => void): unknown }, ms: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the connection stayed open for ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}
