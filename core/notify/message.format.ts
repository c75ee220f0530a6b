/** The words of an alert notification: an e-mail (subject, text, simple HTML) and a short SMS. */
import { DateTime } from 'luxon';

export interface AlertNotice {
  deviceName: string;
  deviceId: string;
  alertName: string;
  /** the alert rule that raised it (its name), if one did */
  ruleName?: string;
  text: string | null;
  dateTime: Date;
  latitude: number | null;
  longitude: number | null;
  /** the account's IANA time zone; an unknown one falls back to UTC */
  timeZone: string;
}

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

/** The SMS length that still fits one GSM-7 segment. */
export const SMS_MAX = 160;
/** A subject's length at most: mail clients show far less, and RFC 5322 §2.1.1 wants lines under 78 (nodemailer folds them). */
export const SUBJECT_MAX = 200;

// 5 decimals is about 1 m, finer than any tracker's fix.
const coord = (deg: number): string => deg.toFixed(5);

const hasPosition = (n: AlertNotice): n is AlertNotice & { latitude: number; longitude: number } =>
  n.latitude !== null && n.longitude !== null && Number.isFinite(n.latitude) && Number.isFinite(n.longitude);

export function mapLink(latitude: number, longitude: number): string {
  const lat = coord(latitude);
  const lon = coord(longitude);
  return `https://www.openstreetmap.org/?mlat=${lat}&mlon=${lon}#map=16/${lat}/${lon}`;
}

function localTime(n: AlertNotice): DateTime {
  const t = DateTime.fromJSDate(n.dateTime, { zone: n.timeZone });
  return t.isValid ? t : DateTime.fromJSDate(n.dateTime, { zone: 'UTC' });
}

/** `2026-03-01 13:30:00 Europe/Madrid (UTC+01:00)` */
export function formatLocalTime(n: AlertNotice): string {
  const t = localTime(n);
  return `${t.toFormat('yyyy-MM-dd HH:mm:ss')} ${t.zoneName} (UTC${t.toFormat('ZZ')})`;
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

// Three dots, not '…': one character outside GSM-7 turns the whole SMS into UCS-2 (70 per segment).
const cut = (s: string, max: number): string =>
  s.length <= max ? s : max <= 3 ? s.slice(0, Math.max(max, 0)) : `${s.slice(0, max - 3).trimEnd()}...`;

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

export function formatAlertEmail(n: AlertNotice): EmailContent {
  const when = formatLocalTime(n);
  const text = n.text?.trim() || null;
  const position = hasPosition(n) ? `${coord(n.latitude)}, ${coord(n.longitude)}` : null;
  const link = hasPosition(n) ? mapLink(n.latitude, n.longitude) : null;

  const lines = [
    `${n.alertName} on ${n.deviceName} (${n.deviceId})`,
    ...(n.ruleName ? [`Rule: "${n.ruleName}" (${n.alertName})`] : []),
    '',
    ...(text ? [text, ''] : []),
    `Time: ${when}`,
    `Position: ${position ?? 'unknown'}`,
    ...(link ? [`Map: ${link}`] : []),
  ];

  const h = escapeHtml;
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif">',
    `<h2>${h(n.alertName)} on ${h(n.deviceName)}</h2>`,
    ...(text ? [`<p>${h(text)}</p>`] : []),
    '<table>',
    `<tr><th align="left">Device</th><td>${h(n.deviceName)} (${h(n.deviceId)})</td></tr>`,
    ...(n.ruleName ? [`<tr><th align="left">Rule</th><td>${h(n.ruleName)} (${h(n.alertName)})</td></tr>`] : []),
    `<tr><th align="left">Time</th><td>${h(when)}</td></tr>`,
    `<tr><th align="left">Position</th><td>${position && link ? `<a href="${h(link)}">${h(position)}</a>` : 'unknown'}</td></tr>`,
    '</table>',
    '</body></html>',
  ].join('\n');

  return { subject: alertSubject(n), text: lines.join('\n') + '\n', html };
}

/**
 * `CheckArea "Depot watch": Van 7 - Entered the zone "Depot"`: the alert, the rule that raised it,
 * the device and what happened, so that entering and leaving (or two rules of one kind) read apart
 * in a list of mails. Over SUBJECT_MAX the text is shortened (the body has it whole).
 */
export function alertSubject(n: AlertNotice): string {
  const head = oneLine(`${n.alertName}${n.ruleName ? ` "${n.ruleName}"` : ''}: ${n.deviceName}`);
  const text = oneLine(n.text ?? '');
  if (!text) return cut(head, SUBJECT_MAX);
  const room = SUBJECT_MAX - head.length - 3;
  return room > 10 ? `${head} - ${cut(text, room)}` : cut(head, SUBJECT_MAX);
}

/**
 * `SOSButton Truck 1: SOS pressed 2026-03-01 13:30 https://www.openstreetmap.org/?mlat=…&mlon=…`;
 * a rule's alert names the rule: `CheckArea "Depot watch" Van 7: Entered the zone "Depot" …`.
 * Over 160 characters the rule's name is shortened first, then the alert text, then the device
 * name; the alert name, what happened, the time and the position are what a person on the road
 * acts on.
 */
export function formatAlertSms(n: AlertNotice): string {
  const when = localTime(n).toFormat('yyyy-MM-dd HH:mm');
  const where = hasPosition(n)
    ? `https://www.openstreetmap.org/?mlat=${coord(n.latitude)}&mlon=${coord(n.longitude)}`
    : '';
  const alertName = oneLine(n.alertName);
  let rule = oneLine(n.ruleName ?? '');
  let device = oneLine(n.deviceName);
  let text = oneLine(n.text ?? '');

  const compose = () =>
    [[alertName, rule && `"${rule}"`, device].filter(Boolean).join(' ') + (text ? ':' : ''), text, when, where]
      .filter(Boolean)
      .join(' ');
  let over = compose().length - SMS_MAX;
  if (over > 0 && rule) {
    rule = rule.length - over >= 8 ? cut(rule, rule.length - over) : '';
    over = compose().length - SMS_MAX;
  }
  if (over > 0 && text) {
    text = cut(text, text.length - over);
    over = compose().length - SMS_MAX;
  }
  if (over > 0) device = cut(device, device.length - over);
  return compose();
}
