/**
 * Datagram trackers (Teltonika, H02, GPS103 over UDP): every datagram names its device; the
 * reply goes back to the sender only after what it acknowledges is stored. A datagram is decoded
 * before its device is known, and again with the device's model when the record names one.
 *
 * Commands (CONTRACT.md "Commands"): a device is reachable at the address of its last datagram,
 * and only just after it (trackers listen briefly after sending). So its queued commands go right
 * after each of its datagrams is handled, and a new command goes at once only while its last
 * datagram is under UDP_LISTEN_MS old; otherwise it waits for the next one. The device's state
 * (what was sent, awaiting its answer) lasts while datagrams keep coming within the idle timeout;
 * after a longer silence it starts again, and what was sent unanswered is delivered again.
 */
import dgram from 'node:dgram';
import type { DecodeResult, ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import { handleDecoded, logMalformed, showUndecodable, type GatewayDeps } from '../shared/frame-handler.js';
import { listen, type Listener } from '../shared/listen.js';
import { flushEveryWindow, LISTENER_LOG, LogBudget } from '../shared/log-budget.js';
import { logStorageFailure } from '../shared/storage-failures.js';
import { ConnectionCommands, type CommandQueue } from '../shared/connection-commands.js';
import { monotonicMs } from '../../core/metrics/counts.js';

/** how long after a device's datagram a new command is sent at once (the tracker still listens) */
export const UDP_LISTEN_MS = 5000;

/** A device last heard over UDP: where it is and its commands. */
export interface UdpPeer {
  address: string;
  port: number;
  lastSeen: number;
  /** the device record's model, as the encoder reads it */
  model?: string;
  commands: ConnectionCommands;
}

export interface UdpOptions extends GatewayDeps {
  protocol: ProtocolModule;
  clock: Clock;
  checksum: 'accept' | 'strict';
  /** gateway-wide: the storage failures of every listener share one log budget */
  storageFailures: LogBudget;
  commands: CommandQueue;
  commandWaitMs: number;
  idleTimeoutSeconds: number;
  /** gateway-wide: the devices heard over UDP, by device id */
  udpPeers: Map<string, UdpPeer>;
  /** a device's datagram was handled (a gateway process tells the core, which then knows where a new command can go at once) */
  onUdpHeard?(deviceId: string): void;
}

/** Whether a UDP port is free now on `host` (gateway/ipc/free-ports.ts). */
export async function udpPortFree(port: number, host: string): Promise<boolean> {
  const socket = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4' });
  try {
    await (await listen(socket, { port, host })).close();
    return true;
  } catch {
    try {
      socket.close();
    } catch {
      // never bound: nothing to close
    }
    return false;
  }
}

export async function startUdpListener(o: UdpOptions, port: number, host: string): Promise<Listener> {
  const socket = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', reuseAddr: false });
  const protocol = o.protocol.name;
  // Any sender can send anything: one budget per kind of line for the whole listener.
  const summary = (what: string) => (count: number) => o.logger.warn({ protocol, transport: 'udp', count }, `${what} not logged one by one`);
  const malformedLog = new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('malformed frames') });
  const checksumLog = new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('checksum mismatches') });
  const refusedLog = new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('datagrams of unknown, expired or invalid identities') });
  const flushing = flushEveryWindow([malformedLog, checksumLog, refusedLog]);
  const now = () => o.clock.now().getTime();

  /** the listener is closed (a planned stop): what is still waiting for the core or storage is answered to no one, and not logged */
  let closed = false;
  // Datagrams of one sender are handled in order, like a stream.
  const chains = new Map<string, Promise<void>>();
  socket.on('message', (msg, rinfo) => {
    const key = `${rinfo.address}:${rinfo.port}`;
    const arrivedAt = monotonicMs();
    const next = (chains.get(key) ?? Promise.resolve()).then(() => handle(msg, rinfo, arrivedAt)).catch((e: unknown) => {
      o.logger.error({ protocol, remote: key, err: e }, 'handling a datagram failed unexpectedly');
    });
    chains.set(key, next);
    void next.then(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
  });
  socket.on('error', (err) => o.logger.warn({ protocol, err: err.message }, 'udp socket error'));

  async function handle(msg: Buffer, rinfo: dgram.RemoteInfo, arrivedAt: number): Promise<void> {
    const remote = `${rinfo.address}:${rinfo.port}`;
    const received = o.clock.now();
    const decode = (model: string | undefined): DecodeResult =>
      o.protocol.decodeDatagram!(msg, { now: received, transport: 'udp', model, checksum: o.checksum, session: {} });
    const malformed = (e: unknown): void => logMalformed(o, malformedLog, now(), { protocol, transport: 'udp', remote }, e, msg);
    const raw = { bytes: msg, text: o.protocol.frameEncoding === 'text', receivedAt: received };
    let result: DecodeResult | undefined;
    try {
      result = decode(undefined);
    } catch (e) {
      malformed(e);
      await showUndecodable(o, protocol, e, {}, rinfo.address, raw);
      return;
    }
    if (result.checksumError && checksumLog.take(now())) {
      o.logger.warn({ protocol, remote, reason: result.checksumError }, 'checksum mismatch: datagram accepted (TRACKGATE_CHECKSUM=accept)');
    }
    const stored = handleDecoded(o, protocol, result, {}, rinfo.address, decode, raw);
    // the decoded datagram is let go while it waits for its commit (see device-connection.ts)
    result = undefined;
    const outcome = await stored;
    if (closed) return;
    const send = (b: Buffer) => socket.send(b, rinfo.port, rinfo.address);
    switch (outcome.kind) {
      case 'ok': {
        outcome.replies.forEach(send);
        if (outcome.replies.length) o.counts?.acknowledged(arrivedAt);
        const peer = peerOf(outcome.device.id, rinfo);
        peer.model = outcome.device.model ?? undefined;
        o.onUdpHeard?.(outcome.device.id);
        if (outcome.commandResults) {
          await peer.commands.answer(outcome.commandResults).catch((e: unknown) => o.logger.warn({ protocol, remote, err: (e as Error).message }, 'recording a command answer failed'));
        }
        // after the datagram's reply: the tracker listens now
        peer.commands.kick();
        return;
      }
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

  const mine = new WeakSet<UdpPeer>();
  /** The device's peer, at the address of this datagram; a new one after a silence longer than the idle timeout. */
  function peerOf(deviceId: string, rinfo: dgram.RemoteInfo): UdpPeer {
    const at = now();
    let peer = o.udpPeers.get(deviceId);
    if (peer && at - peer.lastSeen > o.idleTimeoutSeconds * 1000) {
      peer.commands.close();
      peer = undefined;
    }
    if (!peer) {
      const where = () => ({ protocol, transport: 'udp', deviceId, remote: `${created.address}:${created.port}` });
      const created: UdpPeer = {
        address: rinfo.address,
        port: rinfo.port,
        lastSeen: at,
        commands: new ConnectionCommands({
          commands: o.commands,
          protocol: o.protocol,
          protocolName: protocol,
          clock: o.clock,
          logger: o.logger,
          waitMs: o.commandWaitMs,
          deviceId,
          context: () => ({ model: created.model, session: {} }),
          write: (bytes) => {
            socket.send(bytes, created.port, created.address);
            return true;
          },
          where,
        }),
      };
      peer = created;
      mine.add(peer);
      o.udpPeers.set(deviceId, peer);
    }
    peer.address = rinfo.address;
    peer.port = rinfo.port;
    peer.lastSeen = at;
    return peer;
  }

  const listener = await listen(socket, { port, host });
  return {
    port: listener.port,
    close: () => {
      closed = true;
      flushing.stop();
      for (const [id, peer] of o.udpPeers) {
        if (mine.has(peer)) {
          peer.commands.close({ stopping: true });
          o.udpPeers.delete(id);
        }
      }
      return listener.close();
    },
  };
}
