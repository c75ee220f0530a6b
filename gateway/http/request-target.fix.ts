/**
 * Requests whose target has no leading slash (`GET ?id=…&lat=… HTTP/1.1`): Traccar's own load tool
 * (tools/test-generator.py, Python's http.client given `'?' + query`) and some tracker firmware send
 * them, and Traccar stores them. Node's HTTP parser refuses such a target before any handler runs
 * (HPE_INVALID_URL), so a connection whose first request line starts so is read through a stream
 * that writes the missing `/` into each request line, request after request (keep-alive and
 * pipelining included); every other connection goes to the HTTP server untouched.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/** the first line of a request longer than this is left to the HTTP server (which refuses it) */
const MAX_HEAD_BYTES = 16 * 1024;
const SPACE = 0x20;
const QUESTION = 0x3f;
const HEAD_END = /\r?\n\r?\n/;

/** `<METHOD> ?`: a request line whose target starts with the query */
function lacksSlash(head: Buffer, at: number): number | undefined {
  let i = at;
  while (i < head.length && head[i] >= 0x41 && head[i] <= 0x5a) i++; // the method, A-Z
  return i > at && head[i] === SPACE && head[i + 1] === QUESTION ? i + 1 : undefined;
}

/** Whether the bytes of a connection so far start with a request line of a target without its slash; undefined: not known yet. */
export function startsWithoutSlash(first: Buffer): boolean | undefined {
  const lineEnd = first.indexOf(0x0a);
  if (lineEnd < 0 && first.length < MAX_HEAD_BYTES) return undefined;
  return lacksSlash(first, leadingNewlines(first, 0)) !== undefined;
}

/** HTTP/1.1 lets a server skip empty lines before a request line (RFC 9112 2.2) */
function leadingNewlines(b: Buffer, at: number): number {
  let i = at;
  while (b[i] === 0x0d || b[i] === 0x0a) i++;
  return i;
}

/**
 * The request stream with a `/` written before each target that starts with `?`. Tracks where each
 * request ends (its head, then its Content-Length body); a chunked body, or a head longer than
 * MAX_HEAD_BYTES, ends the fixing: the rest goes through as it is.
 */
export class RequestTargetFixer {
  private held: Buffer = Buffer.alloc(0);
  private bodyLeft = 0;
  private passThrough = false;

  push(chunk: Buffer): Buffer {
    if (this.passThrough) return chunk;
    const out: Buffer[] = [];
    let rest = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = Buffer.alloc(0);
    while (rest.length) {
      if (this.bodyLeft > 0) {
        const n = Math.min(this.bodyLeft, rest.length);
        out.push(rest.subarray(0, n));
        this.bodyLeft -= n;
        rest = rest.subarray(n);
        continue;
      }
      const text = rest.toString('latin1');
      const end = HEAD_END.exec(text);
      if (!end) {
        if (rest.length > MAX_HEAD_BYTES) {
          this.passThrough = true;
          out.push(rest);
        } else {
          this.held = Buffer.from(rest);
        }
        break;
      }
      const headLength = end.index + end[0].length;
      const head = rest.subarray(0, headLength);
      const slashAt = lacksSlash(head, leadingNewlines(head, 0));
      if (slashAt === undefined) out.push(head);
      else out.push(head.subarray(0, slashAt), Buffer.from('/'), head.subarray(slashAt));
      const headers = text.slice(0, end.index);
      if (/^transfer-encoding:/im.test(headers)) {
        this.passThrough = true;
        out.push(rest.subarray(headLength));
        break;
      }
      this.bodyLeft = Number(/^content-length:\s*(\d+)\s*$/im.exec(headers)?.[1] ?? 0);
      rest = rest.subarray(headLength);
    }
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }
}

/**
 * The socket as the HTTP server reads it, through a RequestTargetFixer: what the server writes goes
 * to the socket as it is; the address, timeouts and closing are the socket's.
 */
export function fixedTargetStream(socket: Socket, first: Buffer): Duplex {
  const fixer = new RequestTargetFixer();
  const stream = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, encoding, callback) {
      socket.write(chunk, encoding, callback);
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(error, callback) {
      socket.destroy(error ?? undefined);
      callback(error);
    },
  });
  const push = (chunk: Buffer): void => {
    const fixed = fixer.push(chunk);
    if (fixed.length && !stream.push(fixed)) socket.pause();
  };
  socket.on('data', push);
  socket.on('end', () => stream.push(null));
  socket.on('close', () => stream.destroy());
  socket.on('error', (e) => stream.destroy(e));
  socket.on('timeout', () => stream.emit('timeout'));
  Object.defineProperties(stream, {
    remoteAddress: { get: () => socket.remoteAddress },
    remotePort: { get: () => socket.remotePort },
    remoteFamily: { get: () => socket.remoteFamily },
    localAddress: { get: () => socket.localAddress },
    localPort: { get: () => socket.localPort },
  });
  Object.assign(stream, {
    setTimeout: (ms: number, callback?: () => void) => {
      socket.setTimeout(ms, callback);
      return stream;
    },
    setNoDelay: (noDelay?: boolean) => {
      socket.setNoDelay(noDelay);
      return stream;
    },
    setKeepAlive: (enable?: boolean, delay?: number) => {
      socket.setKeepAlive(enable, delay);
      return stream;
    },
  });
  push(first);
  return stream;
}
