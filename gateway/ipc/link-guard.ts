/**
 * What a connection to the gateway link may send before and after it presents the secret.
 * net-ipc reads each message by the length its tag announces: a tag of more than 1 GiB made its
 * `socket.read` throw from an event handler (8 bytes from anyone who reached the port stopped the
 * core), and a smaller one made it buffer that much before anything was checked. And it decodes
 * the messages after the hello as the hello asked, in the same turn: a peer without the secret
 * asked for compression and MessagePack and sent, in the same write, 64 KB of deflate that
 * inflated to a 66-million element array, decoded before the wrong secret's close took effect
 * (two such connections ended the core, "heap out of memory"). The guard sits on each socket
 * before net-ipc sees a byte:
 * - a connection must open with net-ipc's `IPC` preamble (net-ipc also answers an HTTP upgrade,
 *   which no gateway uses);
 * - until it is authenticated it may send LINK_HELLO_BYTES in all (the hello is a few hundred;
 *   bytes nobody reads wait in the socket's buffer, whose backpressure stops reading, and net-ipc
 *   closes a connection that has not said hello within 10 s), and nothing after its hello is read:
 *   the core checks the secret in the hello's own turn, so a gateway's next message waits for nothing;
 * - nothing is ever inflated: net-ipc's compression is refused (no trackgate gateway asks for it),
 *   and so is a connection that does not speak MessagePack;
 * - a message announced, or bytes waiting unread, past LINK_MESSAGE_BYTES close it, authenticated
 *   or not (a gateway process's batch of one event-loop turn is 0.3–1 MB under full load), and so
 *   does a message of more than LINK_MESSAGE_VALUES values or nested deeper than
 *   LINK_MESSAGE_DEPTH (msgpack.limits.ts), checked on its bytes before msgpackr decodes it.
 * A connection closed by the guard is reported once, through `onRefused`.
 */
import type { Socket } from 'node:net';
import { msgpackProblem } from './msgpack.limits.js';

/** bytes a connection may send before it is authenticated */
export const LINK_HELLO_BYTES = 64 * 1024;
/** the largest message, and the most bytes waiting unread, on an authenticated connection */
export const LINK_MESSAGE_BYTES = 256 * 1024 * 1024;

/**
 * values one message may hold, and arrays and maps nested at most (the message is level 1): a
 * gateway's batch is at most MAX_BATCH_ITEMS (100) requests and notes (ipc.messages.ts), about
 * 80,000 values when 100 trackers each sent a frame of 255 positions in one turn, and 1.3 million
 * were each a store of the most rows the core takes (MAX_STORE_ROWS, 3 values a row)
 */
export const LINK_MESSAGE_VALUES = 2_000_000;
export const LINK_MESSAGE_DEPTH = 64;

const PREAMBLE = Buffer.from('IPC');

export interface LinkGuard {
  /**
   * The connection presented the secret: what it sends after its hello is read, as large as
   * LINK_MESSAGE_BYTES. False when the hello asked for what the link does not take (compression,
   * JSON instead of MessagePack): the connection is refused, not trusted.
   */
  trust(): boolean;
}

/** net-ipc's MessagePack codec (msgpackr), as it sets it on the socket */
interface Codec {
  pack(value: unknown): Buffer;
  unpack(bytes: Buffer): unknown;
}

/** What the guard knows of one connection, shared by its wrapped `push`, `read` and codec. */
interface GuardState {
  trusted: boolean;
  /** bytes received so far */
  received: number;
  refused: boolean;
  refuse(reason: string): void;
}

/** Why a chunk read from the network closes the connection (null: it may enter the stream). */
function chunkProblem(state: GuardState, socket: Socket, chunk: Buffer): string | null {
  const before = state.received;
  state.received += chunk.length;
  if (before < PREAMBLE.length) {
    const seen = chunk.subarray(0, PREAMBLE.length - before);
    if (!seen.equals(PREAMBLE.subarray(before, before + seen.length))) return 'not a gateway link connection';
  }
  if (!state.trusted && state.received > LINK_HELLO_BYTES) return `more than ${LINK_HELLO_BYTES} bytes before presenting the secret`;
  if (socket.readableLength + chunk.length > LINK_MESSAGE_BYTES) return `more than ${LINK_MESSAGE_BYTES} bytes waiting to be read`;
  return null;
}

/** Every chunk read from the network enters the stream through the socket's `push`. */
function guardPush(socket: Socket, state: GuardState): void {
  const push = socket.push.bind(socket);
  socket.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (state.refused) return false;
    const problem = Buffer.isBuffer(chunk) ? chunkProblem(state, socket, chunk) : null;
    if (problem) {
      state.refuse(problem);
      return false;
    }
    return push(chunk, encoding);
  };
}

/** net-ipc asks `read` for a whole message by its announced length. */
function guardRead(socket: Socket, state: GuardState): void {
  const read = socket.read.bind(socket);
  /** net-ipc's reads before the secret: its `IPC` preamble, then the hello */
  let readsBeforeTrust = 0;
  socket.read = (size?: number): unknown => {
    if (state.refused) return null;
    if (size !== undefined && size > (state.trusted ? LINK_MESSAGE_BYTES : LINK_HELLO_BYTES)) {
      state.refuse(`a message of ${size} bytes announced`);
      return null;
    }
    // nothing after the hello before the secret is checked (read(0) only asks the socket to fill its buffer)
    if (!state.trusted && readsBeforeTrust >= 2 && size !== 0) return null;
    const chunk = read(size);
    if (!state.trusted && chunk !== null && size !== 0) readsBeforeTrust++;
    return chunk;
  };
}

/**
 * net-ipc sets `zlib` and `msgpack` on the socket when the hello asks for them (and decodes with
 * them in that turn): compression is only noted, never set; the codec checks a message's bytes
 * before it decodes them. Answers what the hello asked for.
 */
function guardCodec(socket: Socket, state: GuardState): { compressionAsked(): boolean; codec(): Codec | undefined } {
  let compressionAsked = false;
  let codec: Codec | undefined;
  Object.defineProperty(socket, 'zlib', {
    configurable: true,
    get: () => undefined,
    set: () => void (compressionAsked = true),
  });
  Object.defineProperty(socket, 'msgpack', {
    configurable: true,
    get: () => codec,
    set(given: Codec | undefined) {
      codec = given && {
        pack: (value) => given.pack(value),
        unpack(bytes) {
          const problem = state.trusted ? msgpackProblem(bytes, { elements: LINK_MESSAGE_VALUES, depth: LINK_MESSAGE_DEPTH }) : 'sent before the secret was checked';
          if (problem) {
            state.refuse(`a message that ${problem}`);
            throw new Error(`gateway link message refused: it ${problem}`);
          }
          return given.unpack(bytes);
        },
      };
    },
  });
  return { compressionAsked: () => compressionAsked, codec: () => codec };
}

/**
 * Guards one accepted socket (see the top of this file). Wraps the socket's own `push` (every
 * chunk read from the network enters the stream through it) and `read` (net-ipc asks it for a
 * whole message by its announced length).
 */
export function guardLinkSocket(socket: Socket, onRefused: (reason: string) => void): LinkGuard {
  const state: GuardState = {
    trusted: false,
    received: 0,
    refused: false,
    refuse(reason) {
      if (state.refused) return;
      state.refused = true;
      onRefused(reason);
      socket.destroy();
    },
  };
  guardPush(socket, state);
  guardRead(socket, state);
  const asked = guardCodec(socket, state);
  return {
    trust() {
      if (asked.compressionAsked()) state.refuse('asks for compression, which the link does not take');
      else if (!asked.codec()) state.refuse('does not speak MessagePack');
      else state.trusted = true;
      return state.trusted;
    },
  };
}
