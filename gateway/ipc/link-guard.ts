/**
 * What a connection to the gateway link may send before and after it presents the secret.
 * net-ipc reads each message by the length its tag announces: a tag of more than 1 GiB made its
 * `socket.read` throw from an event handler (8 bytes from anyone who reached the port stopped the
 * core), and a smaller one made it buffer that much before anything was checked. The guard sits
 * on each socket before net-ipc sees a byte:
 * - a connection must open with net-ipc's `IPC` preamble (net-ipc also answers an HTTP upgrade,
 *   which no gateway uses);
 * - until it is authenticated it may send LINK_HELLO_BYTES in all (the hello is a few hundred;
 *   bytes nobody reads wait in the socket's buffer, whose backpressure stops reading, and net-ipc
 *   closes a connection that has not said hello within 10 s);
 * - a message announced, or bytes waiting unread, past LINK_MESSAGE_BYTES close it, authenticated
 *   or not (a gateway process's batch of one event-loop turn is 0.3–1 MB under full load).
 * A connection closed by the guard is reported once, through `onRefused`.
 */
import type { Socket } from 'node:net';

/** bytes a connection may send before it is authenticated */
export const LINK_HELLO_BYTES = 64 * 1024;
/** the largest message, and the most bytes waiting unread, on an authenticated connection */
export const LINK_MESSAGE_BYTES = 256 * 1024 * 1024;

const PREAMBLE = Buffer.from('IPC');

export interface LinkGuard {
  /** the connection presented the secret: its messages may be as large as LINK_MESSAGE_BYTES */
  trust(): void;
}

/**
 * Guards one accepted socket (see the top of this file). Wraps the socket's own `push` (every
 * chunk read from the network enters the stream through it) and `read` (net-ipc asks it for a
 * whole message by its announced length).
 */
export function guardLinkSocket(socket: Socket, onRefused: (reason: string) => void): LinkGuard {
  let trusted = false;
  let received = 0;
  let refused = false;
  const refuse = (reason: string): void => {
    if (refused) return;
    refused = true;
    onRefused(reason);
    socket.destroy();
  };
  const push = socket.push.bind(socket);
  socket.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (refused) return false;
    if (Buffer.isBuffer(chunk)) {
      const before = received;
      received += chunk.length;
      if (before < PREAMBLE.length) {
        const seen = chunk.subarray(0, PREAMBLE.length - before);
        if (!seen.equals(PREAMBLE.subarray(before, before + seen.length))) {
          refuse('not a gateway link connection');
          return false;
        }
      }
      if (!trusted && received > LINK_HELLO_BYTES) {
        refuse(`more than ${LINK_HELLO_BYTES} bytes before presenting the secret`);
        return false;
      }
      if (socket.readableLength + chunk.length > LINK_MESSAGE_BYTES) {
        refuse(`more than ${LINK_MESSAGE_BYTES} bytes waiting to be read`);
        return false;
      }
    }
    return push(chunk, encoding);
  };
  const read = socket.read.bind(socket);
  socket.read = (size?: number): unknown => {
    if (size !== undefined && size > (trusted ? LINK_MESSAGE_BYTES : LINK_HELLO_BYTES)) {
      refuse(`a message of ${size} bytes announced`);
      return null;
    }
    return read(size);
  };
  return {
    trust() {
      trusted = true;
    },
  };
}
