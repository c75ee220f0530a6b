/**
 * One tracker's TCP connection: bytes -> splitter -> frames, processed strictly in order;
 * acknowledgements are written only after what they acknowledge is stored. Memory stays bounded:
 * the splitter holds at most one frame, and reading pauses while too many frames wait.
 *
 * What operators see: one info line when a tracker connects, identifies itself and disconnects;
 * malformed frames, checksum mismatches and refused identities at warn/info, a few per connection
 * and then one summary count (garbage must not turn into a log flood). A connection that sends
 * only garbage is closed.
 */
import type { Socket } from 'node:net';
import { ProtocolError, type DecodeResult, type FrameSplitter, type ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import type { ConnectionRegistry } from './connection-registry.js';
import {
  handleDecoded,
  profileOf,
  type DecoderProfile,
  type KnownDevice,
  logMalformed,
  showUndecodable,
  type FrameOutcome,
  type GatewayDeps,
} from '../shared/frame-handler.js';
import { CONNECTION_LOG, LogBudget } from '../shared/log-budget.js';
import { logStorageFailure } from '../shared/storage-failures.js';
import { ConnectionCommands, type CommandQueue } from '../shared/connection-commands.js';
import { monotonicMs } from '../../core/metrics/counts.js';
import { identifyTimeoutReason, type IdentifyTimeout } from '../shared/identify-timeout.js';
import { looksLikeTlsHello, type RefusalLog } from '../shared/tls-refusals.js';

export interface ConnectionOptions extends GatewayDeps {
  protocol: ProtocolModule;
  registry: ConnectionRegistry<DeviceConnection>;
  clock: Clock;
  checksum: 'accept' | 'strict';
  idleTimeoutMs: number;
  /** frames waiting beyond this pause reading */
  maxQueuedFrames?: number;
  /** gateway-wide: the storage failures of every connection share one log budget */
  storageFailures: LogBudget;
  /** the command queue delivered once the device identifies itself */
  commands: CommandQueue;
  /** how long a command without an answer holds back the next one */
  commandWaitMs: number;
  /** gateway-wide: how long a connection may stay without naming a known device (absent: no limit) */
  identifyTimeout?: IdentifyTimeout;
  /** a plain port: a TLS handshake on it is refused and logged once per address */
  plainPort?: { refusals: RefusalLog; tlsPortSetting: string };
}

/** Malformed frames, without one good frame (see `proven`) between them, that close a connection. */
export const MAX_MALFORMED_RUN = 20;
/**
 * Bytes received since the last good frame (see `proven`; with nothing waiting to be decoded) that
 * close a connection: twice the protocol's largest frame, and at least 64 KiB, so a real frame
 * always fits. A tracker that never names a known device is closed after that much, too.
 */
export const garbageLimitBytes = (protocol: ProtocolModule): number => Math.max(2 * protocol.maxFrameBytes, 65_536);

export class DeviceConnection {
  private readonly splitter: FrameSplitter;
  private readonly session: Record<string, unknown> = {};
  private readonly queue: Buffer[] = [];
  /** when each queued frame's bytes arrived (monotonicMs), for the acknowledgement latency */
  private readonly arrivals: number[] = [];
  private readonly remote: string;
  private readonly openedAt: number;
  private identity?: string;
  /** the identified device's model and settings as its record said at the last frame: the next frame is decoded with them */
  private profile: DecoderProfile = {};
  /** the identified device's commands on this connection */
  private commands?: ConnectionCommands;
  private pumping = false;
  private closed = false;
  private closeReason?: string;
  /** closed by a planned stop: its disconnection is in the stop's one line */
  private quiet = false;
  private frames = 0;
  /** malformed frames since the last good one */
  private malformedRun = 0;
  /** bytes received since the last good frame */
  private unprovenBytes = 0;
  /** made at the first event of their kind (most connections never have one: no memory for them while idle) */
  private malformedLog?: LogBudget;
  private checksumLog?: LogBudget;
  private refusedLog?: LogBudget;
  /** runs until the connection names a known device (again, after it named an unknown one) */
  private identifyTimer?: NodeJS.Timeout;

  constructor(
    private readonly socket: Socket,
    private readonly o: ConnectionOptions,
  ) {
    this.splitter = o.protocol.createSplitter!();
    this.remote = `${socket.remoteAddress}:${socket.remotePort}`;
    this.openedAt = o.clock.now().getTime();
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    socket.setTimeout(o.idleTimeoutMs, () => this.close('idle timeout'));
    socket.on('data', (chunk: Buffer) => {
      try {
        this.onData(chunk);
      } catch (e) {
        this.internalError(e);
      }
    });
    socket.on('end', () => {
      this.closeReason ??= 'closed by the tracker';
    });
    socket.on('error', (err) => {
      this.closeReason ??= err.message;
      o.logger.debug({ ...this.where(), err: err.message }, 'tracker socket error');
    });
    socket.on('close', () => this.onClose());
    o.counts?.connected();
    o.logger.info(this.where(), 'tracker connected');
    this.awaitIdentity();
  }

  /** From now on the connection has TRACKGATE_IDENTIFY_TIMEOUT to name a known device. */
  private awaitIdentity(): void {
    const limit = this.o.identifyTimeout;
    if (!limit || this.identifyTimer) return;
    this.identifyTimer = setTimeout(() => {
      this.identifyTimer = undefined;
      if (this.closed || this.identity !== undefined) return;
      this.o.counts?.identifyTimedOut();
      limit.closed(this.now(), { ...this.where(), frames: this.frames });
      this.close(identifyTimeoutReason(limit.ms / 1000));
    }, limit.ms);
  }

  private stopAwaitingIdentity(): void {
    clearTimeout(this.identifyTimer);
    this.identifyTimer = undefined;
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closeReason ??= reason;
    this.closed = true;
    this.socket.destroy();
  }

  /**
   * Closed by a planned stop of its listeners (tracker-gateway.ts, which logs one line for all):
   * no line of its own, and what it waits for from the core or storage is dropped unanswered and
   * unlogged (the tracker resends what was not acknowledged).
   */
  stop(): void {
    this.quiet = true;
    this.commands?.close({ stopping: true });
    this.close('stopping');
  }

  /** A log budget of this connection: past it, `what` is counted and reported in one summary line. */
  private budget(what: string): LogBudget {
    return new LogBudget({
      ...CONNECTION_LOG,
      onSuppressed: (count) => this.o.logger.warn({ ...this.where(), count }, `${what} not logged one by one`),
    });
  }

  private where(): { protocol: string; remote: string; device?: string } {
    return {
      protocol: this.o.protocol.name,
      remote: this.remote,
      ...(this.identity !== undefined && { device: this.identity }),
    };
  }

  private now(): number {
    return this.o.clock.now().getTime();
  }

  private onClose(): void {
    this.closed = true;
    this.stopAwaitingIdentity();
    this.queue.length = this.arrivals.length = 0;
    this.o.counts?.disconnected();
    this.malformedLog?.flush();
    this.checksumLog?.flush();
    this.refusedLog?.flush();
    this.commands?.close();
    if (!this.quiet) {
      this.o.logger.info(
        {
          ...this.where(),
          reason: this.closeReason ?? 'connection closed',
          frames: this.frames,
          seconds: Math.round((this.now() - this.openedAt) / 1000),
        },
        'tracker disconnected',
      );
    }
    if (this.identity) this.o.registry.release(this.identity, this);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    if (this.unprovenBytes === 0 && this.frames === 0 && this.o.plainPort && looksLikeTlsHello(chunk)) {
      this.o.plainPort.refusals.refused(
        this.socket.remoteAddress,
        `a TLS handshake on a plain port (TLS trackers connect to ${this.o.plainPort.tlsPortSetting})`,
        { protocol: this.o.protocol.name },
      );
      this.close('TLS handshake on a plain port');
      return;
    }
    this.unprovenBytes += chunk.length;
    let frames: Buffer[];
    try {
      frames = this.splitter.push(chunk);
    } catch (e) {
      this.malformed(e, chunk);
      if (!(e instanceof ProtocolError) || e.framingLost) this.close('framing lost');
      return;
    }
    if (frames.length) {
      const arrivedAt = monotonicMs();
      for (const frame of frames) {
        this.queue.push(frame);
        this.arrivals.push(arrivedAt);
      }
      if (this.queue.length > (this.o.maxQueuedFrames ?? 256)) this.socket.pause();
      this.pump().catch((e: unknown) => this.internalError(e));
    } else {
      this.checkGarbage();
    }
  }

  /** Closes a connection whose bytes, all decoded, held no good frame for too long. */
  private checkGarbage(): void {
    if (this.closed || this.pumping || this.queue.length) return;
    if (this.unprovenBytes > garbageLimitBytes(this.o.protocol)) {
      this.o.logger.warn(
        { ...this.where(), bytes: this.unprovenBytes },
        'closing a tracker connection that sends no good frame',
      );
      this.close('no good frame');
    }
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length && !this.closed) {
        await this.handle(this.queue.shift()!, this.arrivals.shift()!);
        if (this.socket.isPaused() && this.queue.length < 16) this.socket.resume();
      }
    } finally {
      this.pumping = false;
    }
    this.checkGarbage();
  }

  /** A bug, not the tracker's fault: logged, and this connection (only) is closed. */
  private internalError(e: unknown): void {
    this.o.logger.error({ ...this.where(), err: e }, 'tracker connection failed unexpectedly; closing it');
    this.close('internal error');
  }

  /** A frame that cannot be decoded: logged; a decoder bug (not a ProtocolError) closes the connection. */
  private undecodable(e: unknown, frame: Buffer): void {
    this.malformed(e, frame);
    if (!(e instanceof ProtocolError)) this.close('decoder failure');
  }

  private malformed(e: unknown, frame: Buffer): void {
    this.malformedRun++;
    logMalformed(this.o, (this.malformedLog ??= this.budget('malformed frames')), this.now(), this.where(), e, frame);
    if (this.malformedRun >= MAX_MALFORMED_RUN) {
      this.o.logger.warn(
        { ...this.where(), malformed: this.malformedRun },
        'closing a tracker connection that sends only malformed frames',
      );
      this.close('only malformed frames');
    }
  }

  private decoded(result: DecodeResult, frame: Buffer): void {
    this.frames++;
    if (result.checksumError && (this.checksumLog ??= this.budget('checksum mismatches')).take(this.now())) {
      this.o.logger.warn(
        { ...this.where(), reason: result.checksumError, excerpt: frame.subarray(0, 32).toString('hex') },
        'checksum mismatch: frame accepted (TRACKGATE_CHECKSUM=accept)',
      );
    }
    if (result.warnings?.length)
      this.o.logger.debug({ ...this.where(), warnings: result.warnings }, 'frame accepted with warnings');
  }

  /**
   * A good frame: one of a known device that reports something or asks for an answer. Garbage
   * can look like a ping, an unrecognised sentence or a frame of no device, never like this.
   */
  private proven(): void {
    this.malformedRun = 0;
    this.unprovenBytes = 0;
  }

  /** Delivers the identified device's queued commands (a command was just created for it). */
  deliverCommands(): void {
    this.commands?.kick();
  }

  private forgetIdentity(): void {
    this.commands?.close();
    this.commands = undefined;
    if (this.identity === undefined) return;
    this.o.registry.release(this.identity, this);
    this.identity = undefined;
    this.profile = {};
    if (!this.closed) this.awaitIdentity();
  }

  private commandsOf(deviceId: string): ConnectionCommands {
    return new ConnectionCommands({
      commands: this.o.commands,
      protocol: this.o.protocol,
      protocolName: this.o.protocol.name,
      clock: this.o.clock,
      logger: this.o.logger,
      waitMs: this.o.commandWaitMs,
      deviceId,
      context: () => ({ ...this.profile, session: this.session }),
      write: (bytes) => {
        if (this.closed) return false;
        this.socket.write(bytes);
        return true;
      },
      where: () => this.where(),
    });
  }

  private async handle(frame: Buffer, arrivedAt: number): Promise<void> {
    const now = this.o.clock.now();
    const decode = (profile: DecoderProfile): DecodeResult =>
      this.o.protocol.decode!(frame, {
        now,
        transport: 'tcp',
        deviceId: this.identity,
        ...profile,
        checksum: this.o.checksum,
        session: this.session,
      });
    const known: KnownDevice = { identity: this.identity, ...this.profile };
    const raw = { bytes: frame, text: this.o.protocol.frameEncoding === 'text', receivedAt: now };
    let result: DecodeResult | undefined;
    try {
      result = decode(this.profile);
    } catch (e) {
      this.undecodable(e, frame);
      await showUndecodable(this.o, this.o.protocol.name, e, known, this.socket.remoteAddress ?? null, raw);
      return;
    }
    this.decoded(result, frame);
    // What is needed of the decoded frame once it is stored; the frame itself is let go before
    // the wait (an async function keeps its variables, even unused ones, until it returns).
    const reportsOrAsks = result.messages.length > 0 || result.replies.length > 0;
    const stored = handleDecoded(
      this.o,
      this.o.protocol.name,
      result,
      known,
      this.socket.remoteAddress ?? null,
      decode,
      raw,
    );
    result = undefined;
    const outcome = await stored;
    if (this.closed) return;
    switch (outcome.kind) {
      case 'ok':
        await this.storedOk(outcome, reportsOrAsks, arrivedAt);
        return;
      case 'rejected':
      case 'invalid':
        this.refusedIdentity(outcome);
        return;
      case 'failed': {
        // Frames queued behind this one are not handled either: an acknowledgement of a later
        // frame must never be taken for this one's (Teltonika acks carry only a count).
        const dropped = this.queue.length;
        this.queue.length = this.arrivals.length = 0;
        // our failure, not the tracker's: a known device keeps its connection while it resends
        if (this.identity !== undefined) this.proven();
        logStorageFailure(this.o.storageFailures, this.o.logger, this.now(), outcome.error, {
          ...this.where(),
          dropped,
        });
        return;
      }
      case 'malformed':
        this.undecodable(outcome.error, frame);
        return;
      case 'anonymous':
        return;
    }
  }

  /** A frame stored (or with nothing to store): the identity it proved, its replies, its command answers. */
  private async storedOk(
    outcome: Extract<FrameOutcome, { kind: 'ok' }>,
    reportsOrAsks: boolean,
    arrivedAt: number,
  ): Promise<void> {
    const identified = this.identity !== outcome.device.id;
    if (identified) {
      this.forgetIdentity();
      this.identity = outcome.device.id;
      this.o.registry.claim(outcome.device.id, this);
      this.stopAwaitingIdentity();
      this.o.logger.info(this.where(), 'tracker identified');
      this.commands = this.commandsOf(outcome.device.id);
    }
    this.profile = profileOf(outcome.device);
    if (reportsOrAsks || outcome.commandResults) this.proven();
    for (const reply of outcome.replies) this.socket.write(reply);
    if (outcome.replies.length) this.o.counts?.acknowledged(arrivedAt);
    if (outcome.commandResults) {
      await this.commands?.answer(outcome.commandResults).catch((e: unknown) => {
        if (!this.quiet)
          this.o.logger.warn({ ...this.where(), err: (e as Error).message }, 'recording a command answer failed');
      });
    }
    // after the login's reply: the queued commands follow it on the wire
    if (identified) this.commands?.kick();
  }

  /** A frame of an unknown, expired or invalid identity: nothing stored. */
  private refusedIdentity(outcome: Extract<FrameOutcome, { kind: 'rejected' | 'invalid' }>): void {
    // Whatever this connection was before, it is not a known device now: a later frame
    // without an identity of its own must not be stored under an earlier one.
    this.forgetIdentity();
    if ((this.refusedLog ??= this.budget('frames of unknown, expired or invalid identities')).take(this.now())) {
      if (outcome.kind === 'rejected')
        this.o.logger.info(
          { ...this.where(), identifier: outcome.identity },
          'frame of an unknown or expired device: not stored',
        );
      else
        this.o.logger.warn(
          { ...this.where(), identifier: outcome.identity.slice(0, 80), reason: outcome.reason },
          'frame with an invalid identity: not stored',
        );
    }
    if (outcome.rejection) this.socket.write(outcome.rejection);
  }
}
