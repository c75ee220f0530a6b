/**
 * The custom-format fields of text reports (AtrackProtocolDecoder.readTextCustomData): each form
 * code takes one comma-separated value, in the order of the form. A value that is not the integer
 * its code needs makes the record unreadable (the reference fails on it too).
 */
import { ByteReader } from '../shared/byte-reader.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL } from './atrack.constants.js';
import { alarm, altitude, finishCell, put, satellites, type RecordState } from './atrack.record.js';

type Field = (value: string, s: RecordState, frameMask: number) => void;

/** Java's Integer.parseInt (Long.parseLong for `long`): an optional sign and digits, in range */
export function javaInt(value: string, long = false): number {
  const limit = long ? Number.MAX_SAFE_INTEGER : 0x7fffffff;
  if (!/^[+-]?\d+$/.test(value) || Math.abs(Number(value)) > limit)
    throw new ProtocolError(PROTOCOL, `"${value.slice(0, 24)}" is not an integer`);
  return Number(value);
}

const int =
  (key: string, scale = 1): Field =>
  (v, s) =>
    put(s, key, javaInt(v) / scale);
const harsh =
  (a: 'hardAcceleration' | 'hardBraking' | 'hardCornering'): Field =>
  (v, s) => {
    if (javaInt(v) > 0) alarm(s, a);
  };

const FIELDS: Readonly<Record<string, Field>> = {
  SA: (v, s) => satellites(s, javaInt(v)),
  MV: int('power', 10),
  BV: int('battery', 10),
  GQ: (v, s) => {
    s.cell.signal = javaInt(v);
  },
  CE: (v, s) => {
    s.cell.cid = javaInt(v, true);
  },
  LC: (v, s) => {
    s.cell.lac = javaInt(v);
  },
  CN: (v, s) => {
    if (v.length <= 3) return;
    s.cell.mcc = javaInt(v.slice(0, 3));
    s.cell.mnc = javaInt(v.slice(3));
  },
  PC: int('count1'),
  AT: (v, s) => altitude(s, javaInt(v)),
  RP: int('rpm'),
  GS: int('rssi'),
  DT: (v, s) => put(s, 'archive', javaInt(v) === 1),
  VN: (v, s) => put(s, 'vin', v),
  TR: int('throttle'),
  ET: int('coolantTemp'),
  FL: int('fuel'),
  FC: int('fuelConsumption'),
  AV1: int('adc1'),
  CD: (v, s) => put(s, 'iccid', v),
  // tenths of an hour, kept in milliseconds
  EH: (v, s) => put(s, 'hours', Math.trunc((javaInt(v) / 10) * 3_600_000)),
  IA: int('intakeTemp'),
  EL: int('engineLoad'),
  HA: harsh('hardAcceleration'),
  HB: harsh('hardBraking'),
  HC: harsh('hardCornering'),
  MT: (v, s) => put(s, 'motion', javaInt(v) > 0),
  BC: (v, s, frameMask) => {
    if (frameMask === 1) tagList(hex(v), s);
    else {
      const [mode, mask, data] = v.split(':');
      beacons(javaInt(mode ?? ''), javaInt(mask ?? ''), hex(data ?? ''), s);
    }
  },
};

function hex(v: string): ByteReader {
  if (!/^(?:[0-9A-Fa-f]{2})*$/.test(v)) throw new ProtocolError(PROTOCOL, 'beacon data is not hex');
  return new ByteReader(PROTOCOL, Buffer.from(v, 'hex'));
}

/** frame mask 1: length, id, MAC, then (id E0) a temperature in hundredths of a degree */
function tagList(r: ByteReader, s: RecordState): void {
  for (let i = 1; r.remaining > 0; i++) {
    const length = r.u8();
    const id = r.u8();
    r.skip(6); // MAC
    if (id === 0xe0) {
      put(s, `tag${i}Temp`, r.i16() / 100);
      r.skip(length - 1 - 6 - 2);
    } else r.skip(length - 1 - 6);
  }
}

const bit = (mask: number, n: number): boolean => ((mask >>> n) & 1) === 1;

/** the sensor bytes of a mode-4 tag, by its hardware id (fuel; temperature; + luminosity; + humidity, pressure) */
const SENSOR_BYTES: Readonly<Record<number, number>> = { 1: 11, 2: 2, 3: 6, 4: 11, 5: 10 };

/** `mode:mask:hex` beacons: per tag the fields the mask names, in the mode's layout */
function beacons(mode: number, mask: number, r: ByteReader, s: RecordState): void {
  for (let i = 1; r.remaining > 0; i++) {
    const before = r.remaining;
    if (bit(mask, 7)) put(s, `tag${i}Id`, r.bytes(6).toString('hex'));
    if (mode === 1 || mode === 2) {
      if (bit(mask, 6)) r.skip(2); // major, or battery voltage
      if (bit(mask, 5)) {
        const v = r.u16(); // minor, or temperature
        if (mode === 2) put(s, `tag${i}Temp`, v);
      }
      if (bit(mask, 4)) r.skip(1); // tx power
      if (bit(mask, 3)) put(s, `tag${i}Rssi`, r.u8());
    } else if (mode === 3) {
      if (bit(mask, 6)) put(s, `tag${i}Humidity`, r.u16());
      if (bit(mask, 5)) put(s, `tag${i}Temp`, r.u16());
      if (bit(mask, 3)) put(s, `tag${i}Rssi`, r.u8());
      if (bit(mask, 2)) r.skip(2);
    } else if (mode === 4) {
      if (bit(mask, 6)) {
        const hardware = r.u8();
        if (bit(mask, 5)) r.skip(SENSOR_BYTES[hardware] ?? 0);
      }
      if (bit(mask, 4)) r.skip(9); // name
    }
    // a mode or mask that reads nothing would loop for ever on the reference; here it ends the list
    if (r.remaining === before) break;
  }
}

/** Java's String.split: trailing empty strings are dropped, an empty text is one empty value */
export function javaSplit(text: string, separator: string | RegExp): string[] {
  const parts = text.split(separator);
  while (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 1 && parts[0] === '' && text.length > 0) return [];
  return parts;
}

/** the values of one text record's custom part, by the codes of `form` (`%AT%BV…`) */
export function readTextCustom(s: RecordState, data: string, form: string, frameMask: number): void {
  const keys = javaSplit(form.slice(1), '%');
  const values = javaSplit(data, /,|\r\n/);
  for (let i = 0; i < Math.min(keys.length, values.length); i++) {
    if (Object.hasOwn(FIELDS, keys[i])) FIELDS[keys[i]](values[i], s, frameMask);
  }
  finishCell(s, false);
}
