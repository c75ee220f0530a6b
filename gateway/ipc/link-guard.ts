/**
 * What a connection to the gateway link may send before and after it presents the secret
 * (docs/scaling.md). It sits on each socket before net-ipc sees a byte, because net-ipc trusts the
 * length a message announces and decodes what follows the hello in the same turn: a few bytes from
 * anyone who reached the port could crash the core or run it out of memory. So: the `IPC` preamble
 * first; at most LINK_HELLO_BYTES, and nothing after the hello, until the secret is checked; no
 * compression, MessagePack only; and LINK_MESSAGE_BYTES, LINK_MESSAGE_VALUES and LINK_MESSAGE_DEPTH
 * checked on the bytes before decoding. A refused connection is reported once, through `onRefused`.
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
  if (!state.trusted && state.received > LINK_HELLO_BYTES)
    return `more than ${LINK_HELLO_BYTES} bytes before presenting the secret`;
  if (socket.readableLength + chunk.length > LINK_MESSAGE_BYTES)
    return `more than ${LINK_MESSAGE_BYTES} bytes waiting to be read`;
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
          const problem = state.trusted
            ? msgpackProblem(bytes, { elements: LINK_MESSAGE_VALUES, depth: LINK_MESSAGE_DEPTH })
            : 'sent before the secret was checked';
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
