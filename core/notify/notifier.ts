/**
 * One way out for alert notifications (docs/contract.md §2 "Alerts": one e-mail per alertEmails
 * address, one SMS per alertPhones number). Two implementations share one contract: SMTP and an
 * HTTP SMS gateway. send() resolves once the receiver accepted the message and throws otherwise,
 * so the outbox can retry, and release the daily-limit place of a message that finally failed.
 * Every send ends within the notifier's timeout, whatever the receiver does (refuses, never
 * greets, never answers).
 */
import type { NotificationChannel } from '../model/alert.js';

export interface OutgoingMessage {
  channel: NotificationChannel;
  /** an e-mail address or a phone number in international form */
  to: string;
  subject?: string;
  text: string;
  html?: string;
  deviceId: string;
  alertName: string;
}

export interface Notifier {
  send(message: OutgoingMessage): Promise<void>;
  /** Closes pooled connections; sends still in flight throw at once, later ones too. */
  close(): Promise<void>;
}
