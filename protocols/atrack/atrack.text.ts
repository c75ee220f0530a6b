/**
 * Text reports `@P,<crc>,<length>,<seq>,<unit id>,<record>[\r\n<record>…]` and the `$` answers to
 * commands (AtrackProtocolDecoder.decodeText / decodeInfo).
 */
import { ProtocolError, type DecodeContext, type DecodedMessage, type DecodeResult } from '../types.js';
import { reportAck } from './atrack.binary.js';
import { PROTOCOL } from './atrack.constants.js';
import type { AtrackOptions } from './atrack.options.js';
import { newRecord, put } from './atrack.record.js';
import { javaInt, javaSplit, readTextCustom } from './atrack.text-fields.js';

/** Java's String.trim: every character up to U+0020 is stripped from both ends */
export function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

/**
 * One record: GPS time (UNIX seconds or yyyyMMddHHmmss), RTC and send times, longitude and latitude
 * in millionths, course, report id, odometer (0.1 km), HDOP (tenths), inputs, speed km/h, outputs,
 * analog input, driver id, two temperatures, the text message and what follows it (custom fields).
 */
const RECORD =
  /^(\d+),\d+,\d+,(-?\d+),(-?\d+),(\d+),(\d+),(\d+\.?\d*),(\d+),(\d+),(\d+),(\d+),(\d+),([^,]+)?,(\d+),(\d+),(?:[^,]*,(.*))?$/;

function recordTime(time: string): Date {
  if (time.length < 14) return new Date(javaInt(time, true) * 1000);
  const t = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(time);
  if (!t) throw new ProtocolError(PROTOCOL, `time "${time.slice(0, 20)}" is not yyyyMMddHHmmss`);
  const [y, mo, d, h, mi, s] = t.slice(1).map(Number);
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59)
    throw new ProtocolError(PROTOCOL, `time "${time}" is no date`);
  return date;
}

/** a record line, or undefined when it is not one (the reference skips such lines) */
function decodeLine(line: string, o: AtrackOptions): DecodedMessage | undefined {
  const f = RECORD.exec(line);
  if (!f) return undefined;
  const s = newRecord();
  const m = s.m;
  m.fixTime = recordTime(f[1]);
  const longitudeDeg = javaInt(f[2]) / 1e6;
  const latitudeDeg = javaInt(f[3]) / 1e6;
  const course = javaInt(f[4]);
  if (Math.abs(latitudeDeg) <= 90 && Math.abs(longitudeDeg) <= 180) {
    m.location = { latitudeDeg, longitudeDeg, valid: true, speedKmh: javaInt(f[9]) };
    if (course <= 360) m.location.courseDeg = course;
  }
  put(s, 'event', javaInt(f[5]));
  put(s, 'odometer', Number(f[6]) * 100);
  put(s, 'hdop', javaInt(f[7]) / 10);
  put(s, 'input', javaInt(f[8]));
  put(s, 'output', javaInt(f[10]));
  put(s, 'adc1', javaInt(f[11]));
  put(s, 'driverUniqueId', f[12]);
  put(s, 'temp1', javaInt(f[13]));
  put(s, 'temp2', javaInt(f[14]));
  if (o.custom) customPart(s, f[15], o);
  return m;
}

/** the custom fields after the text message, by the configured form or the record's own `%CI…,` */
function customPart(s: ReturnType<typeof newRecord>, data: string | undefined, o: AtrackOptions): void {
  if (data === undefined) return;
  let form = o.form;
  let values = data;
  if (form === undefined) {
    const comma = data.indexOf(',');
    if (comma < 0) return;
    form = data.slice(0, comma).slice(3);
    values = data.slice(comma + 1);
  }
  if (form.length > 1) readTextCustom(s, values, form, o.frameMask);
}

/** FE 02, the length field (3rd) as u64, the sequence (4th) as u16: what the reference writes */
function textAck(header: string[], frame: Buffer, identity: string): Buffer {
  const id = Buffer.alloc(8);
  try {
    id.writeBigUInt64BE(BigInt.asUintN(64, BigInt(javaInt(header[2] ?? '', true))));
    return reportAck(id, javaInt(header[3] ?? ''));
  } catch {
    throw new ProtocolError(PROTOCOL, 'text report length or sequence is not a number', frame, { identity });
  }
}

/**
 * A text report: the header names the device (5th field) and the sequence (4th); the ack is FE 02,
 * then as u64 the value of the 3rd field (the length field, as the reference writes it), then the
 * sequence as u16. Lines that are no record are skipped; a record that cannot be read is left
 * out with a warning.
 */
export function decodeTextReport(frame: Buffer, o: AtrackOptions): DecodeResult {
  const sentence = javaTrim(frame.toString('latin1'));
  let at = -1;
  for (let i = 0; i < 5 && (i === 0 || at >= 0); i++) at = sentence.indexOf(',', at + 1);
  if (at < 0) throw new ProtocolError(PROTOCOL, 'text report header has fewer than five fields', frame);
  const header = sentence.slice(0, at).split(',');
  const identity = header[4];
  if (!/^[0-9A-Za-z]{1,20}$/.test(identity ?? ''))
    throw new ProtocolError(
      PROTOCOL,
      `unit id "${(identity ?? '').slice(0, 24)}" is not 1-20 letters or digits`,
      frame,
    );
  const ack = textAck(header, frame, identity);
  const messages: DecodedMessage[] = [];
  const warnings: string[] = [];
  for (const line of javaSplit(sentence.slice(at + 1), '\r\n')) {
    try {
      const m = decodeLine(line, o);
      if (m) messages.push(m);
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      warnings.push(`atrack: record left out: ${e.message}`);
    }
  }
  return {
    identity,
    messages,
    replies: [ack],
    ...(warnings.length > 0 && { warnings }),
  };
}

/** `$INFO=<unit id>,<model>,<firmware>,<imei>,<imsi>,<iccid>,<power>,<battery>,<satellites>,<gsm>,<rssi>,…` */
const INFO = /^\$INFO=(\d+),([^,]+),([^,]+),\d+,\d+,\d+,(\d+),(\d+),(\d+),\d+,(\d+),\d+,\d+.*$/;

/**
 * A `$` line: the answer to a command. `$INFO` names the device and reports its model, firmware,
 * power and battery (tenths of a volt), satellites and signal; any other answer (`$OK`, `$ERROR=…`)
 * is kept as `result` for the device the connection already knows (none: nothing).
 */
export function decodeAnswer(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const text = javaTrim(frame.toString('latin1'));
  if (text.startsWith('$INFO')) {
    const f = INFO.exec(text);
    if (!f) return { messages: [], replies: [] };
    const m: DecodedMessage = {
      alarms: [],
      attributes: {
        model: f[2],
        versionFw: f[3],
        power: javaInt(f[4]) / 10,
        battery: javaInt(f[5]) / 10,
        sat: javaInt(f[6]),
        rssi: javaInt(f[7]),
      },
    };
    return { identity: f[1], messages: [m], replies: [], commandResults: [{ text }] };
  }
  if (ctx.deviceId === undefined) return { messages: [], replies: [] };
  return { messages: [{ alarms: [], attributes: { result: text } }], replies: [], commandResults: [{ text }] };
}
