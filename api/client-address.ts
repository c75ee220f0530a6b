/**
 * The client's address behind reverse proxies (docs/operations.md "Behind a reverse proxy"): the
 * X-Forwarded-For header is believed only from an address of TRACKGATE_TRUSTED_PROXIES. Read from
 * the right, each trusted hop names the one before it; the first address that is no trusted proxy
 * is the client. Without trusted proxies the header is ignored: anyone could write it. The address
 * is what the failed-login limit counts and what request logs name (`ctx.ip`).
 */
import type { Context, Next } from 'koa';
import { inRange, parseAddress, range, type Range } from '../core/addresses.js';

/** the most hops read from one header: a longer chain of trusted proxies is no deployment of ours */
const MAX_HOPS = 16;

/**
 * Who a connection from `peer` comes from, given its X-Forwarded-For header; undefined without
 * trusted proxies (the peer is the client). Also read for MQTT over WebSocket at the REST ports' `/mqtt`.
 */
export function forwardedClient(trusted: readonly string[]): ((peer: string, header: string) => string) | undefined {
  if (trusted.length === 0) return undefined;
  const ranges: Range[] = trusted.map(range);
  const isTrusted = (address: string) => {
    const a = parseAddress(address);
    return a !== undefined && ranges.some((r) => inRange(a, r));
  };
  return (peer, header) => {
    if (!isTrusted(peer)) return peer;
    const hops = header
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean)
      .slice(-MAX_HOPS);
    let client = peer;
    while (hops.length && isTrusted(client)) {
      const hop = hops.pop()!;
      if (!parseAddress(hop)) break;
      client = hop;
    }
    return client;
  };
}

export function clientAddress(trusted: readonly string[]): ((ctx: Context, next: Next) => Promise<void>) | undefined {
  const client = forwardedClient(trusted);
  if (!client) return undefined;
  return async (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress ?? '';
    const address = client(peer, ctx.get('x-forwarded-for') || '');
    if (address !== peer) ctx.request.ip = address;
    await next();
  };
}
