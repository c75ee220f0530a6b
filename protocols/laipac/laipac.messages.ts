import type { AttributeValue, DecodeContext, DecodedMessage } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import { knotsToKmh } from '../shared/units.js';
import {
  AVRMC,
  DEFAULT_DEVICE_PASSWORD,
  EAVSYS,
  EVENT_ALARMS,
  EVENT_CONFIRMATIONS,
  MODEL_SF_LITE,
  MODELS_WITH_ADC2,
  SETTING_DEVICE_PASSWORD,
} from './laipac.constants.js';

const int = (s: string): number => Number.parseInt(s, 10);
const float = (s: string): number => Number.parseFloat(s);

/** XOR of the characters between `$` and `*`, as two upper-case hex digits (NMEA). */
export function nmeaChecksum(body: string): string {
  let x = 0;
  for (let i = 0; i < body.length; i++) x ^= body.charCodeAt(i) & 0xff;
  return x.toString(16).toUpperCase().padStart(2, '0');
}

/** `$<body>*XX` CR LF */
export const sentence = (body: string): Buffer => Buffer.from(`$${body}*${nmeaChecksum(body)}\r\n`, 'latin1');

function coordinate(degrees: string, minutes: string, hemisphere: string, negative: string): number {
  const value = int(degrees) + float(minutes) / 60;
  return hemisphere === negative ? -value : value;
}

/**
 * The event letter: `A`-`D` and `O`-`R` are input states (in1 bit 0, in2 bit 1; the SF-Lite's
 * in3 is off for A-D, on for O-R) and no event; any other is the `event` attribute.
 */
function decodeEvent(event: string, a: Record<string, AttributeValue>, model: string | undefined): void {
  const base = event >= 'A' && event <= 'D' ? 'A' : event >= 'O' && event <= 'R' ? 'O' : undefined;
  if (!base) {
    a.event = event;
    return;
  }
  const bits = event.charCodeAt(0) - base.charCodeAt(0);
  a.in1 = (bits & 1) !== 0;
  a.in2 = (bits & 2) !== 0;
  if (model === MODEL_SF_LITE) a.in3 = base === 'O';
}

function cellTower(g: RegExpExecArray, a: Record<string, AttributeValue>): void {
  if (g[23] === undefined) return;
  const network = new NetworkInfo();
  network.addCell(int(g[25]), int(g[26]), Number.parseInt(g[23], 16), Number.parseInt(g[24], 16));
  network.applyTo(a);
}

/** An `$AVRMC` sentence's fields, or undefined when it does not read (or names no place on Earth). */
export function readAvrmc(
  text: string,
  model: string | undefined,
): { identity: string; message: DecodedMessage; status: string; event: string; checksum: string } | undefined {
  const g = AVRMC.exec(text);
  if (!g) return undefined;
  const latitudeDeg = coordinate(g[6], g[7], g[8], 'S');
  const longitudeDeg = coordinate(g[9], g[10], g[11], 'W');
  if (Math.abs(latitudeDeg) > 90 || Math.abs(longitudeDeg) > 180) return undefined;
  const status = g[5];
  const event = g[17];
  const a: Record<string, AttributeValue> = { status };
  decodeEvent(event, a, model);
  const battery = float(g[18].replace(/\./g, '')) / 1000;
  if (Number.isFinite(battery)) a.battery = battery;
  a.odometer = int(g[19]) * 1000;
  a.gps = int(g[20]);
  a.adc1 = int(g[21]) / 1000;
  if (model !== undefined && MODELS_WITH_ADC2.has(model)) a.adc2 = int(g[22]) / 1000;
  cellTower(g, a);
  const alarm = EVENT_ALARMS[event];
  const message: DecodedMessage = {
    fixTime: new Date(Date.UTC(2000 + int(g[16]), int(g[15]) - 1, int(g[14]), int(g[2]), int(g[3]), int(g[4]))),
    location: {
      latitudeDeg,
      longitudeDeg,
      valid: ['A', 'R', 'P'].includes(status.toUpperCase()),
      speedKmh: knotsToKmh(float(g[12])),
      courseDeg: float(g[13]),
    },
    alarms: alarm ? [alarm] : [],
    attributes: a,
  };
  return { identity: g[1], message, status, event, checksum: g[28] };
}

/**
 * What the server answers an `$AVRMC`: `$EAVACK,<event>,<the sentence's checksum>` when its status
 * letter is lower case, then `$AVCFG,<device password>,<code>` for the events that need it.
 */
export function avrmcReplies(status: string, event: string, checksum: string, ctx: DecodeContext): Buffer[] {
  const replies: Buffer[] = [];
  if (status !== status.toUpperCase()) replies.push(sentence(`EAVACK,${event},${checksum}`));
  const code = EVENT_CONFIRMATIONS[event];
  if (code) replies.push(sentence(`AVCFG,${devicePassword(ctx)},${code}`));
  return replies;
}

/** the device's password (setting `devicePassword`), when it is one a sentence can carry */
function devicePassword(ctx: DecodeContext): string {
  const password = ctx.options?.[SETTING_DEVICE_PASSWORD];
  return password !== undefined && /^[\x21-\x7e]+$/.test(password) && !/[,*$]/.test(password)
    ? password
    : DEFAULT_DEVICE_PASSWORD;
}

/** `$EAVSYS`: the SIM's ICCID and phone number and the firmware version, as a message without a fix. */
export function readEavsys(text: string, now: Date): { identity: string; message: DecodedMessage } | undefined {
  const g = EAVSYS.exec(text);
  if (!g) return undefined;
  const a: Record<string, AttributeValue> = { iccid: g[2] };
  if (g[3]) a.phone = g[3];
  if (g[4]) a.versionFw = g[4];
  return { identity: g[1], message: { fixTime: now, alarms: [], attributes: a } };
}
