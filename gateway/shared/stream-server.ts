/**
 * A raw TCP (or TLS) server that hands every accepted socket to a handler. Trackers and MQTT both
 * listen through it; this is the one file that creates `net` and `tls` servers (and the one that
 * touches `tls` for the edge gateway's link client: withoutIpServername).
 */
import net from 'node:net';
import tls from 'node:tls';
import { listen, type Listener } from './listen.js';

export interface StreamOptions {
  port: number;
  host: string;
  /** PEM certificate and key: serve TLS */
  tls?: { cert: Buffer; key: Buffer; onError?: (e: Error) => void };
  maxConnections?: number;
}

/** A TCP port free now on `host` (the gateway processes need one number before any of them listens: gateway/ipc/free-ports.ts). */
export async function freeTcpPort(host: string): Promise<number> {
  const probe = await listen(net.createServer(), { port: 0, host });
  await probe.close();
  return probe.port;
}

export function listenStream(onSocket: (socket: net.Socket) => void, o: StreamOptions): Promise<Listener> {
  const server = o.tls
    ? tls.createServer({ cert: o.tls.cert, key: o.tls.key, handshakeTimeout: 30_000 }, onSocket)
    : net.createServer(onSocket);
  if (o.tls?.onError) server.on('tlsClientError', o.tls.onError);
  server.maxConnections = o.maxConnections ?? 200_000;
  return listen(server, o);
}

/** Why a PEM certificate and key cannot serve TLS (not PEM, or a key of another certificate), or undefined. */
export function tlsPairProblem(cert: Buffer, key: Buffer): string | undefined {
  try {
    tls.createSecureContext({ cert, key });
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Runs `open`, which makes its TLS connection with tls.connect before it returns (net-ipc's
 * Client.connect), so that a connection to an IP address carries no ServerName (SNI). net-ipc
 * 2.2.2 sets `servername` to the host it connects to, whatever it is, and Node then prints
 * "[DEP0123] DeprecationWarning: Setting the TLS ServerName to an IP address is not permitted by
 * RFC 6066" (SNI names hosts only). The certificate is checked as before: without a servername
 * Node checks it against the host connected to, the same IP address (its IP SANs). A host name
 * keeps its servername. net-ipc takes no servername of ours (it overwrites it), so tls.connect is
 * wrapped for the length of that synchronous call only: nothing else runs meanwhile (a net-ipc that
 * connected later would bring the warning back: test/gateway/ipc/edge.test.ts looks for it).
 */
export function withoutIpServername<T>(open: () => T): T {
  const mutable = tls as { connect: typeof tls.connect };
  const connect = mutable.connect;
  mutable.connect = ((...args: unknown[]) => {
    const [options] = args;
    if (options && typeof options === 'object' && net.isIP((options as tls.ConnectionOptions).servername ?? '') !== 0) {
      args[0] = { ...(options as tls.ConnectionOptions), servername: undefined };
    }
    return (connect as (...a: unknown[]) => tls.TLSSocket)(...args);
  }) as typeof tls.connect;
  try {
    return open();
  } finally {
    mutable.connect = connect;
  }
}
