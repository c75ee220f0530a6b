/** One contract for every Notifier: SMTP and HTTP SMS, each against a real receiver. */
import test from 'ava';
import type { Notifier, OutgoingMessage } from '../../../core/notify/notifier.js';
import { createSmtpNotifier } from '../../../core/notify/notifier.smtp.js';
import { createSmsHttpNotifier } from '../../../core/notify/notifier.sms-http.js';
import { startSmsReceiver, startSmtpReceiver } from '../../helpers/receivers.js';

interface Fixture {
  notifier: Notifier;
  message: OutgoingMessage;
  /** recipients the receiver has accepted so far */
  delivered(): string[];
  close(): Promise<void>;
}

const base = { text: 'SOSButton on Truck 1', deviceId: '356307042441013', alertName: 'SOSButton' };

const implementations: Record<string, (failing: boolean) => Promise<Fixture>> = {
  async smtp(failing) {
    const rx = await startSmtpReceiver({ rejectRecipients: failing });
    const notifier = createSmtpNotifier({ url: rx.url, from: 'trackgate <alerts@example.com>' });
    return {
      notifier,
      message: { ...base, channel: 'Email', to: 'ops@example.com', subject: 'SOSButton: Truck 1' },
      delivered: () => rx.mails.flatMap((m) => m.recipients),
      close: async () => { await notifier.close(); await rx.close(); },
    };
  },
  async 'sms-http'(failing) {
    const rx = await startSmsReceiver({ status: failing ? 500 : 200 });
    const notifier = createSmsHttpNotifier({ url: rx.url, timeoutMs: 5000 });
    return {
      notifier,
      message: { ...base, channel: 'SMS', to: '+34600111222' },
      delivered: () => (failing ? [] : rx.requests.map((r) => (r.body as { to: string }).to)),
      close: async () => { await notifier.close(); await rx.close(); },
    };
  },
};

for (const [name, make] of Object.entries(implementations)) {
  test(`notifier (${name}): send resolves once a live receiver accepted the message`, async (t) => {
    const fx = await make(false);
    t.teardown(() => fx.close());
    await fx.notifier.send(fx.message);
    t.deepEqual(fx.delivered(), [fx.message.to]);
  });

  test(`notifier (${name}): send throws when the receiver refuses`, async (t) => {
    const fx = await make(true);
    t.teardown(() => fx.close());
    await t.throwsAsync(fx.notifier.send(fx.message), { instanceOf: Error });
    t.deepEqual(fx.delivered(), []);
  });

  test(`notifier (${name}): several concurrent sends all arrive`, async (t) => {
    const fx = await make(false);
    t.teardown(() => fx.close());
    await Promise.all(Array.from({ length: 5 }, () => fx.notifier.send(fx.message)));
    t.is(fx.delivered().length, 5);
  });
}
