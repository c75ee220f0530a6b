import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue, DecodedLocation } from '../types.js';
import { intBE, uintBE } from '../shared/byte-reader.js';

/**
 * Tables read from Traccar `src/main/java/org/traccar/protocol/TeltonikaProtocolDecoder.java`
 * (the static PARAMETERS table and decodeGh3000Parameter) and Teltonika's "Codec" wiki page.
 */
export const PROTOCOL = 'teltonika';

// Codec ids, Teltonika "Codec" wiki page / TeltonikaProtocolDecoder CODEC_* constants
export const CODEC_GH3000 = 0x07;
export const CODEC_8 = 0x08;
export const CODEC_8_EXT = 0x8e;
export const CODEC_12 = 0x0c;
export const CODEC_13 = 0x0d;
export const CODEC_16 = 0x10;

/** Codec 12 serial type 0x0D carries camera (photo) chunks, TeltonikaProtocolDecoder.decodeSerial */
export const SERIAL_TYPE_CAMERA = 0x0d;
/** Codec 12 type 0x05: a command, server to device; 0x06: the device's response (Teltonika "Codec" wiki, Codec 12) */
export const SERIAL_TYPE_COMMAND = 0x05;
export const SERIAL_TYPE_RESPONSE = 0x06;
/** "A single SMS/GPRS command is limited to 160 characters" (Teltonika wiki, SMS/GPRS command list) */
export const MAX_COMMAND_BYTES = 160;
/** GH3000 times count from 2007-01-01 00:00:00 UTC */
export const GH3000_EPOCH_S = 1167609600;

/** What one AVL record decodes into while its IO elements are read. */
export interface RecordState {
  attributes: Record<string, AttributeValue>;
  alarms: Alarm[];
  location?: DecodedLocation;
  /** raw 8-byte values kept for IOs that combine two elements (195/196 driver id on FM.6..); made when first needed */
  raw?: Map<number, Buffer>;
}

type ModelTest = (model: string | undefined) => boolean;
type IoHandler = (rec: RecordState, value: Buffer) => void;

interface IoParameter {
  when: ModelTest;
  decode: IoHandler;
}

const any: ModelTest = () => true;
/** `FM[B-Z]...|MTB100|MSP500`: alarms and OBD IOs whose meaning Traccar only trusts on these models */
const fmbXXX: ModelTest = (m) => m !== undefined && /^(?:FM[B-Z]...|MTB100|MSP500)$/.test(m);
const fmb6XX: ModelTest = (m) => m !== undefined && /^FM.6..$/.test(m);
const fmbNot6XX: ModelTest = (m) => fmbXXX(m) && !fmb6XX(m);

const u = (v: Buffer): number => Number(uintBE(v));

export function addAlarm(rec: RecordState, alarm: Alarm | undefined): void {
  if (alarm && !rec.alarms.includes(alarm)) rec.alarms.push(alarm);
}

const set =
  (key: string, f: (v: Buffer) => AttributeValue): IoHandler =>
  (rec, v) => {
    rec.attributes[key] = f(v);
  };
const flag = (key: string): IoHandler => set(key, (v) => u(v) > 0);
const alarmIf =
  (alarm: Alarm): IoHandler =>
  (rec, v) =>
    addAlarm(rec, u(v) > 0 ? alarm : undefined);

/** `%016X` of the value read little-endian, TeltonikaProtocolDecoder IO 78 (iButton) */
function iButton(rec: RecordState, v: Buffer): void {
  let id = 0n;
  for (let i = v.length - 1; i >= 0; i--) id = (id << 8n) | BigInt(v[i]);
  if (id !== 0n) rec.attributes.driverUniqueId = id.toString(16).toUpperCase().padStart(16, '0');
}

/** Java `String.valueOf(readLong())` of the ICCID element (IO 11) */
function iccid(v: Buffer): string {
  return v.length === 8 ? v.readBigInt64BE(0).toString() : String(uintBE(v));
}

// 253 green driving type, Teltonika FMB AVL ID list
const GREEN_DRIVING: Record<number, Alarm> = { 1: 'hardAcceleration', 2: 'hardBraking', 3: 'hardCornering' };

const table: Record<number, IoParameter> = {
  1: { when: any, decode: flag('in1') },
  2: { when: any, decode: flag('in2') },
  3: { when: any, decode: flag('in3') },
  4: { when: any, decode: flag('in4') },
  9: { when: fmbXXX, decode: set('adc1', (v) => u(v) / 1000) },
  10: { when: fmbXXX, decode: set('adc2', (v) => u(v) / 1000) },
  11: { when: fmbXXX, decode: set('iccid', iccid) },
  12: { when: fmbXXX, decode: set('fuelUsed', (v) => u(v) / 1000) },
  13: { when: fmbXXX, decode: set('fuelConsumption', (v) => u(v) / 100) },
  16: { when: any, decode: set('odometer', u) },
  17: { when: any, decode: set('axisX', intBE) },
  18: { when: any, decode: set('axisY', intBE) },
  19: { when: any, decode: set('axisZ', intBE) },
  21: { when: any, decode: set('rssi', u) },
  24: {
    when: fmbXXX,
    decode: (rec, v) => {
      if (rec.location) rec.location.speedKmh = u(v);
    },
  },
  25: { when: any, decode: set('bleTemp1', (v) => intBE(v) / 100) },
  26: { when: any, decode: set('bleTemp2', (v) => intBE(v) / 100) },
  27: { when: any, decode: set('bleTemp3', (v) => intBE(v) / 100) },
  28: { when: any, decode: set('bleTemp4', (v) => intBE(v) / 100) },
  30: { when: fmbXXX, decode: set('faultCount', u) },
  31: { when: fmbXXX, decode: set('engineLoad', u) },
  32: { when: fmbXXX, decode: set('coolantTemp', intBE) },
  36: { when: fmbXXX, decode: set('rpm', u) },
  43: { when: fmbXXX, decode: set('milDistance', u) },
  57: { when: fmbXXX, decode: set('hybridBatteryLevel', intBE) },
  66: { when: any, decode: set('power', (v) => u(v) / 1000) },
  67: { when: any, decode: set('battery', (v) => u(v) / 1000) },
  68: { when: fmbXXX, decode: set('batteryCurrent', (v) => u(v) / 1000) },
  72: { when: fmbXXX, decode: set('temp1', (v) => intBE(v) / 10) },
  73: { when: fmbXXX, decode: set('temp2', (v) => intBE(v) / 10) },
  74: { when: fmbXXX, decode: set('temp3', (v) => intBE(v) / 10) },
  75: { when: fmbXXX, decode: set('temp4', (v) => intBE(v) / 10) },
  78: { when: any, decode: iButton },
  80: { when: fmbNot6XX, decode: set('dataMode', u) },
  81: { when: fmbNot6XX, decode: set('obdSpeed', u) },
  82: { when: fmbNot6XX, decode: set('throttle', u) },
  83: { when: fmbNot6XX, decode: set('fuelUsed', (v) => u(v) / 10) },
  84: { when: fmbNot6XX, decode: set('fuel', (v) => u(v) / 10) },
  85: { when: fmbNot6XX, decode: set('rpm', u) },
  87: { when: fmbNot6XX, decode: set('obdOdometer', u) },
  89: { when: fmbNot6XX, decode: set('fuelLevel', u) },
  107: { when: fmbXXX, decode: set('fuelUsed', (v) => u(v) / 10) },
  110: { when: fmbXXX, decode: set('fuelConsumption', (v) => u(v) / 10) },
  113: { when: fmbXXX, decode: set('batteryLevel', u) },
  115: { when: fmbXXX, decode: set('engineTemp', (v) => intBE(v) / 10) },
  175: { when: fmbXXX, decode: (rec, v) => addAlarm(rec, u(v) > 0 ? 'geofenceEnter' : 'geofenceExit') },
  179: { when: any, decode: flag('out1') },
  180: { when: any, decode: flag('out2') },
  181: { when: any, decode: set('pdop', (v) => u(v) / 10) },
  182: { when: any, decode: set('hdop', (v) => u(v) / 10) },
  199: { when: any, decode: set('tripOdometer', u) },
  200: { when: fmbXXX, decode: set('sleepMode', u) },
  205: { when: fmbXXX, decode: set('cid', u) },
  206: { when: fmbXXX, decode: set('lac', u) },
  236: { when: any, decode: alarmIf('general') },
  239: { when: any, decode: flag('ignition') },
  240: { when: any, decode: flag('motion') },
  241: { when: any, decode: set('operator', u) },
  246: { when: fmbXXX, decode: alarmIf('tow') },
  247: { when: fmbXXX, decode: alarmIf('accident') },
  249: { when: fmbXXX, decode: alarmIf('jamming') },
  251: { when: fmbXXX, decode: alarmIf('idle') },
  252: { when: fmbXXX, decode: alarmIf('powerCut') },
  253: { when: any, decode: (rec, v) => addAlarm(rec, GREEN_DRIVING[u(v)]) },
  389: { when: (m) => m === 'FMB003', decode: set('obdOdometer', (v) => u(v) * 1000) },
  636: { when: fmbXXX, decode: set('cid', u) },
  662: { when: fmbXXX, decode: flag('door') },
};

for (let i = 0; i < 4; i++) table[701 + i] = { when: fmb6XX, decode: set(`bleTemp${i + 1}`, (v) => intBE(v) / 100) };
for (let i = 0; i < 6; i++)
  table[10644 + i] = { when: fmbXXX, decode: set(`tempProbe${i + 1}`, (v) => intBE(v) / 100) };
for (let i = 0; i < 4; i++) table[10800 + i] = { when: fmbXXX, decode: set(`eyeTemp${i + 1}`, (v) => intBE(v) / 100) };
for (let i = 0; i < 4; i++) table[10832 + i] = { when: fmbXXX, decode: set(`eyeRoll${i + 1}`, intBE) };

/** IO elements of Codec 8/8E/16 by id; anything else (or a model mismatch) becomes `io<id>`. */
export const IO_PARAMETERS: Readonly<Record<number, IoParameter>> = table;

/** IO elements of Codec 7 (GH3000), TeltonikaProtocolDecoder.decodeGh3000Parameter */
export const GH3000_PARAMETERS: Readonly<Record<number, IoHandler>> = {
  1: set('batteryLevel', u),
  2: flag('usbConnected'),
  5: set('uptime', u),
  20: set('hdop', (v) => u(v) / 10),
  21: set('vdop', (v) => u(v) / 10),
  22: set('pdop', (v) => u(v) / 10),
  67: set('battery', (v) => u(v) / 1000),
  221: set('button', u),
  222: (rec, v) => addAlarm(rec, u(v) === 1 ? 'sos' : undefined),
  240: (rec, v) => {
    rec.attributes.motion = u(v) === 1;
  },
  244: (rec, v) => {
    rec.attributes.roaming = u(v) === 1;
  },
};

/** Variable-length (Codec 8E "NX") elements holding text, TeltonikaProtocolDecoder.decodeLocation */
export const NX_VIN = [256, 325];
export const NX_DTCS = 281;
export const NX_BEACONS = 385;
/** BLE sensor lists (EYE sensors / tags) */
export const NX_TAGS = [548, 10828, 10829, 10831, 11317];
/** FM.6.. driver id in two 8-byte halves */
export const IO_DRIVER_MSB = 195;
export const IO_DRIVER_LSB = 196;
export const isFm6 = fmb6XX;
