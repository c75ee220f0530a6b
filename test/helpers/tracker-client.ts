/** A raw TCP tracker for tests: writes bytes, waits for exact reply bytes. */
import net from 'node:net';

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

  write(b: Buffer | string): void {
    this.socket.write(b);
  }

  /** Resolves with the next `n` bytes received, or rejects after `ms`. */
  async read(n: number, ms = 5000): Promise<Buffer> {
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

  waitClosed(ms = 5000): Promise<boolean> {
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
