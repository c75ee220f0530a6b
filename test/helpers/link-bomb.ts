/**
 * The gateway link's bytes as a peer writes them (net-ipc's framing, docs/scaling.md "Scaling"), and the
 * link bomb of issue 36: a first message asking for compression and MessagePack, followed in the
 * same write by raw deflate that inflates to one huge MessagePack array. Before the guard, 64 KB
 * of it (66 million elements) cost the core over 1 GB of heap and seconds of its event loop: two
 * connections ended it with "heap out of memory". Used by the link tests and meant for the soak
 * benchmark (bench/soak.bench.ts).
 */
import net from 'node:net';
import { once } from 'node:events';
import { constants, deflateRawSync } from 'node:zlib';

/** net-ipc's length tag: the size in base 128, most significant first, the last byte's top bit set */
export function netIpcTag(size: number): Buffer {
  const tag = [(size & 127) + 128];
  for (let rest = Math.floor(size / 128); rest > 0; rest = Math.floor(rest / 128)) tag.push(rest & 127);
  return Buffer.from(tag.reverse());
}

/** one net-ipc message: its tag, then its bytes */
export const netIpcMessage = (payload: Buffer): Buffer => Buffer.concat([netIpcTag(payload.length), payload]);

/** net-ipc's first message (JSON, always): asks for compression and MessagePack, carrying `extras` (trackgate's hello: the secret) */
export function netIpcHello(
  extras: Record<string, unknown>,
  ask: { compress?: boolean; messagepack?: boolean } = { compress: true, messagepack: true },
): Buffer {
  return netIpcMessage(Buffer.from(JSON.stringify({ t: 0, d: { id: `bomb-${process.pid}`, ...ask, extras } })));
}

/** a MessagePack array32 of `elements` zeros (positive fixints), as raw deflate ending in a sync flush (what net-ipc's inflater takes) */
export function deflatedZeroArray(elements: number): Buffer {
  const packed = Buffer.alloc(5 + elements);
  packed[0] = 0xdd;
  packed.writeUInt32BE(elements, 1);
  return deflateRawSync(packed, { level: 9, strategy: constants.Z_RLE, finishFlush: constants.Z_SYNC_FLUSH });
}

export interface LinkBombOptions {
  /** elements of the array it inflates to (default 66,000,000: 64,170 bytes of deflate) */
  elements?: number;
  /** the secret presented (default a wrong one: the attack of a peer without it) */
  secret?: string;
}

/**
 * The bytes of one bomb connection, to write at once: net-ipc's `IPC` preamble, a hello asking for
 * compression and MessagePack, and one compressed message inflating to `elements` array elements.
 * With the defaults it stays under the 64 KiB the link takes before the secret is presented.
 */
export function linkBombBytes(o: LinkBombOptions = {}): Buffer {
  const hello = netIpcHello({ secret: o.secret ?? 'not-the-secret-of-this-link-0123456789', pid: process.pid });
  return Buffer.concat([Buffer.from('IPC'), hello, netIpcMessage(deflatedZeroArray(o.elements ?? 66_000_000))]);
}

/**
 * Writes `bytes` to the link at host:port in one write and resolves once the link closed the
 * connection, or with 'open' after `waitMs`.
 */
export async function sendLinkBytes(
  port: number,
  bytes: Buffer,
  host = '127.0.0.1',
  waitMs = 5000,
): Promise<'closed' | 'open'> {
  const socket = net.connect(port, host);
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const closed = once(socket, 'close').then(() => 'closed' as const);
  socket.write(bytes);
  // whatever the link answers is read and dropped: a full receive buffer must not hold the close back
  socket.resume();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    closed,
    new Promise<'open'>((r) => (timer = setTimeout(() => r('open'), waitMs))),
  ]);
  clearTimeout(timer);
  socket.destroy();
  return outcome;
}
