/**
 * The raw-frame feed (docs/contract.md §3 "live/{deviceId}/frames"): every frame a tracker sends, as
 * frame-handler.ts handled it, offered to whoever listens (the MQTT live feed attaches itself in
 * main.ts; with Redis, frame-relay.redis.ts carries frames to listeners on other instances). Ingest must not pay for it: `wants()` is asked first, and nothing is built when nobody
 * listens to frames of that account; a frame is cut to MAX_FRAME_BYTES and its decoded messages to
 * MAX_DECODED_MESSAGES, so one message stays small whatever the tracker sends.
 */
import type { DecodeResult } from '../../protocols/types.js';
import { messageView, type MessageView } from '../../protocols/shared/message.view.js';

export const MAX_FRAME_BYTES = 2048;
export const MAX_DECODED_MESSAGES = 20;

/** One frame as `live/{deviceId}/frames` (and `live/unknown/frames`) carries it. */
export interface LiveFrame {
  receivedAt: string;
  protocol: string;
  remote: string | null;
  /** binary protocols: the frame's bytes in hex */
  hex?: string;
  /** text protocols (and HTTP requests): the frame as text */
  text?: string;
  /** the frame's length in bytes, and whether hex/text was cut to MAX_FRAME_BYTES */
  length: number;
  truncated: boolean;
  /**
   * what the decoder returned: identity, messages (at most MAX_DECODED_MESSAGES; positions under the
   * REST names, as `trackgate decode` prints them), the command answers it found
   */
  decoded: { identity?: string; messages: MessageView[]; messageCount: number; commandResults?: unknown[] } | null;
  /** hex of what was written back ('' when nothing) */
  reply: string;
  /** how the frame was handled: ok, unknown, malformed (cannot be read: nothing stored or acknowledged) */
  outcome: string;
  /** outcome malformed: why the frame cannot be read, as the log says it */
  error?: string;
}

/** Where frames go: `accountId` null is a frame of an identifier that matches no device. */
export interface FrameSink {
  wants(accountId: string | null): boolean;
  offer(accountId: string | null, deviceId: string | null, frame: LiveFrame): void;
  /** the accounts whose frames this sink's listeners want, and whether unknown identifiers' (the live feed: for other instances) */
  interest?(): { accounts: string[]; unknown: boolean };
}

/** The raw bytes of a frame and how to show them. */
export interface RawFrame {
  bytes: Buffer;
  /** shown as text (text protocols, HTTP requests) rather than hex */
  text: boolean;
  receivedAt: Date;
}

/** The one tap the tracker listeners share; each MQTT gateway attaches its sink while it runs, and the Redis relay (frame-relay.redis.ts) its own. */
export class FrameTap {
  private readonly sinks = new Map<FrameSink, { relay: boolean }>();

  /** Adds a sink (a relay to other instances: `relay`, never given their frames back); answers its removal. */
  attach(sink: FrameSink, options: { relay?: boolean } = {}): () => void {
    this.sinks.set(sink, { relay: options.relay ?? false });
    return () => this.sinks.delete(sink);
  }

  /** Whether anyone, here or on another instance, listens to frames of this account (null: of unknown identifiers). */
  wants(accountId: string | null): boolean {
    for (const sink of this.sinks.keys()) if (sink.wants(accountId)) return true;
    return false;
  }

  /** Whether anyone, here or on another instance, listens to frames of any account or of unknown identifiers (a sink that cannot say: yes). */
  listening(): boolean {
    for (const sink of this.sinks.keys()) {
      if (!sink.interest) return true;
      const i = sink.interest();
      if (i.unknown || i.accounts.length > 0) return true;
    }
    return false;
  }

  /** Offers a frame to the sinks that want it; a frame relayed from another instance (`remote`) only to this instance's listeners. */
  offer(accountId: string | null, deviceId: string | null, frame: LiveFrame, remote = false): void {
    for (const [sink, { relay }] of this.sinks) {
      if (remote && relay) continue;
      try {
        if (sink.wants(accountId)) sink.offer(accountId, deviceId, frame);
      } catch {
        // a listener's failure never reaches ingest
      }
    }
  }

  /** What this instance's listeners want, for the relay to announce to the others. */
  localInterest(): { accounts: string[]; unknown: boolean } {
    return this.interestOf(false);
  }

  /** What every listener wants, here and (through the relay) on other instances: for gateway processes, which offer only these frames. */
  interest(): { accounts: string[]; unknown: boolean } {
    return this.interestOf(true);
  }

  private interestOf(relayed: boolean): { accounts: string[]; unknown: boolean } {
    const accounts = new Set<string>();
    let unknown = false;
    for (const [sink, { relay }] of this.sinks) {
      if ((relay && !relayed) || !sink.interest) continue;
      const i = sink.interest();
      i.accounts.forEach((a) => accounts.add(a));
      unknown ||= i.unknown;
    }
    return { accounts: [...accounts], unknown };
  }
}

/**
 * Builds the feed's record of a frame (called only when someone listens); `error`: why it cannot be
 * read (outcome malformed; `decoded` then holds at most the identity the frame names).
 */
export function liveFrame(
  protocol: string,
  raw: RawFrame,
  remote: string | null,
  decoded: DecodeResult | null,
  replies: Buffer[],
  outcome: string,
  error?: string,
): LiveFrame {
  const cut = raw.bytes.length > MAX_FRAME_BYTES ? raw.bytes.subarray(0, MAX_FRAME_BYTES) : raw.bytes;
  return {
    receivedAt: raw.receivedAt.toISOString(),
    protocol,
    remote,
    ...(raw.text ? { text: cut.toString('latin1') } : { hex: cut.toString('hex') }),
    length: raw.bytes.length,
    truncated: cut.length < raw.bytes.length,
    decoded: decoded && {
      ...(decoded.identity !== undefined && { identity: decoded.identity }),
      messages: decoded.messages.slice(0, MAX_DECODED_MESSAGES).map(messageView),
      messageCount: decoded.messages.length,
      ...(decoded.commandResults?.length && { commandResults: decoded.commandResults }),
    },
    reply: Buffer.concat(replies).toString('hex'),
    outcome,
    ...(error !== undefined && { error }),
  };
}
