import type { AttributeValue, CommandResult, DecodeContext, DecodedMessage, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import { decodeCcc, decodeCce, type BinaryBody } from './meitrack.binary.js';
import { EVENT_ALARMS, EVENT_DRIVER_CARD, PATTERN_REPORT, PROTOCOL, REPORT_TYPES } from './meitrack.constants.js';
import { meitrackChecksum } from './meitrack.frame.js';

/** A frame's header and where its content and checksum are. */
export interface MeitrackFrame {
  frame: Buffer;
  text: string;
  /** the data identifier, echoed by answers and acknowledgements */
  flag: string;
  imei: string;
  /** the command word: AAA, CCC, CCE, D82, C01, ... */
  type: string;
  /** index of the first byte after `<type>,` (or of `*` when the frame ends at the type) */
  bodyStart: number;
  /** index of the `*` before the checksum (the frame's length when there is none) */
  star: number;
}

export type MessageHandler = (f: MeitrackFrame, ctx: DecodeContext) => DecodeResult;

const int = (s: string): number => parseInt(s, 10);
const hexInt = (s: string | undefined): number => (s ? parseInt(s, 16) : 0);

/** `@@<flag><len>,<imei>,<content>*XX\r\n`, len counting from the first `,` through `\r\n` */
export function serverFrame(flag: string, imei: string, content: string): Buffer {
  const length = 1 + imei.length + 1 + content.length + 1 + 2 + 2;
  const head = `@@${flag}${length},${imei},${content}*`;
  return Buffer.from(`${head}${meitrackChecksum(head)}\r\n`, 'latin1');
}

/** Battery and power from the hex analog field by model (MeitrackProtocolDecoder.decodeRegular), volts. */
function analogVolts(model: string | undefined, battery: number, power: number): [number, number] {
  switch ((model ?? '').toUpperCase()) {
    case 'MVT340':
    case 'MVT380':
      return [(battery * 3.0 * 2.0) / 1024.0, (power * 3.0 * 16.0) / 1024.0];
    case 'MT90':
      return [(battery * 3.3 * 2.0) / 4096.0, power];
    case 'T1':
    case 'T3':
    case 'MVT100':
    case 'MVT600':
    case 'MVT800':
    case 'TC68':
    case 'TC68S':
      return [(battery * 3.3 * 2.0) / 4096.0, (power * 3.3 * 16.0) / 4096.0];
    default:
      return [battery / 100, power / 100];
  }
}

/** `IIVVVV[|IIVVVV]...` temperatures: protocol 3 and later a signed hundredth, before it whole.hundredths */
function temperatures(a: Record<string, AttributeValue>, field: string, protocol: number): void {
  for (const t of field.split('|')) {
    const index = parseInt(t.substring(0, 2), 16);
    if (protocol >= 3) {
      const raw = parseInt(t.substring(2, 6), 16);
      a[`temp${index}`] = (raw >= 0x8000 ? raw - 0x10000 : raw) * 0.01;
    } else {
      const whole = parseInt(t.substring(2, 4), 16);
      const value = whole >= 0x80 ? whole - 0x100 : whole;
      a[`temp${index}`] = value + (value < 0 ? -0.01 : 0.01) * parseInt(t.substring(4), 16);
    }
  }
}

/** A frame of this device that this decoder cannot read (Traccar returns nothing for it). */
const unreadable = (f: MeitrackFrame, reason: string): ProtocolError =>
  new ProtocolError(PROTOCOL, reason, f.frame, { identity: f.imei });

/** AAA (and AFF) text report, MeitrackProtocolDecoder.decodeRegular */
export const decodeReport: MessageHandler = (f, ctx) => {
  const g = PATTERN_REPORT.exec(f.text);
  if (!g) {
    if (REPORT_TYPES.has(f.type)) throw unreadable(f, `unrecognised ${f.type} report`);
    return decodeAnswer(f, ctx);
  }
  const event = int(g[2]);
  const lat = Number(g[3]);
  const lon = Number(g[4]);
  if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180))
    throw new ProtocolError(PROTOCOL, `coordinates out of range (${lat}, ${lon})`, f.frame);
  const [yy, mo, dd, hh, mi, ss] = [5, 6, 7, 8, 9, 10].map((i) => int(g[i]));
  if (mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh > 23 || mi > 59 || ss > 59)
    throw new ProtocolError(PROTOCOL, 'impossible report time', f.frame);
  const satellites = int(g[12]);
  const rssi = int(g[13]);
  const course = int(g[15]);
  const a: Record<string, AttributeValue> = {
    event,
    sat: satellites,
    rssi,
    hdop: Number(g[16]),
    odometer: int(g[18]),
    runtime: int(g[19]),
    input: hexInt(g[24]),
    output: hexInt(g[25]),
  };
  const m: DecodedMessage = {
    fixTime: new Date(Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss)),
    location: {
      latitudeDeg: lat,
      longitudeDeg: lon,
      valid: g[11] === 'A',
      satellites,
      speedKmh: Number(g[14]),
      courseDeg: course <= 360 ? course : course % 360,
      altitudeM: int(g[17]),
    },
    alarms: EVENT_ALARMS[event] ? [EVENT_ALARMS[event]] : [],
    attributes: a,
  };
  const [mcc, mnc] = [int(g[20]), int(g[21])];
  if (mcc !== 0 && mnc !== 0) {
    const network = new NetworkInfo();
    network.addCell(mcc, mnc, hexInt(g[22]), hexInt(g[23]), rssi);
    network.applyTo(a);
  }
  if (g[26] !== undefined) {
    a.battery = Number(g[26]);
    a.power = Number(g[27]);
  } else {
    [28, 29, 30].forEach((i, n) => {
      if (g[i] !== undefined) a[`adc${n + 1}`] = hexInt(g[i]);
    });
    [a.battery, a.power] = analogVolts(ctx.model, hexInt(g[31]), hexInt(g[32]));
  }
  if (g[33]) {
    if (event === EVENT_DRIVER_CARD) a.driverUniqueId = g[33].replace(/[\s|]/g, '');
    else a.eventData = g[33];
  }
  const protocol = g[35] ? int(g[35]) : 0;
  if (g[36]) a.fuel = parseInt(g[36].substring(0, 2), 16) + parseInt(g[36].substring(2), 16) * 0.01;
  if (g[37]) temperatures(a, g[37], protocol);
  if (g[39] !== undefined) {
    const data = g[39].split(',');
    if (data[1]) a.tempData = data[1];
  }
  return { identity: f.imei, messages: [m], replies: [] };
};

/** The frame's content between `<imei>,` and `*`: the command word and what follows it. */
const content = (f: MeitrackFrame): string =>
  f.text.substring(f.text.indexOf(',', f.text.indexOf(',') + 1) + 1, f.star);

/**
 * A device's answer to a command (`$$<flag>..,<imei>,C01,OK*..`): the same command word and data
 * identifier as the command (Meitrack GPRS protocol 1.1), which tie it to its command. An answer
 * carrying data beyond `OK` (D82's result, a parameter read back) is also kept as a `result` report.
 */
export const decodeAnswer: MessageHandler = (f) => {
  const text = content(f);
  if (!/^[\x20-\x7e]*$/.test(text)) throw unreadable(f, `unrecognised ${f.type} frame`);
  const answer: CommandResult = { text, command: f.type, flag: f.flag };
  const plainOk = /^[^,]+,OK$/i.test(text);
  return {
    identity: f.imei,
    messages: plainOk ? [] : [{ alarms: [], attributes: { result: text } }],
    replies: [],
    commandResults: [answer],
  };
};

const binaryBody = (f: MeitrackFrame): BinaryBody => ({ frame: f.frame, start: f.bodyStart, end: f.star });

/** CCC batch: acknowledged with `@@<flag><len>,<imei>,CCC,<n>*XX\r\n`, after which the tracker deletes those n */
export const decodeCccBatch: MessageHandler = (f) => {
  const messages = decodeCcc(binaryBody(f));
  return { identity: f.imei, messages, replies: [serverFrame(f.flag, f.imei, `CCC,${messages.length}`)] };
};

/** CCE batch: Traccar sends nothing back, and nor do we (the tracker's cache logic does not wait for one) */
export const decodeCceBatch: MessageHandler = (f) => ({
  identity: f.imei,
  messages: decodeCce(binaryBody(f)),
  replies: [],
});

/** AAC (a confirmation request): answered `@@z27,<imei>,AAC,1*XX\r\n` (MeitrackProtocolDecoder) */
export const decodeAac: MessageHandler = (f) => ({
  identity: f.imei,
  messages: [],
  replies: [serverFrame('z', f.imei, 'AAC,1')],
});

/** D00 picture packets: pictures are not stored; the device is named */
export const decodePicture: MessageHandler = (f) => ({ identity: f.imei, messages: [], replies: [] });
