import type { Alarm } from '../../core/model/alarm.js';
import type { ByteReader } from '../shared/byte-reader.js';
import type { NetworkInfo } from '../shared/network.js';
import { ProtocolError, type DecodedMessage } from '../types.js';
import { AOVX_MODELS, DOOR_MODELS } from './jt808.constants.js';
import {
  addAlarm,
  ascii,
  javaTrim,
  signMagnitude16,
  type ExtraContext,
  type ExtraHandler,
  type Jt808Context,
} from './jt808.fields.js';
import { decodeE6, decodeE8, decodeEA, decodeEB, decodeF3, decodeF6, decodeFE } from './jt808.vendor.js';

const hex = (v: ByteReader, n: number): string => v.bytes(n).toString('hex');
const rest = (v: ByteReader): Buffer => v.bytes(v.remaining);
const bit = (value: number, n: number): boolean => Math.floor(value / 2 ** n) % 2 === 1;

function wifiList(v: ByteReader, _m: DecodedMessage, x: ExtraContext): void {
  while (v.remaining >= 7) {
    const mac = hex(v, 6).replace(/(..)(?!$)/g, '$1:');
    x.net.addWifi(mac, v.i8());
  }
}

function batteryOrDriver(id: number) {
  return (v: ByteReader, m: DecodedMessage, x: ExtraContext): void => {
    const { length } = x;
    if (length === 1) {
      const level = v.u8();
      if (level === 0xff) m.attributes.charge = true;
      else m.attributes.batteryLevel = level;
    } else if (id === 0xe1 && length >= 12 && (length - 4) % 8 === 0) {
      const mcc = v.u16();
      const mnc = v.u16();
      while (v.remaining >= 8) {
        const lac = v.bytes(3).readUIntBE(0, 3);
        const cid = v.u32();
        const rssi = v.u8();
        if (lac > 0 && lac <= 0xffff && cid <= 0xfffffff) x.net.addCell(mcc, mnc, lac, cid, rssi);
      }
    } else if (id === 0xe1 && length === 2) {
      m.attributes.power = v.u16() / 10;
    } else {
      m.attributes.driverUniqueId = String(v.u32());
    }
  };
}

/** 0x0B JT701 lock command: command, card or password, unlock result (Traccar) */
export function lockCommand(v: ByteReader, m: DecodedMessage, length: number): void {
  m.attributes.lockCommand = v.u8();
  if (length >= 5 && length <= 6) m.attributes.lockCard = v.u32();
  else if (length >= 7) m.attributes.lockPassword = ascii(v.bytes(6));
  if (length % 2 === 0) m.attributes.unlockResult = v.u8();
}

/** 0x70 driving behaviour alarm type (Traccar) */
const BEHAVIOUR_ALARMS: Readonly<Record<number, Alarm>> = {
  0x01: 'hardAcceleration',
  0x02: 'hardBraking',
  0x03: 'hardCornering',
  0x16: 'accident',
};

/**
 * 8.18 table 27 additional information items (0x01-0x31 standard), then vendor items as Traccar
 * `Jt808ProtocolDecoder.decodeLocation` reads them. Each handler sees only its own value bytes.
 */
export const EXTRAS: Readonly<Record<number, ExtraHandler>> = {
  0x01: (v, m) => {
    m.attributes.odometer = v.u32() * 100;
  }, // mileage, 1/10 km
  0x02: (v, m) => {
    // fuel, 1/10 L (bit 15: percent)
    const fuel = v.u16();
    m.attributes.fuel = fuel & 0x8000 ? fuel & 0x7fff : fuel / 10;
  },
  0x06: (v, m) => {
    m.attributes.batteryLevel = v.u8();
  },
  0x0b: (v, m, x) => lockCommand(v, m, x.length), // JT701 lock command
  0x14: (v, m) => {
    m.attributes.videoAlarm = v.u32();
  }, // JT/T 1078 video alarm flags
  0x25: (v, m) => {
    m.attributes.input = v.u32();
  }, // extended vehicle signal status
  0x2b: (v, m) => {
    m.attributes.adc1 = v.u16() / 100;
    m.attributes.adc2 = v.u16() / 100;
  }, // analog inputs
  0xa7: (v, m) => {
    m.attributes.adc1 = v.u16() / 100;
    m.attributes.adc2 = v.u16() / 100;
  },
  0x30: (v, m) => {
    m.attributes.rssi = v.u8();
  }, // wireless signal strength
  0x31: (v, m) => {
    m.attributes.sat = v.u8();
  }, // GNSS satellites
  0x33: (v, m, x) => {
    if (x.length === 1) {
      m.attributes.mode = v.u8();
      return;
    }
    const s = ascii(rest(v));
    if (s.startsWith('*M00') && s.length >= 15) {
      const battery = Number.parseInt(s.substring(8, 15).substring(2, 5), 10);
      if (Number.isFinite(battery)) m.attributes.battery = battery / 100;
    }
  },
  0x51: (v, m, x) => {
    // temperatures, sign and magnitude, 1/10 degC
    if (x.length !== 2 && x.length !== 16) return;
    for (let i = 1; i <= x.length / 2; i++) {
      const value = v.u16();
      if (value !== 0xffff) m.attributes[`temp${i}`] = signMagnitude16(value) / 10;
    }
  },
  0x56: (v, m) => {
    m.attributes.batteryLevel = v.u8() * 10;
    v.u8();
  },
  0x57: (v, m, x) => {
    const driving = v.u16();
    if (bit(driving, 8)) addAlarm(m, 'hardAcceleration');
    if (bit(driving, 9)) addAlarm(m, 'hardBraking');
    if (bit(driving, 10)) addAlarm(m, 'hardCornering');
    v.u16(); // external switch state
    const alarm = v.u32();
    if (x.c.model && DOOR_MODELS.has(x.c.model) && bit(alarm, 16)) addAlarm(m, 'door');
  },
  0x60: (v, m) => {
    const event = v.u16();
    m.attributes.event = event;
    if (event >= 0x61 && event <= 0x66) {
      v.skip(6); // lock id
      m.attributes.driverUniqueId = ascii(v.bytes(8));
    }
  },
  0x63: (v, m, x) => {
    // padlocks: id, battery mV, seal, state, rssi
    for (let i = 1; i <= Math.floor(x.length / 11); i++) {
      m.attributes[`lock${i}Id`] = hex(v, 6);
      m.attributes[`lock${i}Battery`] = v.u16() / 1000;
      m.attributes[`lock${i}Seal`] = v.u8() === 0x31;
      v.skip(2);
    }
  },
  0x64: adasDms('adasAlarm'), // JT/T 1078 ADAS alarm
  0x65: adasDms('dmsAlarm'), // JT/T 1078 driver monitoring alarm
  0x67: (v, m) => {
    m.attributes.password = ascii(v.bytes(8));
  },
  0x68: (v, m) => {
    m.attributes.batteryLevel = v.u16() / 100;
  },
  0x69: (v, m) => {
    m.attributes.battery = v.u16() / 100;
  },
  0x70: (v, m) => {
    v.skip(5); // alarm serial, alarm status
    addAlarm(m, BEHAVIOUR_ALARMS[v.u8()]);
  },
  0x77: (v, m) => {
    // tyre pressure sensors
    while (v.remaining >= 7) {
      const i = v.u8();
      m.attributes[`tire${i}SensorId`] = hex(v, 3);
      m.attributes[`tire${i}Pressure`] = (v.u16() & 0x3ff) / 40;
      m.attributes[`tire${i}Temp`] = v.u8() - 50;
      m.attributes[`tire${i}Status`] = v.u8();
    }
  },
  0x82: (v, m) => {
    m.attributes.power = v.u16() / 10;
  },
  0x91: (v, m) => {
    // OBD block
    m.attributes.battery = v.u16() / 10;
    m.attributes.rpm = v.u16();
    m.attributes.obdSpeed = v.u8();
    m.attributes.throttle = Math.floor((v.u8() * 100) / 255);
    m.attributes.engineLoad = Math.floor((v.u8() * 100) / 255);
    m.attributes.coolantTemp = v.u8() - 40;
    v.u16();
    m.attributes.fuelConsumption = v.u16() / 100;
    v.skip(8);
    m.attributes.fuelUsed = v.u16() / 100;
  },
  0x94: (v, m, x) => {
    if (x.length > 0) m.attributes.vin = ascii(rest(v));
  },
  0xac: (v, m) => {
    m.attributes.odometer = v.u32();
  },
  0xbc: (v, m) => {
    m.attributes.driver = javaTrim(ascii(rest(v)));
  },
  0xbd: (v, m) => {
    m.attributes.driverUniqueId = ascii(rest(v));
  },
  0xd0: (v, m) => {
    if (bit(v.u32(), 3)) addAlarm(m, 'vibration');
  },
  0xd3: (v, m) => {
    m.attributes.power = v.u16() / 10;
  },
  0xd4: batteryOrDriver(0xd4),
  0xe1: batteryOrDriver(0xe1),
  0xe9: batteryOrDriver(0xe9),
  0xd5: (v, m, x) => {
    if (x.length === 2) {
      m.attributes.battery = v.u16() / 100;
      return;
    }
    const count = v.u8();
    for (let i = 1; i <= count; i++) {
      m.attributes[`lock${i}Id`] = hex(v, 5);
      m.attributes[`lock${i}Card`] = hex(v, 5);
      m.attributes[`lock${i}Battery`] = v.u8();
      m.attributes[`lock${i}Locked`] = !bit(v.u16(), 5);
    }
  },
  0xda: (v, m) => {
    v.u16(); // string cut count
    const status = v.u8();
    m.attributes.string = bit(status, 0);
    m.attributes.motion = bit(status, 2);
    m.attributes.cover = bit(status, 3);
  },
  0xe2: (v, m, x) => {
    if (x.c.model !== 'DT800') m.attributes.fuel = v.u32() / 10;
  },
  0xe3: (v, m) => {
    v.u8();
    m.attributes.batteryLevel = v.u8();
    m.attributes.battery = v.u16() / 100;
  },
  0xe4: (v, m) => {
    if (v.u8() === 0) m.attributes.charge = true;
    m.attributes.batteryLevel = v.u8();
  },
  0xe5: (v, m, x) => {
    if (x.length === 1) m.attributes.motion = v.u8() === 1;
  },
  0xe6: decodeE6,
  0xe7: (v, m, x) => {
    if (x.length !== 8) return;
    const alarm = v.u16();
    if (bit(alarm, 0)) addAlarm(m, 'vibration');
    if ((alarm >> 1) & 0x7) addAlarm(m, 'sos');
  },
  0xe8: decodeE8,
  0xea: decodeEA,
  0xeb: decodeEB,
  0xec: wifiList,
  0xf4: wifiList,
  0xed: (v, m) => {
    m.attributes.card = javaTrim(ascii(rest(v)));
  },
  0xee: (v, m, x) => {
    if (x.length !== 6) return;
    m.attributes.rssi = v.u8();
    m.attributes.power = v.u16() / 1000;
    m.attributes.battery = v.u16() / 1000;
    m.attributes.sat = v.u8();
  },
  0xf0: (v, _m, x) => {
    // cells: mcc u16, mnc u16, cid u32, lac u32, rssi
    while (v.remaining >= 13) {
      const mcc = v.u16();
      const mnc = v.u16();
      const cid = v.u32();
      const lac = v.u32();
      x.net.addCell(mcc, mnc, lac, cid, v.u8());
    }
  },
  0xf1: (v, m) => {
    m.attributes.power = v.u32() / 1000;
  },
  0xf2: (v, m) => {
    m.attributes.versionFw = ascii(rest(v));
  },
  0xf3: decodeF3,
  0xf5: (v, m, x) => {
    if (x.length === 2) m.attributes.illuminance = v.u16();
  },
  0xf6: decodeF6,
  0xf7: (v, m, x) => {
    if (x.length === 2) {
      m.attributes.humidity = v.u16() / 10;
      return;
    }
    m.attributes.battery = v.u32() / 1000;
    if (x.length >= 5) {
      const status = v.u8();
      if (status === 2 || status === 3) m.attributes.charge = true;
    }
    if (x.length >= 6) m.attributes.batteryLevel = v.u8();
  },
  0xf8: (v, m, x) => {
    if (x.c.model && AOVX_MODELS.has(x.c.model)) {
      v.u8(); // working mode
      v.skip(8); // imei
      m.attributes.iccid = hex(v, 10);
    } else if (x.c.model === 'C5' || x.c.model === 'C5L') {
      m.attributes.steps = v.u16();
    } else {
      m.attributes.temp2 = v.u16() / 10 - 50;
    }
  },
  0xf9: (v, m) => {
    const mask = v.u16();
    if (bit(mask, 0)) v.skip(4); // GNSS age
    if (bit(mask, 1)) v.skip(4); // ACC on time
    if (bit(mask, 2)) m.attributes.hdop = v.u16() / 10;
    if (bit(mask, 3)) v.skip(6); // GNSS time
    if (bit(mask, 5)) v.skip(8); // sampling and report interval
    if (bit(mask, 6)) {
      m.attributes.temp3 = v.i16() / 10;
      v.skip(4); // external temperature thresholds
    }
  },
  0xfb: (v, m) => {
    m.attributes.container = ascii(rest(v));
  },
  0xfc: (v, m) => {
    m.attributes.geofence = v.u8();
  },
  0xfe: decodeFE,
};

function adasDms(key: 'adasAlarm' | 'dmsAlarm'): ExtraHandler {
  return (v, m, x) => {
    v.skip(5); // alarm serial, alarm status
    m.attributes[key] = v.u8();
    if (x.length >= 47) {
      v.skip(v.remaining - 16);
      m.attributes.alarmLabel = hex(v, 16);
    }
  };
}

/** 0x80 OBD extension: `type u8, length u8, value` items up to the end of the body (Traccar `decodeExtension`) */
const OBD_EXTENSION: Readonly<Record<number, ExtraHandler>> = {
  0x01: (v, m) => {
    m.attributes.odometer = v.u32() * 100;
  },
  0x02: (v, m) => {
    m.attributes.fuel = v.u16() / 10;
  },
  0x03: (v, m) => {
    m.attributes.obdSpeed = v.u16() / 10;
  },
  0x56: (v, m) => {
    v.u8();
    m.attributes.batteryLevel = v.u8();
  },
  0x61: (v, m) => {
    m.attributes.power = v.u16() / 100;
  },
  0x69: (v, m) => {
    m.attributes.battery = v.u16() / 100;
  },
  0x80: (v, m) => {
    m.attributes.obdSpeed = v.u8();
  },
  0x81: (v, m) => {
    m.attributes.rpm = v.u16();
  },
  0x82: (v, m) => {
    m.attributes.power = v.u16() / 10;
  },
  0x83: (v, m) => {
    m.attributes.engineLoad = v.u8();
  },
  0x84: (v, m) => {
    m.attributes.coolantTemp = v.u8() - 40;
  },
  0x85: (v, m) => {
    m.attributes.fuelConsumption = v.u16();
  },
  0x86: (v, m) => {
    m.attributes.intakeTemp = v.u8() - 40;
  },
  0x87: (v, m) => {
    m.attributes.intakeFlow = v.u16();
  },
  0x88: (v, m) => {
    m.attributes.intakePressure = v.u8();
  },
  0x89: (v, m) => {
    m.attributes.throttle = v.u8();
  },
  0x8b: (v, m) => {
    m.attributes.vin = ascii(v.bytes(17));
  },
  0x8c: (v, m) => {
    m.attributes.obdOdometer = v.u32() * 100;
  },
  0x8d: (v, m) => {
    m.attributes.tripOdometer = v.u16() * 1000;
  },
  0x8e: (v, m) => {
    m.attributes.fuel = v.u8();
  },
  0xa0: (v, m) => {
    m.attributes.dtcs = ascii(rest(v)).replaceAll(',', ' ');
  },
  0xcc: (v, m) => {
    m.attributes.iccid = ascii(v.bytes(20));
  },
};

/** runs `handler` on one item; a value shorter than its handler reads is skipped with a warning */
function runItem(handler: ExtraHandler, v: ByteReader, m: DecodedMessage, x: ExtraContext, id: number): void {
  try {
    handler(v, m, x);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    x.c.warnings.push(`additional information 0x${id.toString(16).padStart(2, '0')} (${x.length} bytes) is too short`);
  }
}

/** `id u8, length u8, value` items until `r` ends */
function decodeItems(
  r: ByteReader,
  m: DecodedMessage,
  c: Jt808Context,
  net: NetworkInfo,
  table: Readonly<Record<number, ExtraHandler>>,
  withObd: boolean,
): void {
  while (r.remaining >= 2) {
    const id = r.u8();
    const length = r.u8();
    if (withObd && id === 0x80) {
      r.skip(Math.min(1, r.remaining)); // content
      decodeItems(r, m, c, net, OBD_EXTENSION, false);
      return;
    }
    if (length > r.remaining) {
      c.warnings.push(`additional information 0x${id.toString(16).padStart(2, '0')} runs past the body`);
      return;
    }
    const value = r.sub(length);
    const handler = table[id];
    if (handler) runItem(handler, value, m, { c, net, length }, id);
  }
}

/** 8.18 additional information after the basic location */
export function decodeExtras(r: ByteReader, m: DecodedMessage, c: Jt808Context, net: NetworkInfo): void {
  decodeItems(r, m, c, net, EXTRAS, true);
}

/** true when `r` holds whole `id, length, value` items and nothing else */
export function isItemChain(r: ByteReader): boolean {
  let pos = r.offset;
  const end = r.offset + r.remaining;
  while (end - pos >= 2) pos += 2 + r.buf[pos + 1];
  return pos === end;
}
