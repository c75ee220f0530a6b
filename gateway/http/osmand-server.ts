/**
 * OsmAnd / Traccar Client over HTTP (query string or JSON POST) on its own port. 200 only once
 * the position is stored; 400 for a request without a usable id or position; 404 for an unknown
 * or expired device (nothing stored); 503 when storage failed, so the app retries.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProtocolModule } from '../../protocols/types.js';
import type { Clock } from '../../core/clock.js';
import { handleDecoded, type GatewayDeps } from '../tcp/frame-handler.js';

export interface OsmandOptions extends GatewayDeps {
  protocol: ProtocolModule;
  clock: Clock;
  checksum: 'accept' | 'strict';
}

export function startOsmandServer(o: OsmandOptions, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const limit = o.protocol.maxFrameBytes;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const answer = (status: number, text = '') => {
      if (res.headersSent) return;
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        answer(413, 'request too large\n');
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string | undefined> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
        let result;
        try {
          result = o.protocol.decodeHttp!({ method: req.method ?? 'GET', url: req.url ?? '/', headers, body: Buffer.concat(chunks) }, { now: o.clock.now(), transport: 'http', checksum: o.checksum, session: {} });
        } catch (e) {
          o.logger.warn({ protocol: o.protocol.name, remote: req.socket.remoteAddress, reason: (e as Error).message }, 'malformed request');
          return answer(400, 'malformed request\n');
        }
        if (result.status >= 400) return answer(result.status, 'missing or invalid id or position\n');
        const outcome = await handleDecoded(o, o.protocol.name, result, {}, req.socket.remoteAddress ?? null);
        if (outcome.kind === 'ok') return answer(200);
        if (outcome.kind === 'rejected' || outcome.kind === 'anonymous') return answer(404, 'unknown device\n');
        o.logger.error({ protocol: o.protocol.name, err: outcome.error }, 'storing failed: request not acknowledged');
        return answer(503, 'storage unavailable, retry\n');
      })();
    });
  });
  server.requestTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }),
      });
    });
  });
}
