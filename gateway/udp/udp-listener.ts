/**
 * Datagram trackers (Teltonika, H02, GPS103 over UDP): every datagram names its device; the
 * reply goes back to the sender only after what it acknowledges is stored. A datagram is decoded
 * before its device is known, and again with the device's model when the record names one.
 */
import dgram from 'node:dgram';
import { ProtocolError, type DecodeResult, type ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import { handleDecoded, type GatewayDeps } from '../shared/frame-handler.js';
import { listen, type Listener } from '../shared/listen.js';
import { flushEveryWindow, LISTENER_LOG, LogBudget } from '../shared/log-budget.js';
import { logStorageFailure } from '../shared/storage-failures.js';

export interface UdpOptions extends GatewayDeps {
  protocol: ProtocolModule;
  clock: Clock;
  checksum: 'accept' | 'strict';
  /** gateway-wide: the storage failures of every listener share one log budget */
  storageFailures: LogBudget;
}

export async function startUdpListener(o: UdpOptions, port: number, host: string): Promise<Listener> {
  const socket = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', reuseAddr: false });
  const protocol = o.protocol.name;
  // Any sender can send anything: one budget per kind of line for the whole listener.
  const summary = (what: string) => (count: number) => o.logger.warn({ protocol, transport: 'udp', count }, `${what} not logged one by one`);
  const malformedLog = new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('malformed datagrams') });
  const checksumLog = new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('checksum mismatches') });
  const refusedLog = new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('datagrams of unknown, expired or invalid identities') });
  const flushing = flushEveryWindow([malformedLog, checksumLog, refusedLog]);
  const now = () => o.clock.now().getTime();

  // Datagrams of one sender are handled in order, like a stream.
  const chains = new Map<string, Promise<void>>();
  socket.on('message', (msg, rinfo) => {
    const key = `${rinfo.address}:${rinfo.port}`;
    const next = (chains.get(key) ?? Promise.resolve()).then(() => handle(msg, rinfo)).catch((e: unknown) => {
      o.logger.error({ protocol, remote: key, err: e }, 'handling a datagram failed unexpectedly');
    });
    chains.set(key, next);
    void next.then(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
  });
  socket.on('error', (err) => o.logger.warn({ protocol, err: err.message }, 'udp socket error'));

  async function handle(msg: Buffer, rinfo: dgram.RemoteInfo): Promise<void> {
    const remote = `${rinfo.address}:${rinfo.port}`;
    const received = o.clock.now();
    const decode = (model: string | undefined): DecodeResult =>
      o.protocol.decodeDatagram!(msg, { now: received, transport: 'udp', model, checksum: o.checksum, session: {} });
    const malformed = (e: unknown): void => {
      if (!malformedLog.take(now())) return;
      const excerpt = e instanceof ProtocolError ? e.excerpt : msg.subarray(0, 32).toString('hex');
      o.logger.warn({ protocol, remote, excerpt, reason: (e as Error).message }, 'malformed datagram');
    };
    let result: DecodeResult;
    try {
      result = decode(undefined);
    } catch (e) {
      malformed(e);
      return;
    }
    if (result.checksumError && checksumLog.take(now())) {
      o.logger.warn({ protocol, remote, reason: result.checksumError }, 'checksum mismatch: datagram accepted (TRACKGATE_CHECKSUM=accept)');
    }
    const outcome = await handleDecoded(o, protocol, result, {}, rinfo.address, decode);
    const send = (b: Buffer) => socket.send(b, rinfo.port, rinfo.address);
    switch (outcome.kind) {
      case 'ok':
        outcome.replies.forEach(send);
        return;
      case 'rejected':
      case 'invalid':
        if (refusedLog.take(now())) {
          if (outcome.kind === 'rejected') o.logger.info({ protocol, remote, identifier: outcome.identity }, 'datagram of an unknown or expired device: not stored');
          else o.logger.warn({ protocol, remote, identifier: outcome.identity.slice(0, 80), reason: outcome.reason }, 'datagram with an invalid identity: not stored');
        }
        if (outcome.rejection) send(outcome.rejection);
        return;
      case 'failed':
        logStorageFailure(o.storageFailures, o.logger, now(), outcome.error, { protocol, remote, transport: 'udp' });
        return;
      case 'malformed':
        malformed(outcome.error);
        return;
      case 'anonymous':
        return;
    }
  }

  const listener = await listen(socket, { port, host });
  return {
    port: listener.port,
    close: () => {
      flushing.stop();
      return listener.close();
    },
  };
}
