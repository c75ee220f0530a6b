import type { Alarm } from '../../core/model/alarm.js';
import { cmsToKmh } from '../shared/units.js';
import { ProtocolError, type DecodedMessage } from '../types.js';
import {
  MS_PER_DEGREE,
  PROTOCOL,
  SC_ALARM_IGNITION_OFF,
  SC_ALARM_IGNITION_ON,
  SC_ALARMS,
  STATE_BIT_ACCELERATION,
  STATE_BIT_BRAKING,
  STATE_BIT_IDLE,
  STATE_BIT_IGNITION,
} from './castel.constants.js';
import type { ByteReader } from '../shared/byte-reader.js';

/** A report without a fix of its own: the receive time, and the gateway fills in the last location. */
export const reportWithoutFix = (): DecodedMessage => ({ alarms: [], attributes: {} });

/**
 * The 19-byte GPS block (readPosition): day, month, year (2 digits), hour, minute, second (UTC),
 * latitude and longitude u32 LE in ms of arc, speed u16 LE in cm/s, course u16 LE in 0.1°, then a
 * flags byte: bit 0 east, bit 1 north, bits 2-3 fixed (either set: valid), bits 4-7 satellites.
 */
export function readFix(r: ByteReader): DecodedMessage {
  const [day, month, year, hour, minute, second] = r.bytes(6);
  const lat = r.u32le() / MS_PER_DEGREE;
  const lon = r.u32le() / MS_PER_DEGREE;
  const speedKmh = cmsToKmh(r.u16le());
  const courseDeg = r.u16le() / 10;
  const flags = r.u8();
  const satellites = flags >> 4;
  // Traccar's Position refuses these, and the frame with them
  if (lat > 90 || lon > 180) throw new ProtocolError(PROTOCOL, `coordinates out of range (${lat}, ${lon})`, r.buf);
  return {
    // out-of-range fields roll over, as Java's lenient calendar does
    fixTime: new Date(Date.UTC(year < 100 ? 2000 + year : year, month - 1, day, hour, minute, second)),
    location: {
      latitudeDeg: flags & 0x02 ? lat : -lat,
      longitudeDeg: flags & 0x01 ? lon : -lon,
      valid: (flags & 0x0c) !== 0,
      speedKmh,
      courseDeg,
      satellites,
    },
    alarms: [],
    attributes: { sat: satellites },
  };
}

/** The trip statistics every SC data message starts with; `state` is its u32 state word. */
export interface Statistics {
  odometer: number;
  tripOdometer: number;
  fuelConsumption: number;
  state: number;
}

/**
 * `ACC-on time u32 | UTC time u32 | odometer u32 (m) | trip odometer u32 (m) | total fuel u32 |
 * current fuel u16 | state u32 | 8 reserved bytes` (34 bytes, little-endian).
 */
export function readStatistics(r: ByteReader): Statistics {
  r.skip(8); // ACC-on time, UTC time
  const odometer = r.u32le();
  const tripOdometer = r.u32le();
  const fuelConsumption = r.u32le();
  r.skip(2); // current fuel consumption
  const state = r.u32le();
  r.skip(8);
  return { odometer, tripOdometer, fuelConsumption, state };
}

/** The statistics as Traccar keys them on every position of a message. */
export function applyStatistics(m: DecodedMessage, s: Statistics): void {
  m.attributes.odometer = s.odometer;
  m.attributes.tripOdometer = s.tripOdometer;
  m.attributes.fuelConsumption = s.fuelConsumption;
  m.attributes.status = s.state;
}

/**
 * A report without a fix that starts with the statistics block (decodeStat): the statistics, the
 * driving alarms of the state word and the ignition (bit 18).
 */
export function statisticsReport(r: ByteReader): DecodedMessage {
  const m = reportWithoutFix();
  const s = readStatistics(r);
  applyStatistics(m, s);
  const bit = (n: number): boolean => ((s.state >>> n) & 1) === 1;
  if (bit(STATE_BIT_ACCELERATION)) addAlarm(m, 'hardAcceleration');
  if (bit(STATE_BIT_BRAKING)) addAlarm(m, 'hardBraking');
  if (bit(STATE_BIT_IDLE)) addAlarm(m, 'idle');
  m.attributes.ignition = bit(STATE_BIT_IGNITION);
  return m;
}

/** Adds an alarm once (Traccar joins repeated ones; one is enough here). */
export function addAlarm(m: DecodedMessage, alarm: Alarm): void {
  if (!m.alarms.includes(alarm)) m.alarms.push(alarm);
}

/** One SC alarm number on a report: an alarm, the ignition (0x16/0x17), or nothing for the rest. */
export function applyScAlarm(m: DecodedMessage, code: number): void {
  if (code === SC_ALARM_IGNITION_ON) m.attributes.ignition = true;
  else if (code === SC_ALARM_IGNITION_OFF) m.attributes.ignition = false;
  else {
    const alarm = SC_ALARMS[code];
    if (alarm !== undefined) addAlarm(m, alarm);
  }
}
