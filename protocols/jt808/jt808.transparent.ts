import type { ByteReader } from '../shared/byte-reader.js';
import type { DecodedMessage } from '../types.js';
import { TRANSPARENT_ALARMS, TRANSPARENT_EVENTS } from './jt808.constants.js';
import {
  addAlarm,
  ascii,
  checkCoordinates,
  javaTrim,
  newMessage,
  readStatusAndCoordinates,
  readTime,
  setTime,
  tolerant,
  type Jt808Context,
} from './jt808.fields.js';
import { readLocationBody, setCourse } from './jt808.location.js';
import { decodeObdRt } from './jt808.vendor.js';

// 8.62 uplink pass-through 0x0900: a type byte, then vendor content (Traccar `decodeTransparent`).

type TransparentHandler = (r: ByteReader, c: Jt808Context) => DecodedMessage[];

const bit = (value: number, n: number): boolean => Math.floor(value / 2 ** n) % 2 === 1;

/** status, coordinates and the time read earlier: the fix these Jimi blocks end with */
function endWithCoordinates(r: ByteReader, m: DecodedMessage, c: Jt808Context): void {
  const location = checkCoordinates(readStatusAndCoordinates(r, m, c), c);
  if (location) m.location = location;
}

/** 0xF0 subtype 0x01: `id u16, length u8, value` OBD data items */
const F0_DATA: Readonly<Record<number, (v: ByteReader, m: DecodedMessage) => void>> = {
  0x0102: (v, m) => {
    m.attributes.odometer = v.u32() * 100;
  },
  0x0528: (v, m) => {
    m.attributes.odometer = v.u32() * 100;
  },
  0x0546: (v, m) => {
    m.attributes.odometer = v.u32() * 100;
  },
  0x0103: (v, m) => {
    m.attributes.fuel = v.u32() / 100;
  },
  0x0111: (v, m) => {
    m.attributes.fuelTemp = v.u8() - 40;
  },
  0x012e: (v, m) => {
    m.attributes.oilLevel = v.u16() / 10;
  },
  0x052a: (v, m) => {
    m.attributes.fuel = v.u16() / 100;
  },
  0x0105: (v, m) => {
    m.attributes.fuelUsed = v.u32() / 100;
  },
  0x052c: (v, m) => {
    m.attributes.fuelUsed = v.u32() / 100;
  },
  0x014a: (v, m) => {
    m.attributes.fuelConsumption = v.u16() / 100;
  },
  0x0537: (v, m) => {
    m.attributes.fuelConsumption = v.u16() / 100;
  },
  0x0538: (v, m) => {
    m.attributes.fuelConsumption = v.u16() / 100;
  },
  0x0539: (v, m) => {
    m.attributes.fuelConsumption = v.u16() / 100;
  },
  0x052b: (v, m) => {
    m.attributes.fuel = v.u8();
  },
  0x052d: (v, m) => {
    m.attributes.coolantTemp = v.u8() - 40;
  },
  0x052e: (v, m) => {
    m.attributes.airTemp = v.u8() - 40;
  },
  0x0530: (v, m) => {
    m.attributes.power = v.u16() / 1000;
  },
  0x0535: (v, m) => {
    m.attributes.obdSpeed = v.u16() / 10;
  },
  0x0536: (v, m) => {
    m.attributes.rpm = v.u16();
  },
  0x053d: (v, m) => {
    m.attributes.intakePressure = v.u16() / 10;
  },
  0x0544: (v, m) => {
    m.attributes.liquidLevel = v.u8();
  },
  0x0547: (v, m) => {
    m.attributes.throttle = v.u8();
  },
  0x0548: (v, m) => {
    m.attributes.throttle = v.u8();
  },
  0xfeec: (v, m) => {
    m.attributes.vin = ascii(v.bytes(v.remaining));
  },
};

/** Jimi 0xF0 subtypes after BCD time, archive flag and vehicle type */
const F0_SUBTYPES: Readonly<Record<number, (r: ByteReader, m: DecodedMessage, c: Jt808Context) => boolean>> = {
  0x01: (r, m, c) => {
    // OBD data stream
    const count = r.u8();
    for (let i = 0; i < count; i++) {
      const id = r.u16();
      const v = r.sub(r.u8());
      const item = F0_DATA[id];
      if (item) item(v, m);
      else if (v.remaining === 1) m.attributes[`io${id}`] = v.u8();
      else if (v.remaining === 2) m.attributes[`io${id}`] = v.u16();
      else if (v.remaining === 4) m.attributes[`io${id}`] = v.u32();
    }
    endWithCoordinates(r, m, c);
    return true;
  },
  0x02: (r, m, c) => {
    // fault codes
    const codes: string[] = [];
    const systems = r.u16();
    for (let i = 0; i < systems; i++) {
      r.skip(4); // system id
      const count = r.u16();
      for (let j = 0; j < count; j++) {
        r.skip(8); // dtc, status
        codes.push(javaTrim(ascii(r.bytes(r.u16()))));
      }
    }
    m.attributes.dtcs = codes.join(' ');
    endWithCoordinates(r, m, c);
    return true;
  },
  0x03: (r, m, c) => {
    // alarms
    const count = r.u8();
    for (let i = 0; i < count; i++) {
      const id = r.u8();
      r.skip(r.u8());
      addAlarm(m, TRANSPARENT_ALARMS[id]);
    }
    endWithCoordinates(r, m, c);
    return true;
  },
  0x04: (r, m) => {
    // trip
    const property = r.u8();
    m.attributes.tripNumber = r.u32();
    r.skip(6); // start time
    if (property === 0x02) {
      r.skip(6 + 8 + 8 + 1); // end time, start and end location, location flags
      m.attributes.idlingCount = r.u16();
      m.attributes.idlingTime = r.u16();
      m.attributes.tripOdometer = r.u16() * 100;
      m.attributes.tripFuel = r.u16() / 100;
    }
    return true;
  },
  0x0b: (r, m) => {
    // VIN
    if (r.u8() > 0) m.attributes.vin = ascii(r.bytes(17));
    return true;
  },
  0x15: (r, m) => {
    // driving event
    const event = r.i32();
    const alarm = TRANSPARENT_EVENTS[event];
    if (alarm) addAlarm(m, alarm);
    else m.attributes.event = event;
    return true;
  },
};

const TRANSPARENT: Readonly<Record<number, TransparentHandler>> = {
  0x40: (r) => {
    // text; `GTSL|…|…|…|driver` is a driver card swipe
    const m = newMessage();
    const data = javaTrim(ascii(r.bytes(r.remaining)));
    if (data.startsWith('GTSL')) {
      const values = data.split('|');
      if (values.length > 4) m.attributes.driverUniqueId = values[4];
    } else {
      m.attributes.data = data;
    }
    return Object.keys(m.attributes).length ? [m] : [];
  },
  0x41: (r) => {
    // $OBD-RT text
    const m = newMessage();
    decodeObdRt(m, javaTrim(ascii(r.bytes(r.remaining))));
    return [m];
  },
  0xf0: (r, c) => {
    const m = newMessage();
    const time = readTime(r, c.utcOffsetMinutes);
    if (r.u8() > 0) m.attributes.archive = true;
    r.u8(); // vehicle type
    const subtype = F0_SUBTYPES[r.u8()];
    if (!subtype) return [];
    subtype(r, m, c);
    setTime(m, time, c);
    return [m];
  },
  0xff: (r, c) => {
    // fix with signed coordinates
    const m = newMessage();
    setTime(m, readTime(r, c.utcOffsetMinutes), c);
    const location = {
      latitudeDeg: r.i32() / 1e6,
      longitudeDeg: r.i32() / 1e6,
      valid: true,
      altitudeM: r.i16(),
      speedKmh: r.u16() / 10,
    };
    setCourse(location, r.u16());
    const checked = checkCoordinates(location, c);
    if (checked) m.location = checked;
    return [m];
  },
  0xf3: (r, c) => {
    // collision: `subtype u16, length u16, value`
    const m = newMessage();
    while (r.remaining > 4) {
      const subtype = r.u16();
      const v = r.sub(Math.min(r.u16(), r.remaining));
      if (subtype === 0x0002) m.attributes.collision = v.u16() / 256 / 100;
      else if (subtype === 0x0006) setTime(m, readTime(v, c.utcOffsetMinutes), c);
    }
    return [m];
  },
  0x53: (r, c) => tagsOrSensors(r, c, true),
  0x54: (r, c) => tagsOrSensors(r, c, false),
};

/** AOVX 0x53 BLE tags / 0x54 sensor samples after status, coordinates, altitude, speed, course and time */
function tagsOrSensors(r: ByteReader, c: Jt808Context, tags: boolean): DecodedMessage[] {
  const m = newMessage();
  readLocationBody(r, m, c);
  const a = m.attributes;
  if (tags) {
    tolerant(c, 'BLE tag list', () => {
      r.u8(); // total node count across packets
      while (r.remaining > 0) {
        const i = r.u8() + 1;
        a[`tag${i}Mac`] = r.bytes(6).toString('hex');
        a[`tag${i}Rssi`] = r.i8();
        a[`tag${i}Data`] = r.bytes(r.u8()).toString('hex');
      }
    });
    return [m];
  }
  tolerant(c, 'sensor samples', () => {
    while (r.remaining > 0) {
      const mask = r.u16();
      r.skip(6); // sample time
      if (bit(mask, 0)) a.lightSensor = r.u16();
      if (bit(mask, 1)) {
        a.deviceTemp = r.i16() / 10;
        a.humidity = r.i16() / 10;
      }
      if (bit(mask, 2)) a.temp3 = r.i16() / 10;
      if (bit(mask, 3)) r.skip(6); // acceleration
      if (bit(mask, 4)) a.airPressure = r.u16();
    }
  });
  return [m];
}

/** 0x0900: the type byte picks the handler */
export function decodeTransparent(r: ByteReader, c: Jt808Context): DecodedMessage[] {
  const handler = TRANSPARENT[r.u8()];
  return handler ? handler(r, c) : [];
}
