import type { AttributeValue } from '../types.js';
import type { Cursor } from './minifinder2.reader.js';

/**
 * The settings a configuration message (type 0x02) reports, by key, as the reference names them.
 * `n` is the value's length (the record's length byte less the key). Unlike data records, these
 * integers are big-endian (the coordinates stay little-endian).
 */
type ConfigReader = (c: Cursor, n: number, a: Record<string, AttributeValue>) => void;

const text =
  (name: string, less = 0): ConfigReader =>
  (c, n, a) => {
    a[name] = c.ascii(n - less);
  };
const u32 =
  (name: string): ConfigReader =>
  (c, _n, a) => {
    a[name] = c.u32BE();
  };

const CONFIG: Readonly<Record<number, ConfigReader>> = {
  0x01: u32('moduleNumber'),
  0x02: (c, _n, a) => {
    a.versionFw = String(c.u32BE());
  },
  0x03: text('imei'),
  0x04: text('iccid'),
  0x05: (c, n, a) => {
    a.bleMac = c.hex(n);
  },
  0x06: u32('settingTime'),
  0x07: u32('runTimes'),
  0x0a: (c, _n, a) => {
    a.interval = c.u24BE();
    a.petMode = c.u8();
  },
  0x0d: u32('passwordProtect'),
  0x0e: (c, _n, a) => {
    a.timeZone = c.i8();
  },
  0x0f: u32('enableControl'),
  0x13: text('deviceName'),
  0x14: (c, _n, a) => {
    a.batteryLevel = c.u8();
    a.battery = c.u16BE() / 1000;
  },
  0x15: (c, n, a) => {
    a.bleLatitude = c.i32() / 1e7;
    a.bleLongitude = c.i32() / 1e7;
    a.bleLocation = c.ascii(n - 8);
  },
  0x17: text('gpsUrl'),
  0x18: text('lbsUrl'),
  0x1a: text('firmware'),
  0x1b: text('gsmModule'),
  0x1d: (c, _n, a) => {
    a.agpsUpdate = c.u8();
    a.agpsLatitude = c.i32() / 1e7;
    a.agpsLongitude = c.i32() / 1e7;
  },
  0x30: (c, n, a) => {
    const index = c.u8() & 0x0f;
    a[`number${index}`] = c.ascii(n - 1);
  },
  0x31: (c, n, a) => {
    a.prefixFlag = c.u8();
    a.prefix = c.ascii(n - 1);
  },
  0x33: (c, _n, a) => {
    a.phoneSwitches = c.u8();
  },
  0x40: text('apn'),
  0x41: text('apnUser'),
  0x42: text('apnPassword'),
  0x43: (c, n, a) => {
    c.u8(); // flag
    a.port = c.u16BE();
    a.server = c.ascii(n - 3);
  },
  0x44: (c, _n, a) => {
    a.heartbeatInterval = c.u32BE();
    a.uploadInterval = c.u32BE();
    a.uploadLazyInterval = c.u32BE();
  },
  0x47: text('deviceId'),
  0x4e: (c, _n, a) => {
    a.gsmBand = c.u8();
  },
  0x50: u32('powerAlert'),
  0x51: u32('geoAlert'),
  0x53: u32('motionAlert'),
  0x5c: (c, _n, a) => {
    a.barkLevel = c.u8();
    a.barkInterval = c.u32BE();
  },
  0x61: text('msisdn'),
  0x62: (c, _n, a) => {
    a.wifiWhitelist = c.u8();
    a.wifiWhitelistMac = c.hex(6);
  },
  0x64: (c, n, a) => {
    a.rssi = c.u8();
    a.networkBand = c.u32BE();
    a.operator = c.ascii(n - 5);
  },
  0x65: (c, _n, a) => {
    a.rssi = c.u8();
    a.networkStatus = c.u8();
    a.serverStatus = c.u8();
    a.networkPlmn = c.hex(6);
    a.homePlmn = c.hex(6);
  },
  0x66: text('imsi'),
  0x75: u32('extraEnableControl'),
};

/** reads every record of a configuration message into attributes */
export function readConfiguration(c: Cursor): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  while (c.readable) {
    const n = c.u8() - 1;
    const end = c.pos + n + 1;
    const key = c.u8();
    CONFIG[key]?.(c, n, attributes);
    c.seek(end);
  }
  return attributes;
}
