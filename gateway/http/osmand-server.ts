/**
 * OsmAnd / Traccar Client, and every other protocol over HTTP (flespi), each on its own port
 * (docs/tracker-gateway.md): 200 only once the position is stored, 503 when storage failed, so the
 * app retries; a request of several devices (flespi) only once every known device's messages are
 * stored (device-groups.ts). A connection with no request
 * of a known device answered within TRACKGATE_IDENTIFY_TIMEOUT is closed (identify-timeout.ts):
 * otherwise Node's keep-alive would hold it open as long as any request, even of an unknown
 * device, keeps coming.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ProtocolError, type HttpDecodeResult, type ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import {
  handleDecoded,
  logMalformed,
  showUndecodable,
  type DecoderProfile,
  type FrameOutcome,
  type GatewayDeps,
} from '../shared/frame-handler.js';
import { fixedTargetStream, startsWithoutSlash } from './request-target.fix.js';
import { storeDeviceGroups } from './device-groups.js';
import { listen, type Listener } from '../shared/listen.js';
import { flushEveryWindow, LISTENER_LOG, LogBudget } from '../shared/log-budget.js';
import { logStorageFailure } from '../shared/storage-failures.js';
import { monotonicMs } from '../../core/metrics/counts.js';
import type { DescriptorGate } from '../shared/descriptor-gate.js';
import { identifyTimeoutReason, type IdentifyTimeout } from '../shared/identify-timeout.js';

export interface OsmandOptions extends GatewayDeps {
  protocol: ProtocolModule;
  clock: Clock;
  checksum: 'accept' | 'strict';
  /** gateway-wide: the storage failures of every listener share one log budget */
  storageFailures: LogBudget;
  /** gateway-wide: the tracker connections this process may hold (absent: no limit) */
  gate?: DescriptorGate;
  /** gateway-wide: how long a connection may stay without a request of a known device (absent: no limit) */
  identifyTimeout?: IdentifyTimeout;
}

/** What one server's handlers share. */
interface OsmandState {
  o: OsmandOptions;
  protocol: string;
  badLog: LogBudget;
  malformedLog: LogBudget;
  unknownLog: LogBudget;
  now(): number;
  /** the listener is closed (a planned stop): what is still waiting for the core or storage is answered to no one, and not logged */
  closed: boolean;
  /** the connections that have had no request of a known device answered yet, and their identify timers */
  unidentified: Map<Socket, NodeJS.Timeout>;
}

/** One request being answered. */
interface Exchange {
  req: http.IncomingMessage;
  remote: string | null;
  arrivedAt: number;
  answer(status: number, text?: string): void;
  /** logs a bad request (a few per minute) */
  bad(reason: string, fields?: Record<string, unknown>): void;
}

export async function startOsmandServer(o: OsmandOptions, port: number, host: string): Promise<Listener> {
  const protocol = o.protocol.name;
  const summary = (what: string, level: 'info' | 'warn') => (count: number) =>
    o.logger[level]({ protocol, count }, `${what} not logged one by one`);
  const state: OsmandState = {
    o,
    protocol,
    badLog: new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('bad requests', 'warn') }),
    malformedLog: new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('malformed frames', 'warn') }),
    unknownLog: new LogBudget({
      ...LISTENER_LOG,
      onSuppressed: summary('requests of unknown or expired devices', 'info'),
    }),
    now: () => o.clock.now().getTime(),
    closed: false,
    unidentified: new Map(),
  };
  const flushing = flushEveryWindow([state.badLog, state.malformedLog, state.unknownLog]);

  // Traccar's load tool and shell scripts send HTTP/1.1 without a Host header; Traccar takes them.
  const server = http.createServer({ requireHostHeader: false }, (req, res) => onRequest(state, req, res));
  server.requestTimeout = 30_000;
  acceptTargetsWithoutSlash(server);
  // before http's own listener: a refused socket is closed before it is read
  server.prependListener('connection', (socket: Socket) => admit(state, socket));
  const listener = await listen(server, { port, host });
  return {
    port: listener.port,
    close: () => {
      state.closed = true;
      flushing.stop();
      return listener.close();
    },
  };
}

/** A new connection: refused beyond the descriptor gate; closed if no request of a known device is answered in time. */
function admit(state: OsmandState, socket: Socket): void {
  const { o, protocol } = state;
  if (o.gate && !o.gate.admit(socket, o.counts)) {
    socket.destroy();
    return;
  }
  const limit = o.identifyTimeout;
  if (!limit) return;
  state.unidentified.set(
    socket,
    setTimeout(() => {
      state.unidentified.delete(socket);
      o.counts?.identifyTimedOut();
      limit.closed(state.now(), {
        protocol,
        remote: `${socket.remoteAddress}:${socket.remotePort}`,
        reason: identifyTimeoutReason(limit.ms / 1000),
      });
      socket.destroy();
    }, limit.ms),
  );
  socket.once('close', () => identified(state, socket));
}

/** The connection had a request of a known device answered: its identify timer stops. */
function identified(state: OsmandState, socket: Socket): void {
  clearTimeout(state.unidentified.get(socket));
  state.unidentified.delete(socket);
}

/** Reads a request's body (413 beyond the protocol's frame limit), then handles it. */
function onRequest(state: OsmandState, req: http.IncomingMessage, res: http.ServerResponse): void {
  const { o, protocol } = state;
  const limit = o.protocol.maxFrameBytes;
  const chunks: Buffer[] = [];
  let size = 0;
  const exchange: Exchange = {
    req,
    remote: req.socket.remoteAddress ?? null,
    arrivedAt: monotonicMs(),
    answer(status, text = '') {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    },
    bad(reason, fields = {}) {
      if (state.badLog.take(state.now()))
        o.logger.warn(
          {
            protocol,
            remote: exchange.remote,
            method: req.method,
            url: (req.url ?? '').slice(0, 200),
            ...fields,
            reason,
          },
          'bad request',
        );
    },
  };
  req.on('error', () => {}); // a client that goes away mid-request: nothing to answer
  res.on('error', () => {});
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size > limit) {
      exchange.bad('request too large');
      exchange.answer(413, 'request too large\n');
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    handleRequest(state, exchange, Buffer.concat(chunks)).catch((e: unknown) => {
      o.logger.error({ protocol, remote: exchange.remote, err: e }, 'handling an OsmAnd request failed unexpectedly');
      exchange.answer(500, 'internal error\n');
    });
  });
}

/** A whole request: decoded, stored, answered. */
async function handleRequest(state: OsmandState, exchange: Exchange, body: Buffer): Promise<void> {
  const { o, protocol } = state;
  const { req, remote } = exchange;
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers, body };
  const received = o.clock.now();
  const decode = (profile: DecoderProfile): HttpDecodeResult =>
    o.protocol.decodeHttp!(request, {
      now: received,
      transport: 'http',
      ...profile,
      checksum: o.checksum,
      session: {},
    });
  // the request as the feed shows it: request line and body (headers left out)
  const raw = {
    bytes: Buffer.concat([Buffer.from(`${request.method} ${request.url}\n`, 'latin1'), body]),
    text: true,
    receivedAt: received,
  };
  const logMalformedRequest = (error: unknown) =>
    logMalformed(
      o,
      state.malformedLog,
      state.now(),
      { protocol, remote, method: request.method, url: request.url.slice(0, 200) },
      error,
      raw.bytes,
    );
  /** a request that cannot be read is a malformed frame, as on every tracker port; the app is told 400 */
  const malformed = async (error: unknown, status: number, text: string): Promise<void> => {
    logMalformedRequest(error);
    exchange.answer(status, text);
    await showUndecodable(o, protocol, error, {}, remote, raw);
  };
  let result: HttpDecodeResult;
  try {
    result = decode({});
  } catch (e) {
    return malformed(e, 400, 'malformed request\n');
  }
  if (result.status >= 400) {
    const reason = result.warnings?.at(-1) ?? `HTTP ${result.status}`;
    const error = new ProtocolError(protocol, reason, undefined, {
      ...(result.identity !== undefined && { identity: result.identity }),
    });
    return malformed(error, result.status, 'missing or invalid id or position\n');
  }
  if (result.devices) {
    const outcomes = await storeDeviceGroups(o, protocol, result, remote, decode, raw);
    if (!state.closed) answerGroups(state, exchange, result.status, outcomes, logMalformedRequest);
    return;
  }
  const outcome = await handleDecoded(o, protocol, result, {}, remote, decode, raw);
  // a planned stop closed the listener and its connections: nobody to answer, nothing to log
  if (state.closed) return;
  answerOutcome(state, exchange, outcome, logMalformedRequest);
}

/** The status the app gets for what became of its position. */
function answerOutcome(
  state: OsmandState,
  exchange: Exchange,
  outcome: FrameOutcome,
  logMalformedRequest: (error: unknown) => void,
): void {
  const { o, protocol } = state;
  const { remote } = exchange;
  switch (outcome.kind) {
    case 'ok':
      identified(state, rawSocketOf.get(exchange.req.socket) ?? exchange.req.socket);
      exchange.answer(200);
      return o.counts?.acknowledged(exchange.arrivedAt);
    case 'invalid':
      exchange.bad(outcome.reason, { identifier: outcome.identity.slice(0, 80) });
      return exchange.answer(400, 'invalid id\n');
    case 'rejected':
    case 'anonymous':
      if (outcome.kind === 'rejected' && state.unknownLog.take(state.now()))
        o.logger.info(
          { protocol, remote, identifier: outcome.identity },
          'request of an unknown or expired device: not stored',
        );
      return exchange.answer(404, 'unknown device\n');
    case 'failed':
      logStorageFailure(o.storageFailures, o.logger, state.now(), outcome.error, { protocol, remote });
      return exchange.answer(503, 'storage unavailable, retry\n');
    case 'malformed':
      logMalformedRequest(outcome.error);
      return exchange.answer(400, 'malformed request\n');
  }
}

/**
 * The answer to a request of several devices (flespi): 503 when storing any of them failed, so the
 * whole request comes again; otherwise `status` (200). Unknown devices' messages are skipped, as
 * the reference skips them (their identifiers are listed as unknown, as on every port), and so is
 * a group that cannot be decoded for its device's model.
 */
function answerGroups(
  state: OsmandState,
  exchange: Exchange,
  status: number,
  outcomes: readonly FrameOutcome[],
  logMalformedRequest: (error: unknown) => void,
): void {
  const { o, protocol } = state;
  const { remote } = exchange;
  const failed = outcomes.find((x) => x.kind === 'failed');
  if (failed) {
    logStorageFailure(o.storageFailures, o.logger, state.now(), failed.error, { protocol, remote });
    return exchange.answer(503, 'storage unavailable, retry\n');
  }
  for (const outcome of outcomes) {
    if (outcome.kind === 'malformed') logMalformedRequest(outcome.error);
    else if (outcome.kind === 'invalid') exchange.bad(outcome.reason, { identifier: outcome.identity.slice(0, 80) });
    else if (outcome.kind === 'rejected' && state.unknownLog.take(state.now()))
      o.logger.info(
        { protocol, remote, identifier: outcome.identity },
        'messages of an unknown or expired device: not stored',
      );
  }
  if (outcomes.some((x) => x.kind === 'ok'))
    identified(state, rawSocketOf.get(exchange.req.socket) ?? exchange.req.socket);
  exchange.answer(status);
  o.counts?.acknowledged(exchange.arrivedAt);
}

/** how long a connection may take to send its first request line */
const FIRST_LINE_MS = 30_000;

/**
 * Puts request-target.fix.ts in front of the server: each new connection's first request line is
 * read first; a target without its leading slash sends the connection through the fixing stream,
 * any other goes to the server as it came (its bytes put back).
 */
/** the tracker's socket behind a request stream whose targets were fixed: its identify timer is the socket's */
const rawSocketOf = new WeakMap<object, Socket>();

function acceptTargetsWithoutSlash(server: http.Server): void {
  const serve = server.listeners('connection') as ((socket: Socket | Duplex) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    let first: Buffer = Buffer.alloc(0);
    const gone = () => socket.destroy();
    const onData = (chunk: Buffer) => {
      first = first.length ? Buffer.concat([first, chunk]) : chunk;
      const withoutSlash = startsWithoutSlash(first);
      if (withoutSlash === undefined) return;
      socket.pause();
      socket.off('data', onData);
      socket.off('error', gone);
      socket.off('end', gone);
      socket.off('timeout', gone);
      socket.setTimeout(0);
      const stream = withoutSlash ? fixedTargetStream(socket, first) : socket;
      if (stream !== socket) rawSocketOf.set(stream, socket);
      if (!withoutSlash) socket.unshift(first);
      for (const listener of serve) listener.call(server, stream);
      socket.resume();
    };
    socket.on('data', onData);
    socket.on('error', gone);
    socket.on('end', gone);
    socket.setTimeout(FIRST_LINE_MS);
    socket.on('timeout', gone);
  });
}
