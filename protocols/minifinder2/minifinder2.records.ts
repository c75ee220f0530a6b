import type { Alarm } from '../../core/model/alarm.js';
import { NetworkInfo } from '../shared/network.js';
import type { AttributeValue } from '../types.js';
import * as K from './minifinder2.constants.js';
import type { Cursor } from './minifinder2.reader.js';

/** One position as its records fill it in, before it becomes a DecodedMessage. */
export interface Fix {
  fixTime?: Date;
  deviceTime?: Date;
  latitudeDeg?: number;
  longitudeDeg?: number;
  valid: boolean;
  speedKmh?: number;
  courseDeg?: number;
  altitudeM?: number;
  alarms: Alarm[];
  attributes: Record<string, AttributeValue>;
  network: NetworkInfo;
}

export const newFix = (): Fix => ({ valid: false, alarms: [], attributes: {}, network: new NetworkInfo() });

/** one record: its key, its length byte (key and value) and the offset where it ends */
export interface RecordAt {
  key: number;
  length: number;
  end: number;
}

const bit = (v: number, n: number): boolean => Math.floor(v / 2 ** n) % 2 === 1;
const seconds = (s: number): Date => new Date(s * 1000);

function coordinates(c: Cursor, f: Fix): void {
  f.latitudeDeg = c.i32() / K.COORDINATE_SCALE;
  f.longitudeDeg = c.i32() / K.COORDINATE_SCALE;
}

/** the alarm bits of key 0x02 (Traccar's table), the geofence number and `event` */
function alarmRecord(c: Cursor, r: RecordAt, f: Fix): void {
  const alarm = c.u32();
  const add = (n: number, a: Alarm): void => {
    if (bit(alarm, n)) f.alarms.push(a);
  };
  add(0, 'lowBattery');
  add(1, 'overspeed');
  add(2, 'fallDown');
  for (let i = 0; i < 4; i++) {
    if (!bit(alarm, i + 4)) continue;
    f.alarms.push(bit(alarm, i + 26) ? 'geofenceEnter' : 'geofenceExit');
    f.attributes.geofence = i + 1;
  }
  add(8, 'powerOff');
  add(9, 'powerOn');
  add(10, 'movement');
  add(12, 'sos');
  if (bit(alarm, 13)) f.attributes.button1 = true;
  if (bit(alarm, 14)) f.attributes.button2 = true;
  if (bit(alarm, 31)) f.attributes.bark = true;
  if (r.length >= 9) f.deviceTime = seconds(c.u32());
  f.attributes.event = alarm;
}

/** key 0x20: the GNSS fix; speed is km/h, HDOP in tenths (0: no fix) */
function gpsRecord(c: Cursor, f: Fix): void {
  coordinates(c, f);
  f.speedKmh = c.u16();
  f.courseDeg = c.u16();
  f.altitudeM = c.i16();
  const hdop = c.u16();
  f.valid = hdop > 0;
  f.attributes.hdop = hdop / 10;
  f.attributes.odometer = c.u32();
  f.attributes.sat = c.u8();
}

/** keys 0x21, 0x29, 0x2B: MCC, MNC, then towers (RSSI, LAC, cell id) to the record's end */
function cellRecord(c: Cursor, r: RecordAt, f: Fix): void {
  const mcc = c.u16();
  const mnc = r.key === K.KEY_CELL_WIDE ? c.u16() : c.u8();
  while (c.pos < r.end) {
    const rssi = c.i8();
    const lac = c.u16();
    const cid = r.key === K.KEY_CELL ? c.u16() : c.i32();
    f.network.addCell(mcc, mnc, lac, cid, rssi);
  }
}

/** keys 0x19 (with names) and 0x22: access points (RSSI, MAC) to the record's end */
function wifiRecord(c: Cursor, r: RecordAt, f: Fix): void {
  while (c.pos < r.end) {
    const rssi = c.i8();
    const mac = c.hex(6).replace(/(..)(?!$)/g, '$1:');
    f.network.addWifi(mac, rssi);
    if (r.key === K.KEY_WIFI_NAMED) c.bytes(c.u8()); // name
  }
}

/** a BLE tag id: six bytes, last first, as hex */
export const tagId = (c: Cursor): string =>
  Array.from(c.bytes(6))
    .reverse()
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');

/** keys 0x23, 0x26: a BLE tag's id and place (0x26 with HDOP and altitude, 0x23 a description) */
function blePositionRecord(c: Cursor, r: RecordAt, f: Fix): void {
  if (r.length >= 7) f.attributes.tagId = tagId(c);
  if (r.length >= 15) {
    coordinates(c, f);
    f.valid = true;
  }
  if (r.key === K.KEY_BLE_POSITION_HDOP) {
    f.attributes.hdop = c.u16() / 10;
    f.altitudeM = c.i16();
  } else if (c.pos < r.end) {
    f.attributes.description = c.ascii(r.end - c.pos);
  }
}

/** key 0x24: time and status bits (charge, archive, motion, RSSI, battery level) */
function statusRecord(c: Cursor, f: Fix): void {
  f.fixTime = seconds(c.u32());
  f.deviceTime = f.fixTime;
  const status = c.u32();
  if (bit(status, 4)) f.attributes.charge = true;
  if (bit(status, 7)) f.attributes.archive = true;
  f.attributes.motion = bit(status, 9);
  f.attributes.rssi = Math.floor(status / 2 ** 19) % 32;
  f.attributes.batteryLevel = Math.floor(status / 2 ** 24);
  f.attributes.status = status;
}

/** key 0x25: a call: time, status, duration, result and the number */
function callRecord(c: Cursor, r: RecordAt, f: Fix): void {
  f.fixTime = seconds(c.u32());
  f.deviceTime = f.fixTime;
  f.attributes.callStatus = c.u8();
  f.attributes.callDuration = c.u16();
  f.attributes.callResult = c.u8();
  f.attributes.phone = c.ascii(r.end - c.pos);
}

/** keys 0x28, 0x2C: one beacon of several, numbered by its flags' low nibble */
function beaconRecord(c: Cursor, r: RecordAt, f: Fix): void {
  const flags = c.u8();
  const n = (flags & 0x0f) + 1;
  const withBattery = r.key === K.KEY_BEACON_BATTERY;
  f.attributes[`tagId${n}`] = tagId(c);
  f.attributes[`tagRssi${n}`] = c.i8();
  f.attributes[`tag1mRssi${n}`] = c.i8();
  if (withBattery) f.attributes[`tagBattery${n}`] = c.u8();
  if (bit(flags, 7)) {
    coordinates(c, f);
    f.valid = true;
  }
  if (bit(flags, 6)) f.attributes[`description${n}`] = c.ascii(withBattery ? c.u8() : r.end - c.pos);
  if (withBattery && c.pos < r.end) f.attributes[`tagTemp${n}`] = c.i16BE() / 10;
}

/** key 0x2A: a known Wi-Fi access point with its place and description */
function wifiPositionRecord(c: Cursor, r: RecordAt, f: Fix): void {
  const flags = c.u8();
  c.bytes(7); // MAC and RSSI
  if (bit(flags, 7)) {
    coordinates(c, f);
    f.valid = true;
  }
  if (bit(flags, 6) && r.end > c.pos) f.attributes.description = c.ascii(r.end - c.pos);
}

/** keys 0x30, 0x31, 0x37, 0x40, 0x41: counters and health values, each after a timestamp */
function sensorRecord(c: Cursor, r: RecordAt, f: Fix): void {
  if (r.key === K.KEY_ACTIVITY) {
    for (let i = 1; c.pos < r.end; i++) {
      f.attributes[`activity${i}Time`] = c.u32();
      f.attributes[`activity${i}`] = c.u32();
    }
    return;
  }
  c.u32(); // timestamp
  if (r.key === K.KEY_STEPS) f.attributes.steps = c.u32();
  else if (r.key === K.KEY_BARKING) {
    const barking = c.u32();
    if (bit(barking, 31)) f.attributes.barkStop = true;
    f.attributes.barkCount = barking % 2 ** 31;
  } else {
    const value = c.u8();
    if (value > 1) f.attributes[r.key === K.KEY_HEART_RATE ? 'heartRate' : 'spO2'] = value;
  }
}

const READERS: Readonly<Record<number, (c: Cursor, r: RecordAt, f: Fix) => void>> = {
  [K.KEY_ALARM]: alarmRecord,
  [K.KEY_BATTERY]: (c, _r, f) => {
    f.attributes.batteryLevel = c.u8();
    f.attributes.battery = c.u16() / 1000;
  },
  [K.KEY_GPS]: (c, _r, f) => gpsRecord(c, f),
  [K.KEY_CELL]: cellRecord,
  [K.KEY_CELL_LONG]: cellRecord,
  [K.KEY_CELL_WIDE]: cellRecord,
  [K.KEY_WIFI_NAMED]: wifiRecord,
  [K.KEY_WIFI]: wifiRecord,
  [K.KEY_BLE_POSITION]: blePositionRecord,
  [K.KEY_BLE_POSITION_HDOP]: blePositionRecord,
  [K.KEY_STATUS]: (c, _r, f) => statusRecord(c, f),
  [K.KEY_CALL]: callRecord,
  [K.KEY_POSITION]: (c, _r, f) => {
    coordinates(c, f);
    f.valid = true;
    f.attributes.hdop = c.u16() / 10;
    f.altitudeM = c.i16();
  },
  [K.KEY_BEACON]: beaconRecord,
  [K.KEY_BEACON_BATTERY]: beaconRecord,
  [K.KEY_WIFI_POSITION]: wifiPositionRecord,
  [K.KEY_STEPS]: sensorRecord,
  [K.KEY_ACTIVITY]: sensorRecord,
  [K.KEY_BARKING]: sensorRecord,
  [K.KEY_HEART_RATE]: sensorRecord,
  [K.KEY_SPO2]: sensorRecord,
};

/** reads a data record's value into `f`; keys the reference does not read are skipped */
export function readDataRecord(c: Cursor, r: RecordAt, f: Fix): void {
  READERS[r.key]?.(c, r, f);
}
