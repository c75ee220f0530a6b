/** Alert e-mail over SMTP (nodemailer), from an `smtp://` or `smtps://` URL. */
import nodemailer from 'nodemailer';
import type { Notifier } from './notifier.js';

// nodemailer's own defaults wait 2 min to connect and 10 min on an idle socket: far too long for
// an outbox that should retry. Pooled, so a burst of alerts reuses a few connections. Any of
// these can be overridden in the URL's query (`?socketTimeout=60000&maxConnections=2`).
const DEFAULTS: Record<string, string> = {
  pool: 'true',
  maxConnections: '3',
  connectionTimeout: '10000',
  greetingTimeout: '10000',
  socketTimeout: '30000',
};

export interface SmtpSettings {
  /** e.g. smtp://user:pass@mail.example.com:587, smtps://…:465 */
  url: string;
  /** the From address, e.g. `trackgate <alerts@example.com>` */
  from: string;
  /**
   * Opens the TCP connection to the server. Given one that disables Nagle's algorithm, a message's
   * last line does not wait for the server's delayed ACK (about 40 ms a message otherwise).
   */
  openSocket?: (host: string, port: number) => Promise<unknown>;
}

export function createSmtpNotifier({ url, from, openSocket }: SmtpSettings): Notifier {
  const parsed = new URL(url);
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new Error(`SMTP URL must start with smtp:// or smtps://, not ${parsed.protocol}//`);
  for (const [key, value] of Object.entries(DEFAULTS)) if (!parsed.searchParams.has(key)) parsed.searchParams.set(key, value);
  // nodemailer reads options from the URL query only when given the URL as a string.
  const transport = nodemailer.createTransport(parsed.toString(), { from });
  if (openSocket) {
    const port = Number(parsed.port || (parsed.protocol === 'smtps:' ? 465 : 587));
    // nodemailer's hook for a socket of our own; it still does the TLS upgrade for smtps://.
    (transport.transporter as unknown as { getSocket: (o: unknown, cb: (e: Error | null, s?: { connection: unknown }) => void) => void }).getSocket = (_o, cb) => {
      openSocket(parsed.hostname, port).then((connection) => cb(null, { connection }), (e: Error) => cb(e));
    };
  }

  return {
    async send(m) {
      await transport.sendMail({ to: m.to, subject: m.subject ?? `${m.alertName}: ${m.deviceId}`, text: m.text, html: m.html });
    },
    async close() {
      transport.close();
    },
  };
}
