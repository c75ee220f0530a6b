/**
 * Daily limits count per device, channel and day, where the day is the account's: it starts at
 * midnight in the account's IANA time zone (luxon handles DST: such a day may be 23 or 25 hours).
 */
import { DateTime } from 'luxon';
import type { NotificationChannel } from '../model/alert.js';

export interface Day {
  /** yyyy-MM-dd in the account's zone */
  date: string;
  /** the first instant of the next day */
  end: Date;
}

export function dayIn(at: Date, timeZone: string): Day {
  let local = DateTime.fromJSDate(at, { zone: timeZone });
  if (!local.isValid) local = DateTime.fromJSDate(at, { zone: 'UTC' });
  return { date: local.toISODate()!, end: local.startOf('day').plus({ days: 1 }).toJSDate() };
}

export const quotaKey = (channel: NotificationChannel, deviceId: string, date: string): string =>
  `sent:${channel === 'Email' ? 'email' : 'sms'}:${deviceId}:${date}`;
