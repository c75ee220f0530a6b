/**
 * The largest MQTT packet a client may send, enforced from the fixed header before the packet is
 * read. aedes 1.2 gives its parser (mqtt-packet 9) no size limit: the parser appends bytes until
 * the declared Remaining Length has arrived, so a CONNECT declaring 268 MB would be buffered
 * before any login. This Duplex sits between the socket (TCP, TLS or WebSocket) and aedes, walks
 * the packet boundaries as the bytes pass (MQTT 3.1.1 §2.2: one header byte, a Remaining Length
 * of 1–4 bytes, 7 bits each, then the body) and destroys the connection as soon as a declared
 * size exceeds the limit, before the body arrives. Bytes pass through unchanged and uncopied.
 */
import { Duplex } from 'node:stream';

/** MQTT 3.1.1 §2.2.3: a Remaining Length has at most 4 bytes (268,435,455). */
const MAX_LENGTH_BYTES = 4;

export class PacketTooLarge extends Error {
  constructor(readonly declaredBytes: number, readonly maxBytes: number) {
    super(`MQTT packet of ${declaredBytes} bytes or more declared; the limit is ${maxBytes} bytes`);
    this.name = 'PacketTooLarge';
  }
}

/**
 * Follows packet boundaries in a byte stream; `push(chunk)` answers the declared size (fixed
 * header included) of the first packet over the limit, or 0 while every packet fits.
 */
export class PacketSizeMeter {
  /** 'header': next byte starts a packet; 'length': in the Remaining Length; 'body': skipping */
  private state: 'header' | 'length' | 'body' = 'header';
  private length = 0;
  private lengthBytes = 0;
  private multiplier = 1;
  private left = 0;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): number {
    let i = 0;
    while (i < chunk.length) {
      if (this.state === 'body') {
        const skip = Math.min(this.left, chunk.length - i);
        i += skip;
        this.left -= skip;
        if (this.left === 0) this.state = 'header';
      } else if (this.state === 'header') {
        i++;
        this.state = 'length';
        this.length = 0;
        this.lengthBytes = 0;
        this.multiplier = 1;
      } else {
        const b = chunk[i++];
        this.length += (b & 0x7f) * this.multiplier;
        this.multiplier *= 128;
        this.lengthBytes++;
        // the size so far only grows with later bytes: refuse as soon as it is over
        const size = 1 + this.lengthBytes + this.length;
        if (size > this.maxBytes) return size;
        if (b & 0x80) {
          // a fifth length byte is malformed (the parser refuses it too)
          if (this.lengthBytes >= MAX_LENGTH_BYTES) return Number.MAX_SAFE_INTEGER;
          continue;
        }
        this.left = this.length;
        this.state = this.left > 0 ? 'body' : 'header';
      }
    }
    return 0;
  }
}

/**
 * Wraps a client's stream; a packet declared larger than `maxBytes` destroys both with
 * PacketTooLarge (after `onTooLarge`), without passing any of its bytes on.
 */
export function guardPacketSize(inner: Duplex, maxBytes: number, onTooLarge: (e: PacketTooLarge) => void): Duplex {
  const meter = new PacketSizeMeter(maxBytes);
  let writeDone: ((err?: Error | null) => void) | null = null;

  const outer = new Duplex({
    allowHalfOpen: false,
    read() {
      inner.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      if (inner.write(chunk)) callback();
      else writeDone = callback;
    },
    // aedes (mqtt-packet) corks this stream and writes a packet in several small pieces (a PUBACK in
    // three): what was written while corked goes to the socket as one write, not one system call per piece
    writev(chunks, callback) {
      const ok = chunks.length === 1 ? inner.write(chunks[0].chunk) : inner.write(Buffer.concat(chunks.map((c) => c.chunk as Buffer)));
      if (ok) callback();
      else writeDone = callback;
    },
    final(callback) {
      inner.end();
      callback();
    },
    destroy(err, callback) {
      const done = writeDone;
      writeDone = null;
      done?.(err ?? new Error('connection closed'));
      inner.destroy();
      callback(err);
    },
  });

  // aedes listens for errors on `outer` while the client lives; this keeps a late one (the inner
  // stream failing after aedes let go) from being thrown as an unhandled 'error' event
  outer.on('error', () => {});
  inner.on('data', (chunk: Buffer) => {
    const declared = meter.push(chunk);
    if (declared > 0) {
      const e = new PacketTooLarge(declared, maxBytes);
      onTooLarge(e);
      outer.destroy(e);
      return;
    }
    if (!outer.push(chunk)) inner.pause();
  });
  inner.on('drain', () => {
    const done = writeDone;
    writeDone = null;
    done?.();
  });
  inner.on('end', () => outer.push(null));
  inner.on('error', (err) => outer.destroy(err));
  inner.on('close', () => {
    if (!outer.destroyed) outer.destroy();
  });
  return outer;
}
