/**
 * The core link's side of "where is device X" (server/device-locator.ts asks the link): which
 * gateway process holds each device's live TCP connection, and which last heard a UDP device.
 */
import { UDP_LISTEN_MS } from '../udp/udp-listener.js';
import { HEARD_EVERY_MS } from './ipc.messages.js';

/** the UDP devices remembered at most: past it the map starts again (each is told again within HEARD_EVERY_MS) */
const MAX_HEARD = 100_000;

export class LinkHolders<C> {
  /** device -> the gateway process that holds its live TCP connection */
  private readonly holders = new Map<string, C>();
  /** UDP device -> the gateway process that last heard it, and when */
  private readonly heard = new Map<string, { c: C; at: number }>();

  /** The device connected to `c`: the gateway process that held it before, if another (its connection there is stale). */
  online(deviceId: string, c: C): C | undefined {
    const before = this.holders.get(deviceId);
    this.holders.set(deviceId, c);
    return before !== c ? before : undefined;
  }

  offline(deviceId: string, c: C): void {
    if (this.holders.get(deviceId) === c) this.holders.delete(deviceId);
  }

  heardBy(deviceId: string, c: C, nowMs: number): void {
    if (this.heard.size > MAX_HEARD) this.heard.clear();
    this.heard.set(deviceId, { c, at: nowMs });
  }

  /** The gateway process that can deliver to the device now: its TCP connection's, or one that heard it while it still listens. */
  locate(deviceId: string, nowMs: number): C | undefined {
    const holder = this.holders.get(deviceId);
    if (holder) return holder;
    // a UDP device listens a moment after its datagram; the gateway process that heard it checks exactly
    const h = this.heard.get(deviceId);
    return h && nowMs - h.at < UDP_LISTEN_MS - HEARD_EVERY_MS ? h.c : undefined;
  }

  holderOf(deviceId: string): C | undefined {
    return this.holders.get(deviceId);
  }

  /** Forgets the device (it connected elsewhere): the gateway process that held its connection, if any. */
  drop(deviceId: string): C | undefined {
    this.heard.delete(deviceId);
    const holder = this.holders.get(deviceId);
    this.holders.delete(deviceId);
    return holder;
  }

  /** Forgets a gateway process gone: how many devices it held. */
  forget(c: C): number {
    let dropped = 0;
    for (const [deviceId, holder] of this.holders) {
      if (holder === c) {
        this.holders.delete(deviceId);
        dropped++;
      }
    }
    for (const [deviceId, h] of this.heard) if (h.c === c) this.heard.delete(deviceId);
    return dropped;
  }

  devices(): string[] {
    return [...this.holders.keys()];
  }
}
