import type { Alarm } from '../../core/model/alarm.js';
import type { ByteReader } from '../shared/byte-reader.js';
import type { DecodedMessage } from '../types.js';
import { AOVX_MODELS, JC_ALARMS, JC_MODELS } from './jt808.constants.js';
import { addAlarm, ascii, type ExtraContext } from './jt808.fields.js';

// Vendor additional-information items whose value has its own inner structure, as read from
// Traccar `Jt808ProtocolDecoder.decodeLocation` (commit 9e5c458ad0bf).

const bit = (value: number, n: number): boolean => Math.floor(value / 2 ** n) % 2 === 1;
const hex = (v: ByteReader, n: number): string => v.bytes(n).toString('hex');
const isPrintable = (b: Buffer): boolean => b.every((x) => x >= 0x20 && x < 0x7f);

/** `$OBD-RT,power,rpm,speed,throttle,load,coolant,instant,average,trip,odometer,tripFuel,fuelUsed` */
export function decodeObdRt(m: DecodedMessage, data: string): void {
  const keys = [
    'power',
    'rpm',
    'obdSpeed',
    'throttle',
    'engineLoad',
    'coolantTemp',
    'fuelConsumption',
    'fuelConsumption',
    'tripOdometer',
    'obdOdometer',
    'tripFuelUsed',
    'fuelUsed',
  ];
  const values = data.split(',');
  keys.forEach((key, i) => {
    const value = values[i + 1]?.trim();
    if (!value) return;
    const n = Number(value);
    if (Number.isFinite(n)) m.attributes[key] = key === 'coolantTemp' ? Math.trunc(n) : n;
  });
}

/** sign and `b2 / 255` fraction (Traccar `decodeCustomDouble`) */
function customDouble(v: ByteReader): number {
  const b1 = v.i8();
  const b2 = v.u8();
  const sign = b1 < 0 ? -1 : 1;
  return sign * (Math.abs(b1) + b2 / 255);
}

/** 0xE6: `$OBD-RT` text, or 11-byte temperature and humidity sensors */
export function decodeE6(v: ByteReader, m: DecodedMessage, x: ExtraContext): void {
  const head = v.buf.subarray(v.offset, v.offset + Math.min(7, v.remaining));
  if (x.length >= 7 && ascii(head) === '$OBD-RT') {
    decodeObdRt(m, v.bytes(v.remaining).toString('utf8'));
  } else if (x.length >= 11 && x.length % 11 === 0) {
    while (v.remaining >= 11) {
      const i = v.u8();
      v.skip(6); // mac
      m.attributes[`temp${i}`] = customDouble(v);
      m.attributes[`humidity${i}`] = customDouble(v);
    }
  }
}

/** 0xE8 on Jimi JC dashcams: typed status blocks and alarm codes; elsewhere a lock status */
export function decodeE8(v: ByteReader, m: DecodedMessage, x: ExtraContext): void {
  if (!x.c.model || !JC_MODELS.has(x.c.model)) {
    m.attributes.lockStatus = v.bytes(3).readUIntBE(0, 3);
    return;
  }
  const type = v.u16();
  const a = m.attributes;
  switch (type) {
    case 0x2002: // upload mode
      v.u8();
      a.uploadMode = v.u8();
      a.buffered = v.u8() === 1;
      return;
    case 0x2003: {
      // power status
      v.u8();
      a.charge = v.u8() === 1;
      const level = v.u8();
      if (level >= 1 && level <= 6) a.batteryLevel = Math.floor((level * 100) / 6);
      a.battery = v.u16() / 100;
      a.rssi = v.u8();
      a.power = v.u16() / 100;
      return;
    }
    case 0x2005: // status list: id u16, length u8, value
      v.u8();
      while (v.remaining >= 3) {
        const id = v.u16();
        const s = v.sub(Math.min(v.u8(), v.remaining));
        if (id === 0x0001) a.battery = s.u16() / 100;
        else if (id === 0x0002) a.dataUsage = s.u32();
        else if (id === 0x0003) a.batteryLevel = s.u8();
        else if (id === 0x0004) a.charge = s.u8() === 0;
        else if (id === 0x0005) a.iccid = hex(s, 10).substring(0, 19);
        else if (id === 0x0007) a.hdop = s.u16() / 10;
        else if (id === 0x2001) a.power = s.u16() / 10;
      }
      return;
    case 0x0c03:
      a.ignition = true;
      return;
    case 0x0c04:
      a.ignition = false;
      return;
    default:
      addAlarm(m, JC_ALARMS[type]);
  }
}

/** 0xEA: extended sensor block, `type u8, length u8, value` after one info-type byte */
export function decodeEA(v: ByteReader, m: DecodedMessage, x: ExtraContext): void {
  if (x.length <= 2) return;
  v.u8(); // extended info type
  while (v.remaining >= 2) {
    const type = v.u8();
    const length = v.u8();
    if (length > v.remaining) return;
    const s = v.sub(length);
    if (type === 0x11) {
      m.attributes.externalAlarms = s.u16();
      m.attributes.alarmThresholdType = s.u8();
    } else if (type === 0x13) m.attributes.externalIlluminance = s.u16();
    else if (type === 0x14) m.attributes.externalAirPressure = s.u16();
    else if (type === 0x15) m.attributes.externalHumidity = s.u16() / 10;
    else if (type === 0x16) m.attributes.externalTemp = s.u16() / 10 - 50;
  }
}

/** 0xEB extended list item: `length u16 (type included), type u16, value` */
const EB_ITEMS: Readonly<Record<number, (s: ByteReader, m: DecodedMessage, x: ExtraContext, length: number) => void>> =
  {
    0x0001: (s, m) => {
      m.attributes.fuel1 = s.u16() / 10;
    },
    0x0023: (s, m) => {
      const fuel = Number(ascii(s.bytes(6)).trim());
      if (Number.isFinite(fuel)) m.attributes.fuel2 = fuel;
    },
    0x002d: (s, m, _x, length) => {
      // voltage, mV
      if (length === 6) m.attributes.power = s.u32() / 1000;
      else m.attributes.battery = s.u16() / 1000;
    },
    0x0089: (s, m) => {
      // alarm bits, active low
      const alarm = s.u32();
      if (!bit(alarm, 0)) addAlarm(m, 'powerOff');
      if (!bit(alarm, 12)) addAlarm(m, 'removing');
    },
    0x00b2: (s, m) => {
      m.attributes.iccid = hex(s, 10).replace(/f+$/, '');
    },
    0x00b9: (s, _m, x, length) => {
      // Wi-Fi: count, then "mac,rssi,mac,rssi"
      s.u8();
      const wifi = ascii(s.bytes(Math.max(0, Math.min(length - 3, s.remaining)))).split(',');
      for (let i = 0; i + 1 < wifi.length; i += 2) {
        const rssi = Number.parseInt(wifi[i + 1], 10);
        if (Number.isFinite(rssi)) x.net.addWifi(wifi[i], rssi);
      }
    },
    0x00c5: (s, m) => {
      const alarm = s.u32();
      if (!bit(alarm, 6)) addAlarm(m, 'vibration');
      const motion = Math.floor(alarm / 2 ** 23) % 4;
      if (motion === 0) m.attributes.motion = true;
      else if (motion === 1) m.attributes.motion = false;
    },
    0x00c6: (s, m) => {
      const battery = s.u8();
      if (battery === 0x03 || battery === 0x04) addAlarm(m, 'lowBattery');
      m.attributes.batteryAlarm = battery;
    },
    0x00ce: (s, m) => {
      m.attributes.power = s.u16() / 100;
    },
    0x00d8: (s, _m, x) => {
      x.net.addCell(s.u16(), s.u8(), s.u16(), s.u32());
    },
    0x00a8: (s, m) => {
      m.attributes.batteryLevel = s.u8();
    },
    0x00e1: (s, m) => {
      m.attributes.batteryLevel = s.u8();
    },
  };

/** 0xEB: cell list, a time zone text, or an extended list */
export function decodeEB(v: ByteReader, m: DecodedMessage, x: ExtraContext): void {
  const length = x.length;
  if (length >= 2 && v.buf.readUInt16BE(v.offset) > 200 && (length - 3) % 5 === 0) {
    const mcc = v.u16();
    const mnc = v.u8();
    while (v.remaining >= 5) x.net.addCell(mcc, mnc, v.u16(), v.u16(), v.u8());
    return;
  }
  const value = v.buf.subarray(v.offset, v.offset + v.remaining);
  if (length > 0 && isPrintable(value)) {
    m.attributes.timezone = value.toString('utf8');
    return;
  }
  while (v.remaining >= 4) {
    const itemLength = v.u16();
    if (itemLength < 2 || itemLength > v.remaining) return;
    const s = v.sub(itemLength);
    const type = s.u16();
    EB_ITEMS[type]?.(s, m, x, itemLength);
  }
}

/** 0xF3: BLE tags on AOVX models, otherwise an OBD list `type u16, length u8, value` */
export function decodeF3(v: ByteReader, m: DecodedMessage, x: ExtraContext): void {
  const a = m.attributes;
  if (x.c.model && AOVX_MODELS.has(x.c.model)) {
    const mask = v.u8();
    for (let i = 1; v.remaining > 0; i++) {
      a[`tag${i}Mac`] = hex(v, 6);
      a[`tag${i}Rssi`] = v.i8();
      if (bit(mask, 0)) a[`tag${i}Name`] = ascii(v.bytes(10)).trim();
      if (bit(mask, 1)) v.skip(2); // firmware version
      if (bit(mask, 2)) a[`tag${i}Battery`] = v.u16() / 1000;
      if (bit(mask, 3)) a[`tag${i}Temp`] = v.i16() / 10;
      if (bit(mask, 4)) a[`tag${i}Humidity`] = v.i16() / 10;
      if (bit(mask, 5)) v.skip(6); // accelerometer
      if (bit(mask, 6)) v.skip(2);
      if (bit(mask, 7)) v.skip(2);
    }
    return;
  }
  while (v.remaining >= 3) {
    const type = v.u16();
    const s = v.sub(Math.min(v.u8(), v.remaining));
    const item = F3_OBD[type];
    if (item) item(s, a);
  }
}

type Attrs = DecodedMessage['attributes'];
const F3_OBD: Readonly<Record<number, (s: ByteReader, a: Attrs) => void>> = {
  0x0002: (s, a) => {
    a.obdSpeed = s.u16() / 10;
  },
  0x0003: (s, a) => {
    a.rpm = s.u16();
  },
  0x0004: (s, a) => {
    a.power = s.u16() / 1000;
  },
  0x0005: (s, a) => {
    a.obdOdometer = s.u32() * 100;
  },
  0x0007: (s, a) => {
    a.fuelConsumption = s.u16() / 10;
  },
  0x0008: (s, a) => {
    a.engineLoad = s.u16() / 10;
  },
  0x0009: (s, a) => {
    a.coolantTemp = s.u16() - 40;
  },
  0x000b: (s, a) => {
    a.intakePressure = s.u16();
  },
  0x000c: (s, a) => {
    a.intakeTemp = s.u16() - 40;
  },
  0x000d: (s, a) => {
    a.intakeFlow = s.u16();
  },
  0x000e: (s, a) => {
    a.throttle = Math.floor((s.u16() * 100) / 255);
  },
  0x0050: (s, a) => {
    a.vin = ascii(s.bytes(Math.min(17, s.remaining))).replace(/\0+$/, '');
  },
  0x0051: (s, a) => {
    if (s.remaining > 0) a.cvn = hex(s, s.remaining);
  },
  0x0052: (s, a) => {
    if (s.remaining > 0) a.calid = ascii(s.bytes(s.remaining)).replace(/\0+$/, '');
  },
  0x0100: (s, a) => {
    a.tripOdometer = s.u16() / 10;
  },
  0x0102: (s, a) => {
    a.tripFuel = s.u16() / 10;
  },
  0x0112: (s, a) => {
    a.hardAccelerationCount = s.u16();
  },
  0x0113: (s, a) => {
    a.hardDecelerationCount = s.u16();
  },
  0x0114: (s, a) => {
    a.hardCorneringCount = s.u16();
  },
};

/** 0xF6: air pressure, IMEI, or an event with a sensor mask */
export function decodeF6(v: ByteReader, m: DecodedMessage, x: ExtraContext): void {
  const aovx = !!x.c.model && AOVX_MODELS.has(x.c.model);
  const a = m.attributes;
  if (!aovx && x.length === 2) {
    a.airPressure = v.u16();
    return;
  }
  if (!aovx && x.length === 8) {
    a.imei = hex(v, 8).substring(1);
    return;
  }
  const event = v.u8();
  a.event = event;
  if (event === 2) a.motion = true;
  const mask = v.u8();
  if (bit(mask, 0)) a.lightSensor = v.u16();
  if (bit(mask, 1)) a.temp1 = v.i16() / 10;
  if (bit(mask, 2)) a.humidity = v.i16() / 10;
  if (bit(mask, 3)) a.gSensor = `[${v.i16()},${v.i16()},${v.i16()}]`;
  if (bit(mask, 4)) v.skip(10); // threshold configuration
  if (bit(mask, 5)) a.airPressure = v.u16();
}

const FE_ALARMS: readonly Alarm[] = ['hardAcceleration', 'hardBraking', 'hardCornering', 'accident', 'tampering'];

/** 0xFE: battery level, power, odometer, or a `7C` alarm list then battery level */
export function decodeFE(v: ByteReader, m: DecodedMessage, x: ExtraContext): void {
  if (x.length === 1) m.attributes.batteryLevel = v.u8();
  else if (x.length === 2) m.attributes.power = v.u16() / 10;
  else if (x.length === 4) m.attributes.odometer = v.u32();
  else {
    if (v.u8() === 0x7c) {
      while (v.remaining >= 2) {
        const type = v.u8();
        const s = v.sub(Math.min(v.u8(), v.remaining));
        if (type === 0x01) {
          const alarms = s.u32();
          FE_ALARMS.forEach((alarm, i) => {
            if (bit(alarms, i)) addAlarm(m, alarm);
          });
        }
      }
    }
    if (v.remaining > 0) m.attributes.batteryLevel = v.u8();
  }
}
