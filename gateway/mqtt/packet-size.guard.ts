/**
 * The largest MQTT packet a client may send, enforced from the fixed header before the packet is
 * read. aedes 1.2 gives its parser (mqtt-packet 9) no size limit: the parser appends bytes until
 * the declared Remaining Length has arrived, so a CONNECT declaring 268 MB would be buffered
 * before any login. The guard meters what aedes reads from the socket (TCP, TLS or WebSocket),
 * walks the packet boundaries as the bytes pass (MQTT 3.1.1 §2.2: one header byte, a Remaining
 * Length of 1–4 bytes, 7 bits each, then the body) and destroys the connection as soon as a
 * declared size exceeds the limit, before the body arrives. Bytes pass through unchanged and uncopied.
 */
import type { Readable } from 'node:stream';

/** MQTT 3.1.1 §2.2.3: a Remaining Length has at most 4 bytes (268,435,455). */
const MAX_LENGTH_BYTES = 4;

const ignoreError = (): void => {};

export class PacketTooLarge extends Error {
  constructor(
    readonly declaredBytes: number,
    readonly maxBytes: number,
  ) {
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
 * Guards a client's stream in place for aedes, which takes its bytes only with `read()` when the
 * stream is readable (aedes 1.2 lib/client.js): every chunk `read()` returns first passes the
 * meter, and a packet declared larger than `maxBytes` destroys the stream with PacketTooLarge
 * (after `onTooLarge`) without handing any of that chunk on. Until aedes reads, the bytes wait in
 * the stream's own buffer, which stops taking from the network at its high-water mark. No stream
 * is put in front of the socket: one per client cost 1.1–1.5 KiB of each idle client's memory
 * (two stream states, their buffers and closures; BENCHMARKS.md) and a pass through the
 * stream machinery for every chunk each way.
 * Returns the stream it was given.
 */
export function guardPacketSize<S extends Readable>(
  stream: S,
  maxBytes: number,
  onTooLarge: (e: PacketTooLarge) => void,
): S {
  const meter = new PacketSizeMeter(maxBytes);
  // aedes listens for the socket's errors while its client lives; this keeps one that comes when
  // nothing else listens (before aedes has the socket, or after) from being thrown
  stream.on('error', ignoreError);
  const read = stream.read;
  let refused = false;
  stream.read = function guardedRead(this: S, size?: number) {
    const chunk = read.call(this, size) as Buffer | null;
    if (chunk === null || refused) return null;
    const declared = meter.push(chunk);
    if (declared === 0) return chunk;
    refused = true;
    const e = new PacketTooLarge(declared, maxBytes);
    onTooLarge(e);
    this.destroy(e);
    return null;
  };
  return stream;
}
