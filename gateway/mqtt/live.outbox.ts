/**
 * One live subscriber's bounded queue of packets on their way to its socket.
 * Why not let aedes deliver directly: a delivery to a socket that does not drain holds one of the
 * emitter's few slots, so one subscriber that stops reading stalls everyone and the emitter's
 * queue grows without bound. Here a packet is only queued (the slot comes back at once) and
 * written with `client.publish`, at most `inFlightBytes` at a time. A full queue drops its OLDEST
 * packets: the feed is QoS 0, and a newer position supersedes an older one.
 */
import type { PublishPacket } from 'aedes';

export interface OutboxLimits {
  /** packets waiting per subscriber */
  maxMessages: number;
  /** payload bytes waiting per subscriber */
  maxBytes: number;
  /** payload bytes handed to the socket and not yet written out */
  inFlightBytes: number;
}

/**
 * 10,000 packets hold two full REST batches (5,000 locations each), so a subscriber that keeps up
 * loses nothing to a burst; 4 MiB bounds a subscriber's cost when messages are large.
 */
export const DEFAULT_OUTBOX_LIMITS: OutboxLimits = {
  maxMessages: 10_000,
  maxBytes: 4 * 1024 * 1024,
  inFlightBytes: 1024 * 1024,
};

export type Send = (packet: PublishPacket, done: (err?: Error) => void) => void;

export class LiveOutbox {
  /** waiting packets are queue[head..] */
  private queue: PublishPacket[] = [];
  private head = 0;
  private bytes = 0;
  private sendingBytes = 0;
  /** dropping since the queue was last empty */
  private overflowing = false;
  /** packets dropped since the subscriber connected */
  dropped = 0;

  constructor(
    private readonly send: Send,
    private readonly isClosed: () => boolean,
    private readonly limits: OutboxLimits = DEFAULT_OUTBOX_LIMITS,
    /** called at the first packet dropped since the queue was last empty (to log once per episode) */
    private readonly onOverflow: (droppedInAll: number) => void = () => {},
  ) {}

  get waiting(): number {
    return this.queue.length - this.head;
  }

  push(packet: PublishPacket): void {
    if (this.isClosed()) return;
    this.queue.push(packet);
    this.bytes += packet.payload.length;
    let droppedNow = 0;
    while (this.waiting > 0 && (this.waiting > this.limits.maxMessages || this.bytes > this.limits.maxBytes)) {
      this.take();
      droppedNow++;
    }
    if (droppedNow > 0) {
      this.dropped += droppedNow;
      if (!this.overflowing) this.onOverflow(this.dropped);
      this.overflowing = true;
    }
    this.pump();
  }

  /** Forgets what waits (e.g. packets admitted under a scope the user no longer has). */
  clear(): void {
    this.queue = [];
    this.head = 0;
    this.bytes = 0;
  }

  private take(): PublishPacket {
    const p = this.queue[this.head]!;
    this.queue[this.head] = undefined as unknown as PublishPacket;
    this.head++;
    this.bytes -= p.payload.length;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return p;
  }

  private pump(): void {
    while (this.sendingBytes < this.limits.inFlightBytes && this.waiting > 0) {
      if (this.isClosed()) {
        this.clear();
        return;
      }
      const packet = this.take();
      const size = packet.payload.length;
      this.sendingBytes += size;
      this.send(packet, () => {
        this.sendingBytes -= size;
        this.pump();
      });
    }
    if (this.waiting === 0) this.overflowing = false;
  }
}
