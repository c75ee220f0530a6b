/** A raw TCP tracker for tests: writes bytes, waits for exact reply bytes. */
import net from 'node:net';
import tls from 'node:tls';
import { teltonikaLogin } from './frames.js';
import { PATIENCE_MS } from './wait.js';

export class TrackerClient {
  private received = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.received = Buffer.concat([this.received, d]);
      this.waiters.splice(0).forEach((w) => w());
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiters.splice(0).forEach((w) => w());
    });
    socket.on('error', () => {});
  }

  static connect(port: number): Promise<TrackerClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(new TrackerClient(s)));
      s.once('error', reject);
    });
  }

  /** A tracker over TLS (TRACKGATE_<P>_TLS_PORT), trusting `ca`; resolves once the handshake is done. */
  static connectTls(port: number, ca: string | Buffer): Promise<TrackerClient> {
    return new Promise((resolve, reject) => {
      const s = tls.connect({ port, host: '127.0.0.1', ca, servername: 'localhost' }, () =>
        resolve(new TrackerClient(s)),
      );
      s.once('error', reject);
    });
  }

  /** The SHA-256 fingerprint of the certificate a TLS server presented (undefined on plain TCP). */
  peerFingerprint(): string | undefined {
    return this.socket instanceof tls.TLSSocket ? this.socket.getPeerCertificate().fingerprint256 : undefined;
  }

  write(b: Buffer | string): void {
    this.socket.write(b);
  }

  /** Resolves with the next `n` bytes received, or rejects after `ms`. */
  async read(n: number, ms = PATIENCE_MS): Promise<Buffer> {
    const deadline = Date.now() + ms;
    while (this.received.length < n) {
      if (this.closed) throw new Error(`connection closed after ${this.received.length} of ${n} bytes`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${n} bytes (have ${this.received.toString('hex')})`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    const out = this.received.subarray(0, n);
    this.received = this.received.subarray(n);
    return out;
  }

  /** Asserts nothing arrives within `ms`. */
  async nothingFor(ms: number): Promise<boolean> {
    await new Promise((r) => setTimeout(r, ms));
    return this.received.length === 0;
  }

  waitClosed(ms = PATIENCE_MS): Promise<boolean> {
    if (this.closed) return Promise.resolve(true);
    return new Promise((r) => {
      const t = setTimeout(() => r(false), ms);
      this.socket.once('close', () => {
        clearTimeout(t);
        r(true);
      });
    });
  }

  end(): void {
    this.socket.destroy();
  }
}

/** Connects as a Teltonika tracker and logs in as `imei` (the one-byte `01` reply is read); closed when the test ends. */
export async function teltonikaSession(
  t: { teardown(fn: () => unknown): void },
  port: number,
  imei: string,
): Promise<TrackerClient> {
  const c = await TrackerClient.connect(port);
  t.teardown(() => c.end());
  c.write(teltonikaLogin(imei));
  const reply = await c.read(1);
  if (reply[0] !== 1) throw new Error(`login refused: ${reply.toString('hex')}`);
  return c;
}

/** Reads one Codec 12 frame the server sent and returns its command text (type 0x05 checked). */
export async function readTeltonikaCommand(c: TrackerClient, ms = PATIENCE_MS): Promise<string> {
  const head = await c.read(8, ms);
  const frame = Buffer.concat([head, await c.read(head.readUInt32BE(4) + 4, ms)]);
  if (frame[8] !== 0x0c || frame[10] !== 0x05) throw new Error(`not a Codec 12 command: ${frame.toString('hex')}`);
  return frame.toString('latin1', 15, 15 + frame.readUInt32BE(11));
}
