/**
 * Binary reports (AtrackProtocolDecoder.decodeBinary / decodePhoto): after the 16-byte header,
 * `@P` carries records of at least 40 bytes, `@R` one chunk of a photo.
 */
import { ByteReader } from '../shared/byte-reader.js';
import { ProtocolError, type DecodeContext, type DecodedMessage, type DecodeResult } from '../types.js';
import { BINARY_FIELDS } from './atrack.binary-fields.js';
import { KEEPALIVE_MARK, MIN_RECORD_BYTES, PROTOCOL, SESSION_PHOTO } from './atrack.constants.js';
import type { AtrackOptions } from './atrack.options.js';
import { alarm, finishCell, newRecord, put, readCString, type RecordState } from './atrack.record.js';

/** `FULS:F=<hex> t=<hex> N=<hex>`: a fuel sensor's reading in the text message, N in tenths */
const FUEL_MESSAGE = /FULS:F=([0-9A-Fa-f]+) t=([0-9A-Fa-f]+) N=([0-9A-Fa-f]+)/;

/** The acknowledgement of a report: FE 02, the unit id (8 bytes) and the report's sequence number. */
export function reportAck(unitId: Buffer, sequence: number): Buffer {
  const ack = Buffer.alloc(12);
  ack.writeUInt16BE(KEEPALIVE_MARK, 0);
  unitId.copy(ack, 2, 0, 8);
  ack.writeUInt16BE(sequence & 0xffff, 10);
  return ack;
}

/** the record's time: a 7-byte date (`longDate`) or GPS, RTC and send times in UNIX seconds */
function recordTime(r: ByteReader, o: AtrackOptions): Date {
  if (o.longDate) {
    const year = r.u16();
    const [month, day, hour, minute, second] = [r.u8(), r.u8(), r.u8(), r.u8(), r.u8()];
    r.skip(7 + 7); // RTC and send time, same layout
    return new Date(Date.UTC(year < 100 ? year + 2000 : year, month - 1, day, hour, minute, second));
  }
  const fix = r.u32();
  r.skip(4 + 4); // RTC time, send time
  return new Date(fix * 1000);
}

/** the text message field: a fuel sensor reading or a message kept as it is */
function textMessage(s: RecordState, message: string | undefined, o: AtrackOptions): void {
  if (!message) return;
  const fuel = FUEL_MESSAGE.exec(message);
  if (!fuel) put(s, 'message', message);
  else {
    // decimal counts with hex letters are no reading (the reference fails on them)
    if (!o.decimalFuel || /^\d+$/.test(fuel[3])) put(s, 'fuel', Number.parseInt(fuel[3], o.decimalFuel ? 10 : 16) / 10);
  }
}

function customFields(r: ByteReader, s: RecordState, o: AtrackOptions): void {
  let form = o.form;
  if (form === undefined) {
    const own = readCString(r)?.trim();
    if (own === undefined || own.length < 3)
      throw new ProtocolError(PROTOCOL, 'a custom record without its form (%CI…)', r.buf);
    form = own.slice(3);
  }
  for (const key of form.slice(1).split('%')) {
    if (Object.hasOwn(BINARY_FIELDS, key)) BINARY_FIELDS[key](r, s);
  }
  finishCell(s, true);
}

/** One record: times, position, report type, odometer (0.1 km), HDOP, I/O, driver, temperatures, message. */
function decodeRecord(r: ByteReader, o: AtrackOptions, warnings: string[]): DecodedMessage {
  const s = newRecord();
  const m = s.m;
  m.fixTime = recordTime(r, o);
  const longitudeDeg = r.i32() / 1e6;
  const latitudeDeg = r.i32() / 1e6;
  const course = r.u16();
  if (Math.abs(latitudeDeg) <= 90 && Math.abs(longitudeDeg) <= 180) {
    m.location = { latitudeDeg, longitudeDeg, valid: true };
    if (course <= 360) m.location.courseDeg = course;
  } else warnings.push(`atrack: coordinates ${latitudeDeg},${longitudeDeg} out of range, position left out`);
  const type = r.u8();
  put(s, 'type', type);
  alarm(s, o.alarmMap.get(type));
  put(s, 'odometer', r.u32() * 100);
  put(s, 'hdop', r.u16() / 10);
  put(s, 'input', r.u8());
  const speedKmh = r.u16();
  if (m.location) m.location.speedKmh = speedKmh;
  put(s, 'output', r.u8());
  put(s, 'adc1', r.u16() / 1000);
  put(s, 'driverUniqueId', readCString(r));
  put(s, 'temp1', r.i16() / 10);
  put(s, 'temp2', r.i16() / 10);
  textMessage(s, readCString(r), o);
  if (o.custom) customFields(r, s, o);
  return m;
}

export function decodeRecords(r: ByteReader, o: AtrackOptions, warnings: string[]): DecodedMessage[] {
  const messages: DecodedMessage[] = [];
  while (r.remaining >= MIN_RECORD_BYTES) messages.push(decodeRecord(r, o, warnings));
  return messages;
}

interface PhotoState {
  time: number;
  parts: Record<number, number>;
}

/**
 * `@R` photo chunk: time, chunk index, chunk count, u16 length, JPEG bytes. trackgate stores no
 * pictures (as for every protocol): the chunks are acknowledged and counted in the session per
 * photo time (by index, so a chunk decoded twice counts once), and the last one is noted in `warnings`.
 */
function decodePhoto(r: ByteReader, ctx: DecodeContext, unitId: string, warnings: string[]): void {
  const time = r.u32();
  const index = r.u8();
  const count = r.u8();
  const chunk = r.bytes(r.u16(), 'photo chunk');
  const seen = ctx.session[SESSION_PHOTO] as PhotoState | undefined;
  const photo: PhotoState = seen?.time === time ? seen : { time, parts: {} };
  photo.parts[index] = chunk.length;
  ctx.session[SESSION_PHOTO] = photo;
  if (index !== count - 1) return;
  const bytes = Object.values(photo.parts).reduce((a, b) => a + b, 0);
  warnings.push(`atrack: photo of unit ${unitId} complete (${count} chunks, ${bytes} bytes), not stored`);
}

/** A binary report: `@P` records or an `@R` photo chunk, acknowledged either way. */
export function decodeBinary(frame: Buffer, ctx: DecodeContext, o: AtrackOptions): DecodeResult {
  const r = new ByteReader(PROTOCOL, frame);
  const prefix = r.bytes(2).toString('latin1');
  r.skip(2 + 2); // checksum, length
  const sequence = r.u16();
  const unitBytes = r.bytes(8, 'unit id');
  const identity = unitBytes.readBigInt64BE(0).toString();
  const replies = [reportAck(unitBytes, sequence)];
  const warnings: string[] = [];
  let messages: DecodedMessage[] = [];
  if (prefix === '@R') decodePhoto(r, ctx, identity, warnings);
  else messages = decodeRecords(r, o, warnings);
  return { identity, messages, replies, ...(warnings.length > 0 && { warnings }) };
}
