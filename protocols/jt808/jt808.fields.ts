import type { Alarm } from '../../core/model/alarm.js';
import type { ByteReader } from '../shared/byte-reader.js';
import { bcdBytes } from '../shared/bcd.js';
import type { NetworkInfo } from '../shared/network.js';
import {
  ProtocolError,
  type CommandResult,
  type DecodeContext,
  type DecodedLocation,
  type DecodedMessage,
} from '../types.js';
import { DOOR_MODELS } from './jt808.constants.js';
import { luhnDigit } from '../shared/luhn.js';

/** What one frame's handlers share: the header, the decode context, and what they answer. */
export interface Jt808Header {
  delimiter: number;
  type: number;
  attribute: number;
  /** 2019 protocol version byte (attribute bit 14) */
  version?: number;
  /** the terminal id bytes as sent (6 BCD bytes; 10 in 2019; 7 after the E7 delimiter) */
  id: Buffer;
  /** the terminal id as digits (Traccar `decodeId`) */
  terminalId: string;
  serial: number;
  /** attribute bit 13: this frame is one packet of a longer message */
  packet?: { total: number; index: number };
}

export interface Jt808Context {
  ctx: DecodeContext;
  header: Jt808Header;
  /** the device record's model (DecodeContext.model): some models remap alarms and extras */
  model?: string;
  /** device clock offset from UTC: GMT+8, as JT/T 808 devices keep Beijing time (Traccar's default) */
  utcOffsetMinutes: number;
  replies: Buffer[];
  warnings: string[];
  /** answers to platform commands (0x0001 and the text replies) */
  commandResults: CommandResult[];
}

/** What an additional-information handler gets besides its value bytes. */
export interface ExtraContext {
  c: Jt808Context;
  net: NetworkInfo;
  /** the item's declared length */
  length: number;
}

export type ExtraHandler = (v: ByteReader, m: DecodedMessage, x: ExtraContext) => void;

export function newMessage(): DecodedMessage {
  return { alarms: [], attributes: {} };
}

export function addAlarm(m: DecodedMessage, alarm: Alarm | undefined): void {
  if (alarm && !m.alarms.includes(alarm)) m.alarms.push(alarm);
}

/** 4.4 terminal id: BCD digits; ids that are not BCD carry a 14-digit IMEI in 6 binary bytes (Traccar `decodeId`) */
export function decodeTerminalId(id: Buffer): string {
  const hex = id.toString('hex');
  if (/^[0-9]+$/.test(hex)) return hex;
  const imei = id.readUIntBE(0, 6);
  return `${imei}${luhnDigit(imei)}`;
}

/** 4.5 BCD[6] time YYMMDDhhmmss in the device's zone; undefined when the digits are not a date */
export function readTime(r: ByteReader, utcOffsetMinutes: number): Date | undefined {
  const b = r.bytes(6, 'BCD time');
  return bcdTime(b, [0, 1, 2], utcOffsetMinutes);
}

/** BCD date and time in the order `order` gives for year, month, day (then hh mm ss) */
export function bcdTime(b: Buffer, order: [number, number, number], utcOffsetMinutes: number): Date | undefined {
  const year = bcdBytes(b, order[0], 1);
  const month = bcdBytes(b, order[1], 1);
  const day = bcdBytes(b, order[2], 1);
  const hour = bcdBytes(b, 3, 1);
  const minute = bcdBytes(b, 4, 1);
  const second = bcdBytes(b, 5, 1);
  if (![year, month, day, hour, minute, second].every(Number.isFinite)) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  return new Date(Date.UTC(2000 + year, month - 1, day, hour, minute, second) - utcOffsetMinutes * 60_000);
}

/** sets the fix time, or notes why it could not */
export function setTime(m: DecodedMessage, time: Date | undefined, c: Jt808Context): void {
  if (time) m.fixTime = time;
  else c.warnings.push(`0x${c.header.type.toString(16).padStart(4, '0')}: time is not a valid BCD date`);
}

export function ascii(b: Buffer): string {
  return b.toString('latin1');
}

/** Java `String.trim()`: strips every char up to U+0020 (NUL padding included) */
export function javaTrim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 0x20) start++;
  while (end > start && s.charCodeAt(end - 1) <= 0x20) end--;
  return s.slice(start, end);
}

export function textDecode(b: Buffer, encoding: 'gbk' | 'utf-16be'): string {
  try {
    return new TextDecoder(encoding).decode(b);
  } catch {
    return b.toString('latin1');
  }
}

/** `s16` as sign and magnitude (bit 15 is the sign), Traccar `readSignedWord` */
export function signMagnitude16(value: number): number {
  return value & 0x8000 ? -(value & 0x7fff) : value & 0x7fff;
}

/**
 * 8.18 table 25 status DWORD then latitude and longitude (u32, 1e-6 degrees): bit 0 ACC, 1 fixed,
 * 2 south, 3 west, 10 oil circuit cut, 26 charging (Traccar `decodeCoordinates`).
 */
export function readStatusAndCoordinates(r: ByteReader, m: DecodedMessage, c: Jt808Context): DecodedLocation {
  const status = r.u32();
  m.attributes.ignition = (status & 1) !== 0;
  if (c.model === 'G1C Pro') m.attributes.motion = (status & (1 << 4)) !== 0;
  m.attributes.blocked = (status & (1 << 10)) !== 0;
  if (c.model && DOOR_MODELS.has(c.model)) m.attributes.door = (status & (1 << 16)) !== 0;
  m.attributes.charge = (status & (1 << 26)) !== 0;
  const lat = r.u32() / 1e6;
  const lon = r.u32() / 1e6;
  return {
    latitudeDeg: status & (1 << 2) ? -lat : lat,
    longitudeDeg: status & (1 << 3) ? -lon : lon,
    valid: (status & (1 << 1)) !== 0,
  };
}

/** runs `read` on trailing data; a truncation there keeps what was read and leaves a warning */
export function tolerant(c: Jt808Context, what: string, read: () => void): void {
  try {
    read();
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    c.warnings.push(`${what} is truncated`);
  }
}

/** rejects coordinates no receiver can report (a corrupt frame, not a position) */
export function checkCoordinates(location: DecodedLocation, c: Jt808Context): DecodedLocation | undefined {
  if (Math.abs(location.latitudeDeg) <= 90 && Math.abs(location.longitudeDeg) <= 180) return location;
  c.warnings.push(`0x${c.header.type.toString(16).padStart(4, '0')}: coordinates out of range`);
  return undefined;
}
