/**
 * One FLEX record: the fields of the negotiated bitfield, in field order, each read by its entry
 * in FIELDS (manual "FLEX field table"; the meanings and units of Traccar's parseFlexPosition);
 * a field without an entry is skipped by its size (FLEX_FIELD_BYTES). Also the static part of a
 * FLEX 2.0 extra record (~E / ~X).
 */
import { FLEX_DEGREE_UNITS, FLEX_EXTRA_TAG, FLEX_FIELD_BYTES } from './navis.constants.js';
import { newRecord, setBits, setFinite, setSatellites, toShort, type RecordState } from './navis.fields.js';
import { hasField, type FlexLayout } from './navis.layout.js';
import type { ByteReader } from '../shared/byte-reader.js';

type FieldReader = (r: ByteReader, s: RecordState, i: number) => void;

/** `u16` values at or above this mean "no sensor" for the fuel fields */
const FUEL_ABSENT = 65500;

/** an unsigned value, left out when it is the field's "no data" value */
const unless =
  (read: (r: ByteReader) => number, none: number, key: (i: number) => string, scale = 1): FieldReader =>
  (r, s, i) => {
    const v = read(r);
    if (v !== none) s.attributes[key(i)] = v * scale;
  };

/** OBD fuel and AdBlue: bit 15 set = a level in %, clear = litres / 10; 0x7FFF = no data */
const levelOrVolume =
  (levelKey: string, volumeKey: string): FieldReader =>
  (r, s) => {
    const v = r.u16le();
    if (v === 0x7fff) return;
    if (v & 0x8000) s.attributes[levelKey] = v & 0x3fff;
    else s.attributes[volumeKey] = (v & 0x3fff) / 10;
  };

const u8 = (r: ByteReader) => r.u8();
const u16 = (r: ByteReader) => r.u16le();

const FIELDS: Record<number, FieldReader> = {
  0: (r, s) => (s.attributes.index = r.u32le()),
  1: (r, s) => (s.attributes.event = r.u16le()),
  2: (r) => r.skip(4), // the event's time: Traccar's device time, which a report here does not carry
  3: (r, s) => {
    const armed = r.u8();
    s.attributes.armed = (armed & 1) === 1;
    if (armed & 2) s.alarms.push('general');
  },
  4: (r, s) => {
    s.status = r.u8();
    s.attributes.status = s.status;
  },
  5: (r, s) => (s.attributes.status = toShort((s.status & 0xff) | (r.u8() << 8))),
  6: (r, s) => (s.attributes.rssi = r.u8()),
  7: (r, s) => {
    const nav = r.u8();
    s.valid = (nav & 2) !== 0;
    setSatellites(s, nav >> 2);
  },
  8: (r, s) => (s.fixTime = new Date(r.u32le() * 1000)),
  9: (r, s) => (s.latitudeDeg = r.i32le() / FLEX_DEGREE_UNITS),
  10: (r, s) => (s.longitudeDeg = r.i32le() / FLEX_DEGREE_UNITS),
  11: (r, s) => (s.altitudeM = r.i32le() / 10),
  12: (r, s) => (s.speedKmh = r.f32le()),
  13: (r, s) => (s.courseDeg = r.u16le()),
  14: (r, s) => setFinite(s, 'odometer', r.f32le() * 1000),
  15: (r, s) => setFinite(s, 'distance', r.f32le() * 1000),
  18: (r, s) => (s.attributes.power = r.u16le() / 1000),
  19: (r, s) => (s.attributes.battery = r.u16le() / 1000),
  28: (r, s) => {
    s.input = r.u8();
    s.attributes.input = s.input;
    setBits(s, 'in', s.input, 8);
  },
  29: (r, s) => {
    const high = r.u8();
    s.attributes.input = toShort((s.input & 0xff) | (high << 8));
    setBits(s, 'in', high, 8, 9);
  },
  30: (r, s) => {
    s.output = r.u8();
    s.attributes.output = s.output;
    setBits(s, 'out', s.output, 8);
  },
  31: (r, s) => {
    const high = r.u8();
    s.attributes.output = toShort((s.output & 0xff) | (high << 8));
    setBits(s, 'out', high, 8, 9);
  },
  36: (r, s) => (s.attributes.hours = r.u32le() * 1000),
  52: levelOrVolume('obdFuelLevel', 'obdFuel'),
  53: (r, s) => {
    const used = r.f32le() * 0.5;
    if (used >= 0) s.attributes.fuelUsed = used;
  },
  54: unless(u16, 0xffff, () => 'rpm'),
  55: unless(
    (r) => r.i8(),
    -128,
    () => 'coolantTemp',
  ),
  56: (r, s) => setFinite(s, 'obdOdometer', r.f32le() * 1000),
  62: unless(u8, 0xff, () => 'acceleratorPosition'),
  63: unless(u8, 0xff, () => 'brakePosition'),
  64: unless(u8, 0xff, () => 'engineLoad'),
  65: levelOrVolume('obdAdBlueLevel', 'obdAdBlue'),
  66: (r, s) => (s.attributes.obdHours = r.u32le() * 1000),
  67: unless(u16, 0xffff, () => 'serviceOdometer', 5000),
  68: (r, s) => (s.attributes.obdSpeed = r.u8()),
  // FLEX 2.0
  69: (r, s) => {
    let visible = 0;
    for (let k = 0; k < 8; k++) visible += r.u8();
    s.attributes.satVisible = visible;
  },
  70: (r, s) => {
    s.attributes.hdop = r.u8() / 10;
    s.attributes.pdop = r.u8() / 10;
  },
};

/** Fields read alike over a run of indexes: `first..last`, each named from its index. */
function range(first: number, last: number, read: FieldReader): void {
  for (let i = first; i <= last; i++) FIELDS[i] = read;
}

range(20, 27, (r, s, i) => (s.attributes[`adc${i - 19}`] = r.u16le()));
range(32, 33, (r, s, i) => (s.attributes[`count${i - 31}`] = r.u32le()));
range(34, 35, (r, s, i) => (s.attributes[`freq${i - 33}`] = r.u16le()));
// fields 38-43 are fuel sensors 1-6, field 44 the main one; FUEL_ABSENT and above: no reading
range(37, 43, (r, s, i) => {
  const v = r.u16le();
  if (v < FUEL_ABSENT) s.attributes[i === 43 ? 'fuel' : `fuel${i - 36}`] = v;
});
range(44, 51, (r, s, i) => (s.attributes[`temp${i - 43}`] = r.i8()));
range(
  57,
  61,
  unless(u16, 0xffff, (i) => `axleWeight${i - 56}`),
);
range(77, 82, (r, s, i) => (s.attributes[`fuelTemp${i - 76}`] = r.i8()));
// FLEX 3.0
range(162, 165, (r, s, i) => {
  const v = r.i16le();
  if (v !== -0x8000) s.attributes[`temp${i - 153}`] = v / 20;
});
range(
  166,
  169,
  unless(u8, 0xff, (i) => `humidity${i - 165}`, 0.5),
);
range(206, 221, (r, s, i) => (s.attributes[`user1Byte${i - 205}`] = r.u8()));
range(222, 236, (r, s, i) => (s.attributes[`user2Byte${i - 221}`] = r.u16le()));
range(237, 251, (r, s, i) => (s.attributes[`user4Byte${i - 236}`] = r.u32le()));
range(252, 254, (r, s, i) => (s.attributes[`user8Byte${i - 251}`] = r.i64le()));

/** Reads one record of `layout` from `r`. */
export function readFlexRecord(r: ByteReader, layout: FlexLayout): RecordState {
  const bits = Buffer.from(layout.bitfield, 'hex');
  const s = newRecord();
  for (let i = 0; i < layout.bitfieldSize; i++) {
    if (!hasField(bits, i)) continue;
    const read = FIELDS[i];
    if (read) read(r, s, i);
    else r.skip(FLEX_FIELD_BYTES[i]);
  }
  return s;
}

/**
 * One FLEX 2.0 extra record: `u16 length` (big-endian, as Traccar reads it), then that many bytes:
 * tag 0x0A, the static part's length, record index, event code, event time, navigation state,
 * time, latitude, longitude, altitude, speed, course, odometer, then fields this decoder skips. A
 * record with another tag is skipped whole and gives no position.
 */
export function readExtraRecord(r: ByteReader): RecordState {
  const length = r.u16();
  const body = r.sub(length, 'FLEX extra record');
  const s = newRecord();
  if (length === 0 || body.u8() !== FLEX_EXTRA_TAG) return s;
  body.u8(); // length of the static part
  s.attributes.index = body.u32le();
  s.attributes.event = body.u16le();
  body.skip(4); // event time
  FIELDS[7](body, s, 7);
  for (let i = 8; i <= 14; i++) FIELDS[i](body, s, i);
  return s;
}
