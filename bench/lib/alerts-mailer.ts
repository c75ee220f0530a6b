/**
 * E-mail baselines for the alerts benchmark, in their own process: the same alert e-mail sent
 * straight to the benchmark's SMTP server, `concurrency` at a time (the outbox worker's width),
 * - `notifier`: through trackgate's own SMTP notifier (core/notify/notifier.smtp.ts: nodemailer,
 *   pool of 3 connections), i.e. the delivery path without the alert, the counter and the outbox;
 * - `nodelay`: nodemailer with the same pool but sockets with Nagle's algorithm off (TCP_NODELAY),
 *   to show what the SMTP server itself accepts.
 */
import net from 'node:net';
import nodemailer from 'nodemailer';
import { createSmtpNotifier } from '../../core/notify/notifier.smtp.js';
import { formatAlertEmail } from '../../core/notify/message.format.js';
import { serveCommands } from './child.js';

export interface MailerArgs {
  mode: 'notifier' | 'nodelay';
  url: string;
  to: string;
  count: number;
  concurrency: number;
}

export interface MailerResult {
  sent: number;
  seconds: number;
  perSec: number;
  cpuPct: number;
}

async function run(a: MailerArgs): Promise<MailerResult> {
  const email = formatAlertEmail({
    deviceName: 'bench huge',
    deviceId: 'bench-alerts-huge',
    alertName: 'SOSButton',
    text: null,
    dateTime: new Date(),
    latitude: null,
    longitude: null,
    timeZone: 'UTC',
  });
  let send: () => Promise<unknown>;
  let close: () => void;
  if (a.mode === 'notifier') {
    const n = createSmtpNotifier({ url: a.url, from: 'trackgate@localhost' });
    send = () =>
      n.send({
        channel: 'Email',
        to: a.to,
        subject: email.subject,
        text: email.text,
        html: email.html,
        deviceId: 'bench-alerts-huge',
        alertName: 'SOSButton',
      });
    close = () => void n.close();
  } else {
    const u = new URL(a.url);
    const port = Number(u.port);
    const t = nodemailer.createTransport(
      {
        host: u.hostname,
        port,
        pool: true,
        maxConnections: 3,
        getSocket: (_o: unknown, cb: (err: Error | null, s?: { connection: net.Socket }) => void) => {
          const s = net.connect({ host: u.hostname, port, noDelay: true }, () => cb(null, { connection: s }));
          s.once('error', (e) => cb(e));
        },
      } as nodemailer.TransportOptions,
      { from: 'trackgate@localhost' },
    );
    send = () => t.sendMail({ to: a.to, subject: email.subject, text: email.text, html: email.html });
    close = () => t.close();
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  let sent = 0;
  await Promise.all(
    Array.from({ length: a.concurrency }, async () => {
      while (next < a.count) {
        next++;
        await send();
        sent++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  close();
  return { sent, seconds, perSec: sent / seconds, cpuPct: ((cpu.user + cpu.system) / 1000 / (seconds * 1000)) * 100 };
}

serveCommands({ run });
