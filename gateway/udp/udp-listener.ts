/**
 * Datagram trackers: a datagram names its device, or its sender (address and port) named it in an
 * earlier one (a T55 `$PGID` line, then bare NMEA): each sender has a decoder session of its own,
 * as a TCP connection has (UdpSession). The reply goes back only after what it acknowledges is
 * stored. A device is reachable at the address of its last datagram and only just
 * after it (trackers listen briefly), so its queued commands go right after each of its datagrams,
 * and a new one at once only within UDP_LISTEN_MS of the last (docs/commands.md "Over UDP").
 */
import dgram from 'node:dgram';
import type { DecodeResult, ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import {
  handleDecoded,
  logMalformed,
  profileOf,
  showUndecodable,
  type DecoderProfile,
  type FrameOutcome,
  type GatewayDeps,
  type KnownDevice,
} from '../shared/frame-handler.js';
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
  /** the device record's model and settings, as the encoder reads them */
  profile: DecoderProfile;
  /** the decoder session of the sender it was last heard from, as the encoder reads it */
  session: Record<string, unknown>;
  commands: ConnectionCommands;
}

/**
 * What one sender (address:port) has told the listener: the decoder's session, the device its
 * datagrams proved, and that device's model and settings. Forgotten after the idle timeout, or
 * when the listener holds MAX_UDP_SESSIONS and a new sender comes (the least recently heard goes).
 */
interface UdpSession {
  session: Record<string, unknown>;
  identity?: string;
  profile: DecoderProfile;
  lastSeen: number;
}

/** senders one listener remembers at most: a flood of forged source ports cannot grow it further */
export const MAX_UDP_SESSIONS = 50_000;

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

/** What one listener's handlers share. */
interface UdpListenerState {
  o: UdpOptions;
  socket: dgram.Socket;
  protocol: string;
  malformedLog: LogBudget;
  checksumLog: LogBudget;
  refusedLog: LogBudget;
  now(): number;
  /** the listener is closed (a planned stop): what is still waiting for the core or storage is answered to no one, and not logged */
  closed: boolean;
  /** the peers this listener made (closed with it) */
  mine: WeakSet<UdpPeer>;
  /** each sender's session, by `address:port`, least recently heard first */
  sessions: Map<string, UdpSession>;
}

export async function startUdpListener(o: UdpOptions, port: number, host: string): Promise<Listener> {
  const socket = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', reuseAddr: false });
  const protocol = o.protocol.name;
  // Any sender can send anything: one budget per kind of line for the whole listener.
  const summary = (what: string) => (count: number) =>
    o.logger.warn({ protocol, transport: 'udp', count }, `${what} not logged one by one`);
  const state: UdpListenerState = {
    o,
    socket,
    protocol,
    malformedLog: new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('malformed frames') }),
    checksumLog: new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('checksum mismatches') }),
    refusedLog: new LogBudget({
      ...LISTENER_LOG,
      onSuppressed: summary('datagrams of unknown, expired or invalid identities'),
    }),
    now: () => o.clock.now().getTime(),
    closed: false,
    mine: new WeakSet<UdpPeer>(),
    sessions: new Map(),
  };
  const flushing = flushEveryWindow([state.malformedLog, state.checksumLog, state.refusedLog]);

  // Datagrams of one sender are handled in order, like a stream.
  const chains = new Map<string, Promise<void>>();
  socket.on('message', (msg, rinfo) => {
    const key = `${rinfo.address}:${rinfo.port}`;
    const arrivedAt = monotonicMs();
    const next = (chains.get(key) ?? Promise.resolve())
      .then(() => handleDatagram(state, msg, rinfo, arrivedAt))
      .catch((e: unknown) => {
        o.logger.error({ protocol, remote: key, err: e }, 'handling a datagram failed unexpectedly');
      });
    chains.set(key, next);
    void next.then(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
  });
  socket.on('error', (err) => o.logger.warn({ protocol, err: err.message }, 'udp socket error'));

  const listener = await listen(socket, { port, host });
  return {
    port: listener.port,
    close: () => {
      state.closed = true;
      flushing.stop();
      for (const [id, peer] of o.udpPeers) {
        if (state.mine.has(peer)) {
          peer.commands.close({ stopping: true });
          o.udpPeers.delete(id);
        }
      }
      return listener.close();
    },
  };
}

/** One datagram: decoded, stored, then answered (see `answer`). */
async function handleDatagram(
  state: UdpListenerState,
  msg: Buffer,
  rinfo: dgram.RemoteInfo,
  arrivedAt: number,
): Promise<void> {
  const { o, protocol } = state;
  const remote = `${rinfo.address}:${rinfo.port}`;
  const received = o.clock.now();
  const sender = senderSession(state, remote);
  const decode = (profile: DecoderProfile): DecodeResult =>
    o.protocol.decodeDatagram!(msg, {
      now: received,
      transport: 'udp',
      deviceId: sender.identity,
      ...profile,
      checksum: o.checksum,
      session: sender.session,
    });
  const known: KnownDevice = { identity: sender.identity, ...sender.profile };
  const malformed = (e: unknown): void =>
    logMalformed(o, state.malformedLog, state.now(), { protocol, transport: 'udp', remote }, e, msg);
  const raw = { bytes: msg, text: o.protocol.frameEncoding === 'text', receivedAt: received };
  let result: DecodeResult | undefined;
  try {
    result = decode(sender.profile);
  } catch (e) {
    malformed(e);
    await showUndecodable(o, protocol, e, known, rinfo.address, raw);
    return;
  }
  if (result.checksumError && state.checksumLog.take(state.now())) {
    o.logger.warn(
      { protocol, remote, reason: result.checksumError },
      'checksum mismatch: datagram accepted (TRACKGATE_CHECKSUM=accept)',
    );
  }
  const stored = handleDecoded(o, protocol, result, known, rinfo.address, decode, raw);
  // the decoded datagram is let go while it waits for its commit (see device-connection.ts)
  result = undefined;
  const outcome = await stored;
  if (state.closed) return;
  remember(sender, outcome);
  await answer(state, outcome, rinfo, sender, arrivedAt, malformed);
}

/** The sender's session, made if new; the least recently heard senders and the idle ones are let go. */
function senderSession(state: UdpListenerState, remote: string): UdpSession {
  const { sessions } = state;
  const at = state.now();
  const idleMs = state.o.idleTimeoutSeconds * 1000;
  let s = sessions.get(remote);
  if (s) sessions.delete(remote);
  if (s && at - s.lastSeen > idleMs) s = undefined;
  s ??= { session: {}, profile: {}, lastSeen: at };
  s.lastSeen = at;
  // least recently heard first: the idle ones are at the front
  for (const [key, oldest] of sessions) {
    if (sessions.size < MAX_UDP_SESSIONS && at - oldest.lastSeen <= idleMs) break;
    sessions.delete(key);
  }
  sessions.set(remote, s);
  return s;
}

/** What the datagram proved of its sender: the device it is, or that it is none the listener serves. */
function remember(sender: UdpSession, outcome: FrameOutcome): void {
  if (outcome.kind === 'ok') {
    sender.identity = outcome.device.id;
    sender.profile = profileOf(outcome.device);
  } else if (outcome.kind === 'rejected' || outcome.kind === 'invalid') {
    sender.identity = undefined;
    sender.profile = {};
  }
}

/** What the sender gets once its datagram is stored (or refused), and the device's commands after it. */
async function answer(
  state: UdpListenerState,
  outcome: FrameOutcome,
  rinfo: dgram.RemoteInfo,
  sender: UdpSession,
  arrivedAt: number,
  malformed: (e: unknown) => void,
): Promise<void> {
  const { o, protocol } = state;
  const remote = `${rinfo.address}:${rinfo.port}`;
  const send = (b: Buffer) => state.socket.send(b, rinfo.port, rinfo.address);
  switch (outcome.kind) {
    case 'ok': {
      outcome.replies.forEach(send);
      if (outcome.replies.length) o.counts?.acknowledged(arrivedAt);
      const peer = peerOf(state, outcome.device.id, rinfo);
      peer.profile = sender.profile;
      peer.session = sender.session;
      o.onUdpHeard?.(outcome.device.id);
      if (outcome.commandResults) {
        await peer.commands
          .answer(outcome.commandResults)
          .catch((e: unknown) =>
            o.logger.warn({ protocol, remote, err: (e as Error).message }, 'recording a command answer failed'),
          );
      }
      // after the datagram's reply: the tracker listens now
      peer.commands.kick();
      return;
    }
    case 'rejected':
    case 'invalid':
      if (state.refusedLog.take(state.now())) {
        if (outcome.kind === 'rejected')
          o.logger.info(
            { protocol, remote, identifier: outcome.identity },
            'datagram of an unknown or expired device: not stored',
          );
        else
          o.logger.warn(
            { protocol, remote, identifier: outcome.identity.slice(0, 80), reason: outcome.reason },
            'datagram with an invalid identity: not stored',
          );
      }
      if (outcome.rejection) send(outcome.rejection);
      return;
    case 'failed':
      logStorageFailure(o.storageFailures, o.logger, state.now(), outcome.error, {
        protocol,
        remote,
        transport: 'udp',
      });
      return;
    case 'malformed':
      malformed(outcome.error);
      return;
    case 'anonymous':
      return;
  }
}

/** The device's peer, at the address of this datagram; a new one after a silence longer than the idle timeout. */
function peerOf(state: UdpListenerState, deviceId: string, rinfo: dgram.RemoteInfo): UdpPeer {
  const { o } = state;
  const at = state.now();
  let peer = o.udpPeers.get(deviceId);
  if (peer && at - peer.lastSeen > o.idleTimeoutSeconds * 1000) {
    peer.commands.close();
    peer = undefined;
  }
  if (!peer) {
    peer = newPeer(state, deviceId, rinfo, at);
    state.mine.add(peer);
    o.udpPeers.set(deviceId, peer);
  }
  peer.address = rinfo.address;
  peer.port = rinfo.port;
  peer.lastSeen = at;
  return peer;
}

function newPeer(state: UdpListenerState, deviceId: string, rinfo: dgram.RemoteInfo, at: number): UdpPeer {
  const { o, protocol } = state;
  const where = () => ({ protocol, transport: 'udp', deviceId, remote: `${created.address}:${created.port}` });
  const created: UdpPeer = {
    address: rinfo.address,
    port: rinfo.port,
    lastSeen: at,
    profile: {},
    session: {},
    commands: new ConnectionCommands({
      commands: o.commands,
      protocol: o.protocol,
      protocolName: protocol,
      clock: o.clock,
      logger: o.logger,
      waitMs: o.commandWaitMs,
      deviceId,
      context: () => ({ ...created.profile, session: created.session }),
      write: (bytes) => {
        state.socket.send(bytes, created.port, created.address);
        return true;
      },
      where,
    }),
  };
  return created;
}
