/**
 * The custom-format fields of binary reports, by their form code (`%MV`, `%ZO4`…), with the width
 * and scale each one has on the wire (AtrackProtocolDecoder.readBinaryCustomData, ATrack AP/SP
 * protocol document "custom report format"). Codes read but not kept are skipped by their width;
 * a code not listed takes no bytes, as in the reference.
 */
import type { ByteReader } from '../shared/byte-reader.js';
import { alarm, altitude, put, readCString, satellites, type RecordState } from './atrack.record.js';

type Field = (r: ByteReader, s: RecordState) => void;

const METRES_PER_MILE = 1609.34;

const u8 = (r: ByteReader): number => r.u8();
const u16 = (r: ByteReader): number => r.u16();
const u32 = (r: ByteReader): number => r.u32();

/** an attribute from a reader */
const set =
  (key: string, read: (r: ByteReader) => number | string | boolean | undefined): Field =>
  (r, s) =>
    put(s, key, read(r));
const skip =
  (n: number): Field =>
  (r) =>
    r.skip(n);
const text: Field = (r) => {
  readCString(r);
};
const harsh =
  (a: 'hardAcceleration' | 'hardBraking' | 'hardCornering'): Field =>
  (r, s) => {
    if (r.u8() > 0) alarm(s, a);
  };

const BASE: Readonly<Record<string, Field>> = {
  SA: (r, s) => satellites(s, r.u8()),
  MT: set('motion', (r) => r.u8() > 0),
  MV: set('power', (r) => r.u16() / 10),
  BV: set('battery', (r) => r.u16() / 10),
  GQ: (r, s) => {
    s.cell.signal = r.u8();
  },
  CE: (r, s) => {
    s.cell.cid = r.u32();
  },
  LC: (r, s) => {
    s.cell.lac = r.u16();
  },
  CN: (r, s) => {
    const codes = r.u32() % 100000; // cccnn
    s.cell.mcc = Math.floor(codes / 100);
    s.cell.mnc = codes % 100;
  },
  RL: skip(1), // rx level
  PC: set('count1', u32),
  AT: (r, s) => altitude(s, r.u32()),
  RP: set('rpm', u16),
  GS: set('rssi', u8),
  DT: set('archive', (r) => r.u8() === 1),
  VN: set('vin', readCString),
  MF: skip(2), // mass air flow
  EL: skip(1), // engine load
  TR: set('throttle', u8),
  ET: set('temp1', u16),
  FL: set('fuel', u8),
  ML: skip(1), // MIL status
  FC: set('fuelConsumption', u32),
  CI: text, // the form itself
  AV1: set('adc1', u16),
  NC: text, // neighbour cells
  SM: skip(2), // top speed between reports
  GL: text, // map link
  MA: text, // MAC address
  PD: skip(1), // pending trouble codes
  CD: set('iccid', readCString),
  CM: skip(8), // IMSI
  GN: skip(60), // g-sensor samples
  GV: skip(6), // peak g-force
  ME: skip(8), // IMEI
  IA: skip(1), // intake air temperature
  MP: skip(1), // manifold pressure
  EO: set('odometer', (r) => r.u32() * METRES_PER_MILE),
  EH: set('hours', (r) => r.u32() * 360_000),
  IN0: set('ignition', (r) => r.u8() > 0),
  IN1: set('in1', (r) => r.u8() > 0),
  IN2: set('in2', (r) => r.u8() > 0),
  IN3: set('in3', (r) => r.u8() > 0),
  HA: harsh('hardAcceleration'),
  HB: harsh('hardBraking'),
  HC: harsh('hardCornering'),
};

/** J1708 (`ZO`/`ZH`/`ZL`/`ZS`) and J1939 FMS (`JO`/`JH`/`JL`/`JS`/`JN`) engine-bus codes */
const ENGINE_BUS: Readonly<Record<string, Field>> = {
  ZO4: set('throttle', (r) => r.u8() * 0.4),
  ZO6: set('obdSpeed', (r) => r.u8() * 0.805),
  ZO9: set('engineLoad', (r) => r.u8() * 0.5),
  ZO10: set('fuel', (r) => r.u8() * 0.5),
  ZO14: set('coolantTemp', u8),
  ZH1: skip(2), // cargo weight
  ZH2: set('fuelConsumption', (r) => (r.u16() * 16.428) / 3600),
  ZH3: set('rpm', (r) => r.u16() * 0.25),
  ZL1: skip(4), // natural gas used
  ZL2: set('odometer', (r) => r.u32() * 161),
  ZL3: skip(4), // vehicle hours
  ZL4: set('hours', (r) => r.u32() * 5 * 36_000),
  ZS1: set('vin', readCString),
  JO4: set('engineLoad', u8),
  JO5: set('fuel', (r) => r.u8() * 0.4),
  JO11: set('coolantTemp', (r) => r.u8() - 40),
  JH1: set('obdSpeed', (r) => r.u16() / 256),
  JH2: set('rpm', (r) => r.u16() * 0.125),
  JH8: set('serviceOdometer', (r) => r.u16() * 5),
  JH9: skip(2), // tachograph speed
  JH10: skip(2), // ambient air temperature
  JH11: set('fuelConsumption', (r) => r.u16() / 20),
  JH12: skip(2), // fuel economy
  JL1: set('fuelUsed', (r) => r.u32() * 0.5),
  JL2: set('hours', (r) => r.u32() * 5 * 36_000),
  JL3: set('odometer', (r) => r.u32() * 1000),
  JL4: set('fuelUsed', (r) => r.u32() / 1000),
  JS1: set('vin', readCString),
  JS2: text, // FMS version
  JS3: set('driver1', readCString),
  JS4: set('driver2', readCString),
};

/**
 * The numbered codes: ZO1-ZO17 and JO1-JO12 one-byte states (skipped unless listed above), JN1-JN5
 * four-byte counters (skipped), JH3-JH7 axle weights.
 */
function numberedCodes(): Record<string, Field> {
  const out: Record<string, Field> = {};
  for (let i = 1; i <= 17; i++) out[`ZO${i}`] = skip(1);
  for (let i = 1; i <= 12; i++) out[`JO${i}`] = skip(1);
  for (let i = 1; i <= 5; i++) out[`JN${i}`] = skip(4); // cruise, idling and PTO counters
  for (let i = 3; i <= 7; i++) out[`JH${i}`] = set(`axleWeight${i - 2}`, (r) => r.u16() * 0.5);
  return out;
}

export const BINARY_FIELDS: Readonly<Record<string, Field>> = { ...numberedCodes(), ...BASE, ...ENGINE_BUS };
