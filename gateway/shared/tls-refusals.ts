/**
 * Connections refused for speaking the other side's language: a plain connection (a tracker not
 * set for TLS, `curl http://` to the HTTPS port) on a TLS port, and a TLS handshake on a plain
 * port. Each is closed at once (or when the handshake times out) and logged once per address and
 * hour with the reason, so a tracker that retries every few seconds writes one line, not thousands;
 * nothing else stops (docs/operations.md "TLS").
 */
import type { Logger } from '../../core/logger.js';
import { LISTENER_LOG, LogBudget } from './log-budget.js';

/** addresses remembered as logged, at most; the oldest is forgotten first */
const MAX_ADDRESSES = 10_000;
/** an address is logged again after this long */
const ADDRESS_WINDOW_MS = 60 * 60_000;

/**
 * The first bytes of a TLS ClientHello: a handshake record (0x16) of TLS 1.x (0x03 0x00..0x04),
 * its length, then the handshake type ClientHello (0x01), RFC 8446 §5.1 and §4. No tracker frame
 * of ours begins so: binary frames start with their own marker or length, text ones with a letter
 * or a sign.
 */
export function looksLikeTlsHello(chunk: Buffer): boolean {
  return chunk.length >= 6 && chunk[0] === 0x16 && chunk[1] === 0x03 && chunk[2] <= 0x04 && chunk[5] === 0x01;
}

/** What a failed handshake says, for a person reading the log. */
export function handshakeFailure(e: Error & { code?: string }): string {
  switch (e.code) {
    case 'ERR_TLS_HANDSHAKE_TIMEOUT':
      return 'no TLS handshake in time (a plain connection to a TLS port, or a client that said nothing)';
    case 'ERR_SSL_HTTP_REQUEST':
      return 'a plain HTTP request to a TLS port (use https://)';
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
    case 'ERR_SSL_UNKNOWN_PROTOCOL':
    case 'ERR_SSL_PACKET_LENGTH_TOO_LONG':
      return 'not a TLS handshake (a plain connection to a TLS port?)';
    case 'ERR_SSL_UNSUPPORTED_PROTOCOL':
    case 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION':
      return 'the client offers only TLS older than 1.2';
    case 'ERR_SSL_NO_SHARED_CIPHER':
      return 'no cipher in common with the client';
    default:
      return `TLS handshake failed (${e.code ?? e.message})`;
  }
}

export class RefusalLog {
  private readonly logged = new Map<string, number>();
  private readonly budget: LogBudget;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.budget = new LogBudget({
      ...LISTENER_LOG,
      onSuppressed: (count) => logger.warn({ count }, 'refused TLS and plain connections not logged one by one'),
    });
  }

  /** Logs the refusal of a connection from `address`, unless that address was logged within the hour. */
  refused(address: string | undefined, reason: string, fields: Record<string, unknown> = {}): void {
    const key = address ?? 'unknown';
    const nowMs = this.now();
    const last = this.logged.get(key);
    if (last !== undefined && nowMs - last < ADDRESS_WINDOW_MS) return;
    this.logged.delete(key);
    if (this.logged.size >= MAX_ADDRESSES) this.logged.delete(this.logged.keys().next().value as string);
    this.logged.set(key, nowMs);
    if (!this.budget.take(nowMs)) return;
    this.logger.warn(
      { ...fields, remoteAddress: address, reason },
      'connection refused: TLS and plain do not mix (logged once per address and hour)',
    );
  }

  /** For a TLS server's `tlsClientError`: the failed handshake refused and logged. */
  handshakeFailed(fields: Record<string, unknown>): (e: Error, socket: { remoteAddress?: string }) => void {
    return (e, socket) => this.refused(socket.remoteAddress, handshakeFailure(e), { ...fields, err: e.message });
  }
}
