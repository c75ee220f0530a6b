/**
 * A raw TCP (or TLS) server that hands every accepted socket to a handler. Trackers and MQTT both
 * listen through it; this is the one file that creates `net` and `tls` servers (and the one that
 * touches `tls` for the edge gateway's link client: withoutIpServername).
 */
import net from 'node:net';
import tls from 'node:tls';
import { listen, type Listener } from './listen.js';

/** A PEM certificate (its chain after it) and its key. */
export interface TlsPair {
  cert: Buffer | string;
  key: Buffer | string;
}

/**
 * TLS 1.2 at least, Node's default cipher list (OpenSSL's recommended suites, no RC4, no export
 * grades): what every listener serving TLS takes, at start and at each renewal.
 */
export const TLS_DEFAULTS = { minVersion: 'TLSv1.2' } as const;

/** How long a TLS handshake may take (a mobile network is slow; an idle plain client is closed after this). */
export const TLS_HANDSHAKE_TIMEOUT_MS = 15_000;

export interface StreamOptions {
  port: number;
  host: string;
  /** PEM certificate and key: serve TLS; onError hears every failed handshake (with the raw socket) */
  tls?: TlsPair & { onError?: (e: Error, socket: net.Socket) => void; handshakeTimeoutMs?: number };
  maxConnections?: number;
}

/** A stream listener; one serving TLS takes a renewed certificate for its next connections. */
export interface StreamListener extends Listener {
  setTls?(pair: TlsPair): void;
}

/** A TCP port free now on `host` (the gateway processes need one number before any of them listens: gateway/ipc/free-ports.ts). */
export async function freeTcpPort(host: string): Promise<number> {
  const probe = await listen(net.createServer(), { port: 0, host });
  await probe.close();
  return probe.port;
}

export async function listenStream(onSocket: (socket: net.Socket) => void, o: StreamOptions): Promise<StreamListener> {
  const server = o.tls
    ? tls.createServer(
        {
          cert: o.tls.cert,
          key: o.tls.key,
          ...TLS_DEFAULTS,
          handshakeTimeout: o.tls.handshakeTimeoutMs ?? 30_000,
          // on the raw socket at accept: a small ack must not wait for Nagle behind the handshake's records
          noDelay: true,
        },
        onSocket,
      )
    : net.createServer(onSocket);
  if (o.tls?.onError) server.on('tlsClientError', o.tls.onError);
  server.maxConnections = o.maxConnections ?? 200_000;
  const listener = await listen(server, o);
  if (!(server instanceof tls.Server)) return listener;
  return {
    ...listener,
    setTls: (pair) => server.setSecureContext({ cert: pair.cert, key: pair.key, ...TLS_DEFAULTS }),
  };
}

/** Why a PEM certificate and key cannot serve TLS (not PEM, or a key of another certificate), or undefined. */
export function tlsPairProblem(cert: Buffer | string, key: Buffer | string): string | undefined {
  try {
    tls.createSecureContext({ cert, key, ...TLS_DEFAULTS });
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
