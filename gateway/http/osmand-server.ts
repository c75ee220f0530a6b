/**
 * OsmAnd / Traccar Client over HTTP (query string or JSON POST) on its own port. 200 only once
 * the position is stored; 400 for a request without a usable id or position, or with an id no
 * device can have; 404 for an unknown or expired device (nothing stored); 503 when storage
 * failed, so the app retries. Bad requests and unknown devices are logged, a few per minute and
 * then a summary count.
 *
 * Connections: the process's tracker connections share one descriptor gate (descriptor-gate.ts),
 * and one that has had no request of a known device answered within TRACKGATE_IDENTIFY_TIMEOUT is
 * closed (identify-timeout.ts): a phone app sends a position soon after it connects, and Node's
 * keep-alive would otherwise hold a connection open for as long as any request, even one of an
 * unknown device, comes every few seconds.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { HttpDecodeResult, ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import { handleDecoded, type GatewayDeps } from '../shared/frame-handler.js';
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

export async function startOsmandServer(o: OsmandOptions, port: number, host: string): Promise<Listener> {
  const limit = o.protocol.maxFrameBytes;
  const protocol = o.protocol.name;
  const summary = (what: string, level: 'info' | 'warn') => (count: number) => o.logger[level]({ protocol, count }, `${what} not logged one by one`);
  const badLog = new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('bad requests', 'warn') });
  const unknownLog = new LogBudget({ ...LISTENER_LOG, onSuppressed: summary('requests of unknown or expired devices', 'info') });
  const flushing = flushEveryWindow([badLog, unknownLog]);
  const now = () => o.clock.now().getTime();
  /** the listener is closed (a planned stop): what is still waiting for the core or storage is answered to no one, and not logged */
  let closed = false;
  /** the connections that have had no request of a known device answered yet, and their identify timers */
  const unidentified = new Map<Socket, NodeJS.Timeout>();
  const identified = (socket: Socket) => {
    clearTimeout(unidentified.get(socket));
    unidentified.delete(socket);
  };

  // Traccar's load tool and shell scripts send HTTP/1.1 without a Host header; Traccar takes them.
  const server = http.createServer({ requireHostHeader: false }, (req, res) => {
    const arrivedAt = monotonicMs();
    const chunks: Buffer[] = [];
    let size = 0;
    const remote = req.socket.remoteAddress ?? null;
    const answer = (status: number, text = '') => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const bad = (reason: string, fields: Record<string, unknown> = {}) => {
      if (badLog.take(now())) o.logger.warn({ protocol, remote, method: req.method, url: (req.url ?? '').slice(0, 200), ...fields, reason }, 'bad request');
    };
    req.on('error', () => {}); // a client that goes away mid-request: nothing to answer
    res.on('error', () => {});
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        bad('request too large');
        answer(413, 'request too large\n');
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      handle(Buffer.concat(chunks)).catch((e: unknown) => {
        o.logger.error({ protocol, remote, err: e }, 'handling an OsmAnd request failed unexpectedly');
        answer(500, 'internal error\n');
      });
    });

    async function handle(body: Buffer): Promise<void> {
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers, body };
      const received = o.clock.now();
      const decode = (model: string | undefined): HttpDecodeResult =>
        o.protocol.decodeHttp!(request, { now: received, transport: 'http', model, checksum: o.checksum, session: {} });
      let result: HttpDecodeResult;
      try {
        result = decode(undefined);
      } catch (e) {
        o.counts?.frameMalformed();
        bad((e as Error).message);
        return answer(400, 'malformed request\n');
      }
      if (result.status >= 400) {
        o.counts?.frameMalformed();
        bad(result.warnings?.at(-1) ?? `HTTP ${result.status}`);
        return answer(result.status, 'missing or invalid id or position\n');
      }
      // the request as the feed shows it: request line and body (headers left out)
      const raw = { bytes: Buffer.concat([Buffer.from(`${request.method} ${request.url}\n`, 'latin1'), body]), text: true, receivedAt: received };
      const outcome = await handleDecoded(o, protocol, result, {}, remote, decode, raw);
      // a planned stop closed the listener and its connections: nobody to answer, nothing to log
      if (closed) return;
      switch (outcome.kind) {
        case 'ok':
          identified(req.socket);
          answer(200);
          return o.counts?.acknowledged(arrivedAt);
        case 'invalid':
          bad(outcome.reason, { identifier: outcome.identity.slice(0, 80) });
          return answer(400, 'invalid id\n');
        case 'rejected':
        case 'anonymous':
          if (outcome.kind === 'rejected' && unknownLog.take(now())) o.logger.info({ protocol, remote, identifier: outcome.identity }, 'request of an unknown or expired device: not stored');
          return answer(404, 'unknown device\n');
        case 'failed':
          logStorageFailure(o.storageFailures, o.logger, now(), outcome.error, { protocol, remote });
          return answer(503, 'storage unavailable, retry\n');
        case 'malformed':
          o.counts?.frameMalformed();
          bad((outcome.error as Error).message);
          return answer(400, 'malformed request\n');
      }
    }
  });
  server.requestTimeout = 30_000;
  // before http's own listener: a refused socket is closed before it is read
  server.prependListener('connection', (socket: Socket) => {
    if (o.gate && !o.gate.admit(socket, o.counts)) {
      socket.destroy();
      return;
    }
    const limit = o.identifyTimeout;
    if (!limit) return;
    unidentified.set(socket, setTimeout(() => {
      unidentified.delete(socket);
      o.counts?.identifyTimedOut();
      limit.closed(now(), { protocol, remote: `${socket.remoteAddress}:${socket.remotePort}`, reason: identifyTimeoutReason(limit.ms / 1000) });
      socket.destroy();
    }, limit.ms));
    socket.once('close', () => identified(socket));
  });
  const listener = await listen(server, { port, host });
  return {
    port: listener.port,
    close: () => {
      closed = true;
      flushing.stop();
      return listener.close();
    },
  };
}
