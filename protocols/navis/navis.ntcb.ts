/**
 * One NTCB telemetry record (*>T, or each record of *>A): its format byte decides which blocks
 * follow (manual "NTCB telemetry formats" F1.0-F6.0; the blocks and units Traccar's
 * parseNtcbPosition reads).
 */
import { F10, F20, F30, F40, F50, F51, F52, F60, FLEX_DEGREE_UNITS } from './navis.constants.js';
import { newRecord, setBits, setFinite, setSatellites, type RecordState } from './navis.fields.js';
import type { ByteReader } from '../shared/byte-reader.js';

const is = (format: number, ...formats: number[]): boolean => formats.includes(format);

/** armed state and alarm: F1.0-F5.2 armed in bits 0-6 and the alarm in bit 7, F6.0 bits 0 and 1 */
function readArmed(r: ByteReader, s: RecordState, format: number): void {
  const armed = r.u8();
  if (is(format, F10, F20, F30, F40, F50, F51, F52)) {
    s.attributes.armed = armed & 0x7f;
    if (armed & 0x80) s.alarms.push('general');
  } else if (format === F60) {
    s.attributes.armed = (armed & 1) === 1;
    if (armed & 2) s.alarms.push('general');
  }
}

function readOutputs(r: ByteReader, s: RecordState, format: number): void {
  if (is(format, F10, F20, F30)) {
    const output = r.u16le();
    s.attributes.output = output;
    setBits(s, 'out', output, 16);
  } else if (is(format, F50, F51, F52)) {
    // two outputs and, above them, the satellite count
    const ext = r.u8();
    s.attributes.output = ext & 3;
    setBits(s, 'out', ext, 2);
    setSatellites(s, ext >> 2);
  } else if (is(format, F40, F60)) {
    const output = r.u8();
    s.attributes.output = output & 0xf;
    setBits(s, 'out', output, 4);
  }
}

function readInputs(r: ByteReader, s: RecordState, format: number): void {
  if (is(format, F10, F20, F30)) {
    const input = r.u16le();
    s.attributes.input = input;
    setBits(s, 'in', input, 16);
  } else if (format === F40) {
    // four discrete inputs, then two 3-bit and two 2-bit ones
    const input = r.u16le();
    s.attributes.input = input;
    setBits(s, 'in', input, 4);
    s.attributes.in5 = (input >> 4) & 7;
    s.attributes.in6 = (input >> 7) & 7;
    s.attributes.in7 = (input >> 10) & 3;
    s.attributes.in8 = (input >> 12) & 3;
  } else if (is(format, F50, F51, F52, F60)) {
    const input = r.u8();
    s.attributes.input = input;
    setBits(s, 'in', input, 8);
  }
}

/** F6.0: fuel sensors (skipped), four temperatures, axle weight, engine speed */
function readF60Sensors(r: ByteReader, s: RecordState): void {
  r.skip(2 + 2 + 1 + 2 + 1 + 2 + 6 * 3); // fuel levels and frequencies, temperatures of the fuel sensors
  for (let k = 1; k <= 4; k++) s.attributes[`temp${k}`] = r.i8();
  s.attributes.axleWeight = r.i32le();
  s.attributes.rpm = r.u16le();
}

/** navigation block: state, time (h m s, d m y), position, speed, course, mileage */
function readNavigation(r: ByteReader, s: RecordState, format: number): void {
  const nav = r.u8();
  s.valid = (nav & 2) !== 0;
  if (format === F60) setSatellites(s, nav >> 2);
  const [hour, minute, second, day, month, year] = [r.u8(), r.u8(), r.u8(), r.u8(), r.u8(), r.u8()];
  s.fixTime = new Date(Date.UTC(year < 100 ? 2000 + year : year, month, day, hour, minute, second));
  if (format === F60) {
    s.latitudeDeg = r.i32le() / FLEX_DEGREE_UNITS;
    s.longitudeDeg = r.i32le() / FLEX_DEGREE_UNITS;
    s.altitudeM = r.i32le() / 10;
  } else {
    // radians
    s.latitudeDeg = (r.f32le() / Math.PI) * 180;
    s.longitudeDeg = (r.f32le() / Math.PI) * 180;
  }
  s.speedKmh = r.f32le();
  s.courseDeg = r.u16le();
  setFinite(s, 'odometer', r.f32le() * 1000);
  setFinite(s, 'distance', r.f32le() * 1000);
  r.skip(4); // segment times
}

/** Reads one record at `r`. */
export function readNtcbRecord(r: ByteReader): RecordState {
  const s = newRecord();
  const format = r.buf[r.offset] === 0 && r.remaining >= 2 ? r.u16le() : r.u8();
  s.attributes.format = format;
  s.attributes.index = r.u32le();
  s.attributes.event = r.u16le();
  r.skip(6); // event time
  readArmed(r, s, format);
  s.attributes.status = r.u8();
  s.attributes.rssi = r.u8();
  readOutputs(r, s, format);
  readInputs(r, s, format);
  s.attributes.power = r.u16le() / 1000;
  s.attributes.battery = r.u16le() / 1000;
  if (is(format, F10, F20, F30)) s.attributes.temp1 = r.i16le();
  if (is(format, F10, F20, F50, F51, F52, F60)) {
    s.attributes.adc1 = r.u16le();
    s.attributes.adc2 = r.u16le();
  }
  if (format === F60) s.attributes.adc3 = r.u16le();
  if (is(format, F20, F50, F51, F52, F60)) r.skip(8); // impulse counters
  if (format === F60) readF60Sensors(r, s);
  if (is(format, F20, F50, F51, F52, F60)) readNavigation(r, s, format);
  if (is(format, F51, F52)) r.skip(15); // other sensors
  if (is(format, F40, F52)) for (let k = 1; k <= 4; k++) s.attributes[`temp${k}`] = r.i8();
  return s;
}
