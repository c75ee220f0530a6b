/** One contract for every Notifier: SMTP and HTTP SMS, each against a real receiver. */
import test from 'ava';
import http from 'node:http';
import net from 'node:net';
import type { Notifier, OutgoingMessage } from '../../../core/notify/notifier.js';
import { createSmtpNotifier } from '../../../core/notify/notifier.smtp.js';
import { createSmsHttpNotifier } from '../../../core/notify/notifier.sms-http.js';
import { startSmsReceiver, startSmtpReceiver } from '../../helpers/receivers.js';

interface Fixture {
  notifier: Notifier;
  message: OutgoingMessage;
  /** recipients the receiver has accepted so far */
  delivered(): string[];
  /** recipients the receiver was asked for and refused so far */
  refused(): string[];
  close(): Promise<void>;
}

const base = { text: 'SOSButton on Truck 1', deviceId: '356307042441013', alertName: 'SOSButton' };
// long enough that close() ends a send before it on a busy machine (300 ms was not), and that a
// timeout's firing late there stays far below what an ignored timeout would take (nodemailer's 30 s+)
const TIMEOUT_MS = 5000;

/** A receiver that takes the connection (and, over HTTP, the request) and never answers. */
async function silentReceiver(kind: 'tcp' | 'http'): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = kind === 'tcp' ? net.createServer() : http.createServer(() => {});
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: kind === 'tcp' ? `smtp://127.0.0.1:${port}` : `http://127.0.0.1:${port}/sms`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One implementation: against a live receiver, a refusing one, or one that never answers. */
interface Implementation {
  make(failing: boolean): Promise<Fixture>;
  silent(): Promise<{ notifier: Notifier; message: OutgoingMessage; close(): Promise<void> }>;
}

const implementations: Record<string, Implementation> = {
  smtp: {
    async make(failing) {
      const rx = await startSmtpReceiver({ rejectRecipients: failing });
      const notifier = createSmtpNotifier({ url: rx.url, from: 'trackgate <alerts@example.com>' });
      return {
        notifier,
        message: { ...base, channel: 'Email', to: 'ops@example.com', subject: 'SOSButton: Truck 1' },
        delivered: () => rx.mails.flatMap((m) => m.recipients),
        refused: () => [...rx.rejected],
        close: async () => {
          await notifier.close();
          await rx.close();
        },
      };
    },
    async silent() {
      const rx = await silentReceiver('tcp');
      const notifier = createSmtpNotifier({ url: rx.url, from: 'alerts@example.com', timeoutMs: TIMEOUT_MS });
      return {
        notifier,
        message: { ...base, channel: 'Email', to: 'ops@example.com' },
        close: async () => {
          await notifier.close();
          await rx.close();
        },
      };
    },
  },
  'sms-http': {
    async make(failing) {
      const rx = await startSmsReceiver({ status: failing ? 500 : 200 });
      const notifier = createSmsHttpNotifier({ url: rx.url, timeoutMs: 5000 });
      return {
        notifier,
        message: { ...base, channel: 'SMS', to: '+34600111222' },
        delivered: () => rx.requests.filter((r) => r.status < 300).map((r) => (r.body as { to: string }).to),
        refused: () => rx.requests.filter((r) => r.status >= 300).map((r) => (r.body as { to: string }).to),
        close: async () => {
          await notifier.close();
          await rx.close();
        },
      };
    },
    async silent() {
      const rx = await silentReceiver('http');
      const notifier = createSmsHttpNotifier({ url: rx.url, timeoutMs: TIMEOUT_MS });
      return {
        notifier,
        message: { ...base, channel: 'SMS', to: '+34600111222' },
        close: async () => {
          await notifier.close();
          await rx.close();
        },
      };
    },
  },
};

for (const [name, { make, silent }] of Object.entries(implementations)) {
  test(`notifier (${name}): send resolves once a live receiver accepted the message`, async (t) => {
    const fx = await make(false);
    t.teardown(() => fx.close());
    await fx.notifier.send(fx.message);
    t.deepEqual(fx.delivered(), [fx.message.to]);
    t.deepEqual(fx.refused(), []);
  });

  test(`notifier (${name}): send throws when the receiver refuses, having asked it once`, async (t) => {
    const fx = await make(true);
    t.teardown(() => fx.close());
    await t.throwsAsync(fx.notifier.send(fx.message), { instanceOf: Error });
    // The receiver itself said no, once: not a send that failed before reaching it, nor one retried
    // behind the outbox's back (the outbox owns retries and the daily count).
    t.deepEqual(fx.refused(), [fx.message.to]);
    t.deepEqual(fx.delivered(), []);
  });

  test(`notifier (${name}): several concurrent sends all arrive`, async (t) => {
    const fx = await make(false);
    t.teardown(() => fx.close());
    await Promise.all(Array.from({ length: 5 }, () => fx.notifier.send(fx.message)));
    t.is(fx.delivered().length, 5);
  });

  test(`notifier (${name}): send throws within its timeout when the receiver never answers`, async (t) => {
    const fx = await silent();
    t.teardown(() => fx.close());
    const started = Date.now();
    await t.throwsAsync(fx.notifier.send(fx.message), { instanceOf: Error });
    const took = Date.now() - started;
    t.true(took >= TIMEOUT_MS - 50 && took < 3 * TIMEOUT_MS, `threw after ${took} ms`);
  });

  test(`notifier (${name}): close() ends a send in flight at once, and later sends throw`, async (t) => {
    const fx = await silent();
    t.teardown(() => fx.close());
    const { notifier } = fx;
    const sending = notifier.send(fx.message);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await notifier.close();
    await t.throwsAsync(sending, { message: /closed/ });
    t.true(Date.now() - started < TIMEOUT_MS, 'before its timeout');
    await t.throwsAsync(notifier.send(fx.message), { message: /closed/ });
  });
}
