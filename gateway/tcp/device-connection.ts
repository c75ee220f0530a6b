/**
 * One tracker's TCP connection: bytes -> splitter -> frames, processed strictly in order;
 * acknowledgements are written only after what they acknowledge is stored. Memory stays bounded:
 * the splitter holds at most one frame, and reading pauses while too many frames wait.
 */
import type { Socket } from 'node:net';
import { ProtocolError, type DecodeContext, type FrameSplitter, type ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import type { ConnectionRegistry } from './connection-registry.js';
import { handleDecoded, type GatewayDeps } from './frame-handler.js';

export interface ConnectionOptions extends GatewayDeps {
  protocol: ProtocolModule;
  registry: ConnectionRegistry<DeviceConnection>;
  clock: Clock;
  checksum: 'accept' | 'strict';
  idleTimeoutMs: number;
  /** frames waiting beyond this pause reading */
  maxQueuedFrames?: number;
}

export class DeviceConnection {
  private readonly splitter: FrameSplitter;
  private readonly session: Record<string, unknown> = {};
  private readonly queue: Buffer[] = [];
  private readonly remote: string;
  private identity?: string;
  private pumping = false;
  private closed = false;
  private malformed = 0;

  constructor(private readonly socket: Socket, private readonly o: ConnectionOptions) {
    this.splitter = o.protocol.createSplitter!();
    this.remote = `${socket.remoteAddress}:${socket.remotePort}`;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    socket.setTimeout(o.idleTimeoutMs, () => this.close('idle timeout'));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => o.logger.debug({ protocol: o.protocol.name, remote: this.remote, err: err.message }, 'tracker socket error'));
    socket.on('close', () => {
      this.closed = true;
      this.queue.length = 0;
      if (this.identity) o.registry.release(this.identity, this);
    });
  }

  close(reason: string): void {
    if (this.closed) return;
    this.o.logger.debug({ protocol: this.o.protocol.name, remote: this.remote, device: this.identity, reason }, 'closing tracker connection');
    this.closed = true;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.splitter.push(chunk);
    } catch (e) {
      this.logMalformed(e, chunk);
      if (!(e instanceof ProtocolError) || e.framingLost) this.close('framing lost');
      return;
    }
    if (frames.length === 0) return;
    this.queue.push(...frames);
    if (this.queue.length > (this.o.maxQueuedFrames ?? 256)) this.socket.pause();
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length && !this.closed) {
        await this.handle(this.queue.shift()!);
        if (this.socket.isPaused() && this.queue.length < 16) this.socket.resume();
      }
    } finally {
      this.pumping = false;
    }
  }

  private logMalformed(e: unknown, frame: Buffer): void {
    this.malformed++;
    const excerpt = e instanceof ProtocolError ? e.excerpt : frame.subarray(0, 32).toString('hex');
    this.o.logger.warn({ protocol: this.o.protocol.name, remote: this.remote, device: this.identity, excerpt, reason: (e as Error).message }, 'malformed frame');
  }

  private async handle(frame: Buffer): Promise<void> {
    const ctx: DecodeContext = { now: this.o.clock.now(), transport: 'tcp', deviceId: this.identity, checksum: this.o.checksum, session: this.session };
    let result;
    try {
      result = this.o.protocol.decode!(frame, ctx);
    } catch (e) {
      this.logMalformed(e, frame);
      if (!(e instanceof ProtocolError)) this.close('decoder failure');
      return;
    }
    if (result.warnings?.length) this.o.logger.debug({ protocol: this.o.protocol.name, remote: this.remote, warnings: result.warnings }, 'frame accepted with warnings');
    const outcome = await handleDecoded(this.o, this.o.protocol.name, result, { identity: this.identity }, this.socket.remoteAddress ?? null);
    if (this.closed) return;
    switch (outcome.kind) {
      case 'ok':
        if (this.identity !== outcome.device.id) {
          if (this.identity) this.o.registry.release(this.identity, this);
          this.identity = outcome.device.id;
          this.o.registry.claim(outcome.device.id, this);
        }
        for (const reply of outcome.replies) this.socket.write(reply);
        return;
      case 'rejected':
        this.o.logger.info({ protocol: this.o.protocol.name, remote: this.remote, identifier: outcome.identity }, 'frame of an unknown or expired device: not stored');
        if (this.identity === outcome.identity) {
          this.o.registry.release(this.identity, this);
          this.identity = undefined;
        }
        if (outcome.rejection) this.socket.write(outcome.rejection);
        return;
      case 'failed':
        this.o.logger.error({ protocol: this.o.protocol.name, remote: this.remote, device: this.identity, err: outcome.error }, 'storing failed: not acknowledged, the tracker will resend');
        return;
      case 'anonymous':
        return;
    }
  }
}
