/**
 * Datagram trackers (Teltonika, H02, GPS103 over UDP): every datagram names its device; the
 * reply goes back to the sender only after what it acknowledges is stored.
 */
import dgram from 'node:dgram';
import { ProtocolError, type ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import { handleDecoded, type GatewayDeps } from './frame-handler.js';

export interface UdpOptions extends GatewayDeps {
  protocol: ProtocolModule;
  clock: Clock;
  checksum: 'accept' | 'strict';
}

export function startUdpListener(o: UdpOptions, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const socket = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', reuseAddr: false });
  // Datagrams of one sender are handled in order, like a stream.
  const chains = new Map<string, Promise<void>>();
  socket.on('message', (msg, rinfo) => {
    const key = `${rinfo.address}:${rinfo.port}`;
    const next = (chains.get(key) ?? Promise.resolve()).then(() => handle(msg, rinfo)).catch(() => {});
    chains.set(key, next);
    void next.then(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
  });
  socket.on('error', (err) => o.logger.warn({ protocol: o.protocol.name, err: err.message }, 'udp socket error'));

  async function handle(msg: Buffer, rinfo: dgram.RemoteInfo): Promise<void> {
    let result;
    try {
      result = o.protocol.decodeDatagram!(msg, { now: o.clock.now(), transport: 'udp', checksum: o.checksum, session: {} });
    } catch (e) {
      const excerpt = e instanceof ProtocolError ? e.excerpt : msg.subarray(0, 32).toString('hex');
      o.logger.warn({ protocol: o.protocol.name, remote: `${rinfo.address}:${rinfo.port}`, excerpt, reason: (e as Error).message }, 'malformed datagram');
      return;
    }
    const outcome = await handleDecoded(o, o.protocol.name, result, {}, rinfo.address);
    const send = (b: Buffer) => socket.send(b, rinfo.port, rinfo.address);
    if (outcome.kind === 'ok') outcome.replies.forEach(send);
    else if (outcome.kind === 'rejected' && outcome.rejection) send(outcome.rejection);
    else if (outcome.kind === 'failed') o.logger.error({ protocol: o.protocol.name, err: outcome.error }, 'storing failed: datagram not acknowledged');
  }

  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve({ port: socket.address().port, close: () => new Promise<void>((r) => socket.close(() => r())) });
    });
  });
}
