import test from 'ava';
import {
  formatAlertEmail,
  formatAlertSms,
  mapLink,
  SMS_MAX,
  type AlertNotice,
} from '../../../core/notify/message.format.js';

const notice: AlertNotice = {
  deviceName: 'Truck 1',
  deviceId: '356307042441013',
  alertName: 'SOSButton',
  text: 'SOS button pressed',
  dateTime: new Date('2026-03-01T12:30:05Z'),
  latitude: 40.4168,
  longitude: -3.7038,
  timeZone: 'Europe/Madrid',
};

const MAP = 'https://www.openstreetmap.org/?mlat=40.41680&mlon=-3.70380#map=16/40.41680/-3.70380';

test('message.format: the map link opens OpenStreetMap at the position, zoom 16', (t) => {
  t.is(mapLink(40.4168, -3.7038), MAP);
});

test('message.format: the e-mail names the device and alert, local time and map link', (t) => {
  const mail = formatAlertEmail(notice);
  t.is(mail.subject, 'SOSButton: Truck 1 - SOS button pressed');
  t.true(mail.text.includes('SOSButton on Truck 1 (356307042441013)'));
  t.true(mail.text.includes('SOS button pressed'));
  t.true(mail.text.includes('Time: 2026-03-01 13:30:05 Europe/Madrid (UTC+01:00)'), mail.text);
  t.true(mail.text.includes('Position: 40.41680, -3.70380'));
  t.true(mail.text.includes(`Map: ${MAP}`));
  t.true(mail.html.includes('<h2>SOSButton on Truck 1</h2>'));
  t.true(mail.html.includes(`<a href="${MAP.replace('&', '&amp;')}">40.41680, -3.70380</a>`));
  t.true(mail.html.includes('2026-03-01 13:30:05 Europe/Madrid'));
});

test('message.format: local time follows the account zone through daylight saving', (t) => {
  const summer = formatAlertEmail({ ...notice, dateTime: new Date('2026-07-01T12:30:05Z') });
  t.true(summer.text.includes('2026-07-01 14:30:05 Europe/Madrid (UTC+02:00)'));
  const nextDay = formatAlertEmail({ ...notice, timeZone: 'Pacific/Auckland' });
  t.true(nextDay.text.includes('2026-03-02 01:30:05 Pacific/Auckland (UTC+13:00)'));
  const unknown = formatAlertEmail({ ...notice, timeZone: 'Not/AZone' });
  t.true(unknown.text.includes('2026-03-01 12:30:05 UTC (UTC+00:00)'), 'an unknown zone falls back to UTC');
});

test('message.format: HTML escapes what the user typed; a missing position and text are said plainly', (t) => {
  const mail = formatAlertEmail({
    ...notice,
    deviceName: '<b>Van</b> & "Co"',
    text: null,
    latitude: null,
    longitude: null,
  });
  t.true(mail.html.includes('&lt;b&gt;Van&lt;/b&gt; &amp; &quot;Co&quot;'));
  t.false(mail.html.includes('<b>Van'));
  t.true(mail.text.includes('Position: unknown'));
  t.false(mail.text.includes('openstreetmap'));
  t.false(mail.text.includes('null'));
});

test('message.format: the subject stays on one line', (t) => {
  t.is(
    formatAlertEmail({ ...notice, deviceName: 'Truck\r\nBcc: x@example.com' }).subject,
    'SOSButton: Truck Bcc: x@example.com - SOS button pressed',
  );
});

test('message.format: the SMS carries alert, device, text, local time and position in 160 characters', (t) => {
  const sms = formatAlertSms(notice);
  t.is(
    sms,
    'SOSButton Truck 1: SOS button pressed 2026-03-01 13:30 https://www.openstreetmap.org/?mlat=40.41680&mlon=-3.70380',
  );
  t.true(sms.length <= SMS_MAX);
});

test('message.format: a long SMS shortens the text first, then the device name, keeping time and position', (t) => {
  const longText = formatAlertSms({ ...notice, text: 'Speed limit exceeded on the motorway near the exit '.repeat(4) });
  t.is(longText.length, SMS_MAX);
  t.true(longText.startsWith('SOSButton Truck 1: Speed limit exceeded'));
  t.true(longText.includes('... 2026-03-01 13:30 https://www.openstreetmap.org/?mlat=40.41680&mlon=-3.70380'));
  t.true(/^[\x20-\x7e]*$/.test(longText), 'GSM-7 friendly: no ellipsis character');

  const longName = formatAlertSms({ ...notice, deviceName: 'A very long device name '.repeat(6), text: null });
  t.true(longName.length <= SMS_MAX);
  t.true(longName.startsWith('SOSButton A very long'));
  t.true(longName.endsWith('2026-03-01 13:30 https://www.openstreetmap.org/?mlat=40.41680&mlon=-3.70380'));

  t.is(
    formatAlertSms({ ...notice, latitude: null, longitude: null, text: null }),
    'SOSButton Truck 1 2026-03-01 13:30',
  );
});

test("message.format: a rule's alert names the rule in the subject, the text, the HTML and the SMS", (t) => {
  const entered = { ...notice, alertName: 'CheckArea', ruleName: 'Depot watch', text: 'Entered the zone "Depot"' };
  const mail = formatAlertEmail(entered);
  t.is(mail.subject, 'CheckArea "Depot watch": Truck 1 - Entered the zone "Depot"');
  t.true(mail.text.includes('Rule: "Depot watch" (CheckArea)'));
  t.true(mail.html.includes('<th align="left">Rule</th><td>Depot watch (CheckArea)</td>'));
  t.is(
    formatAlertSms(entered),
    'CheckArea "Depot watch" Truck 1: Entered the zone "Depot" 2026-03-01 13:30 https://www.openstreetmap.org/?mlat=40.41680&mlon=-3.70380',
  );
});

test('message.format: a long rule name is shortened first in the SMS, then dropped; what happened stays', (t) => {
  const sms = formatAlertSms({
    ...notice,
    alertName: 'CheckArea',
    ruleName: 'The rule with a very long name '.repeat(3),
    text: 'Left the zone "North warehouse"',
  });
  t.true(sms.length <= SMS_MAX, sms);
  t.true(sms.includes('Truck 1: Left the zone "North warehouse" 2026-03-01 13:30'), sms);
  t.regex(sms, /^CheckArea ("The rule with[^"]*\.\.\." )?Truck 1/);
});

test('message.format: a subject over 200 characters shortens the alert text', (t) => {
  const subject = formatAlertEmail({ ...notice, text: 'x'.repeat(500) }).subject;
  t.is(subject.length, 200);
  t.true(subject.startsWith('SOSButton: Truck 1 - xxx'));
  t.true(subject.endsWith('...'));
});
