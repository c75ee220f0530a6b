/**
 * The decoded state of one Navtelecom record (NTCB or FLEX) and how it becomes a DecodedMessage:
 * the fields land here in any order, the message is made once the record is read.
 */
import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL } from './navis.constants.js';

export interface RecordState {
  attributes: Record<string, AttributeValue>;
  alarms: Alarm[];
  /** the navigation time; a record without it is no position (Traccar returns none) */
  fixTime?: Date;
  latitudeDeg?: number;
  longitudeDeg?: number;
  valid?: boolean;
  altitudeM?: number;
  speedKmh?: number;
  courseDeg?: number;
  satellites?: number;
  /** FLEX fields 5/6, 29/30, 31/32: the low byte read first, the high byte joined to it */
  status: number;
  input: number;
  output: number;
}

export const newRecord = (): RecordState => ({ attributes: {}, alarms: [], status: 0, input: 0, output: 0 });

/** Java's `(short)` of a 16-bit value: Traccar joins two bytes into a signed short */
export const toShort = (v: number): number => (v << 16) >> 16;

/** `prefix1..prefixN` = the bits of `value`, from bit 0, numbered from `first` */
export function setBits(s: RecordState, prefix: string, value: number, bits: number, first = 1): void {
  for (let k = 0; k < bits; k++) s.attributes[`${prefix}${first + k}`] = ((value >> k) & 1) === 1;
}

/** The satellite count: Traccar's `sat` attribute and the location's own field. */
export function setSatellites(s: RecordState, n: number): void {
  s.satellites = n;
  s.attributes.sat = n;
}

/**
 * The message of a record with a navigation time, else undefined (Traccar drops such records).
 * Coordinates a record cannot hold (garbage floats) make the frame unreadable; a speed or course
 * out of range is left out rather than stored.
 */
export function toMessage(s: RecordState, frame: Buffer): DecodedMessage | undefined {
  if (!s.fixTime) return undefined;
  const lat = s.latitudeDeg ?? 0;
  const lon = s.longitudeDeg ?? 0;
  if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180))
    throw new ProtocolError(PROTOCOL, `coordinates out of range (${lat}, ${lon})`, frame);
  const location: NonNullable<DecodedMessage['location']> = {
    latitudeDeg: lat,
    longitudeDeg: lon,
    valid: s.valid ?? false,
  };
  if (s.altitudeM !== undefined && Number.isFinite(s.altitudeM)) location.altitudeM = s.altitudeM;
  if (s.speedKmh !== undefined && Number.isFinite(s.speedKmh) && s.speedKmh >= 0) location.speedKmh = s.speedKmh;
  if (s.courseDeg !== undefined && s.courseDeg <= 360) location.courseDeg = s.courseDeg;
  if (s.satellites !== undefined) location.satellites = s.satellites;
  return { fixTime: s.fixTime, location, alarms: s.alarms, attributes: s.attributes };
}

/** A float attribute, left out when the device sent NaN or infinity (JSON cannot carry them). */
export function setFinite(s: RecordState, key: string, value: number): void {
  if (Number.isFinite(value)) s.attributes[key] = value;
}
