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
}

export function createSmtpNotifier({ url, from }: SmtpSettings): Notifier {
  const parsed = new URL(url);
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new Error(`SMTP URL must start with smtp:// or smtps://, not ${parsed.protocol}//`);
  for (const [key, value] of Object.entries(DEFAULTS)) if (!parsed.searchParams.has(key)) parsed.searchParams.set(key, value);
  // nodemailer reads options from the URL query only when given the URL as a string.
  const transport = nodemailer.createTransport(parsed.toString(), { from });

  return {
    async send(m) {
      await transport.sendMail({ to: m.to, subject: m.subject ?? `${m.alertName}: ${m.deviceId}`, text: m.text, html: m.html });
    },
    async close() {
      transport.close();
    },
  };
}
