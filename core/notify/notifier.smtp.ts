/** Alert e-mail over SMTP (nodemailer), from an `smtp://` or `smtps://` URL. */
import nodemailer from 'nodemailer';
import type { Notifier } from './notifier.js';

// nodemailer's own defaults wait 2 min to connect and 10 min on an idle socket: far too long for
// an outbox that should retry. Pooled, so a burst of alerts reuses a few connections. Any of
// these can be overridden in the URL's query (`?socketTimeout=60000&maxConnections=2`).
const DEFAULTS: Record<string, string> = {
  pool: 'true',
  maxConnections: '3',
};

export interface SmtpSettings {
  /** e.g. smtp://user:pass@mail.example.com:587, smtps://…:465 */
  url: string;
  /** the From address, e.g. `trackgate <alerts@example.com>` */
  from: string;
  /**
   * Longest wait for one message, from asking for a connection to the server's acceptance of it
   * (connecting and the greeting get at most 10 s of it). Past it send() throws, and the
   * connections in use are dropped for fresh ones: a server that stops answering mid-session
   * must not hold pool slots for ever.
   */
  timeoutMs?: number;
  /**
   * Opens the TCP connection to the server and returns the socket at once, still connecting:
   * nodemailer then applies its own connection and greeting timeouts and error handling to it.
   * Given one that disables Nagle's algorithm, a message's last line does not wait for the
   * server's delayed ACK (about 40 ms a message otherwise).
   */
  openSocket?: (host: string, port: number) => unknown;
}

/** A transport for `parsed` (its query holding the options); `openSocket` as in SmtpSettings. */
function newTransport(parsed: URL, port: number, from: string, openSocket: SmtpSettings['openSocket']) {
  // nodemailer reads options from the URL query only when given the URL as a string.
  const transport = nodemailer.createTransport(parsed.toString(), { from });
  if (openSocket) {
    // nodemailer's hook for a socket of our own; it still does the TLS upgrade for smtps://. The
    // socket is handed over while it connects: an error passed back through this callback
    // would leave the pool slot taken for good (nodemailer 7 PoolResource.connect).
    (
      transport.transporter as unknown as {
        getSocket: (o: unknown, cb: (e: Error | null, s?: { connection: unknown }) => void) => void;
      }
    ).getSocket = (_o, cb) => {
      let connection: unknown;
      try {
        connection = openSocket(parsed.hostname, port);
      } catch {
        return cb(null, undefined); // nodemailer connects by itself instead
      }
      cb(null, { connection });
    };
  }
  return transport;
}

export function createSmtpNotifier({ url, from, timeoutMs = 30_000, openSocket }: SmtpSettings): Notifier {
  const parsed = new URL(url);
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:')
    throw new Error(`SMTP URL must start with smtp:// or smtps://, not ${parsed.protocol}//`);
  const defaults: Record<string, string> = {
    ...DEFAULTS,
    connectionTimeout: String(Math.min(10_000, timeoutMs)),
    greetingTimeout: String(Math.min(10_000, timeoutMs)),
    socketTimeout: String(timeoutMs),
  };
  for (const [key, value] of Object.entries(defaults))
    if (!parsed.searchParams.has(key)) parsed.searchParams.set(key, value);
  const port = Number(parsed.port || (parsed.protocol === 'smtps:' ? 465 : 587));
  // Error messages name the server without its credentials.
  const where = `${parsed.hostname}:${port}`;

  const makeTransport = () => newTransport(parsed, port, from, openSocket);

  let transport = makeTransport();
  let closed = false;
  /** rejecters of the sends in flight, so close() can let go of them */
  const inFlight = new Set<(e: Error) => void>();

  /** Drops a transport that let a send run past its time, unless it was already replaced. */
  function replace(stale: typeof transport): void {
    if (transport !== stale || closed) return;
    transport = makeTransport();
    stale.close();
  }

  return {
    send(m) {
      if (closed) return Promise.reject(new Error('the SMTP notifier is closed'));
      const used = transport;
      return new Promise<void>((resolve, reject) => {
        const settle = (e?: Error) => {
          if (!inFlight.delete(fail)) return;
          clearTimeout(timer);
          if (e) reject(e);
          else resolve();
        };
        const fail = (e: Error) => settle(e);
        inFlight.add(fail);
        const timer = setTimeout(() => {
          settle(new Error(`SMTP server ${where} did not accept the message within ${timeoutMs} ms`));
          replace(used);
        }, timeoutMs);
        used
          .sendMail({ to: m.to, subject: m.subject ?? `${m.alertName}: ${m.deviceId}`, text: m.text, html: m.html })
          .then(
            () => settle(),
            (e: Error) => settle(e),
          );
      });
    },
    async close() {
      closed = true;
      transport.close();
      // nodemailer never calls back the messages still queued in a closed pool.
      for (const fail of [...inFlight]) fail(new Error('the SMTP notifier was closed while sending'));
    },
  };
}
