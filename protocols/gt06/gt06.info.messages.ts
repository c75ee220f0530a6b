/**
 * The information family: what a tracker reports besides its position (0x7979 information,
 * strings, OBD, modules, multimedia, external devices, status items; on 0x7878 command answers,
 * power, Bluetooth punch clocks and the WD-209 battery).
 */
import { ByteReader } from '../shared/byte-reader.js';
import type { CommandResult } from '../types.js';
import { knotsToKmh } from '../shared/units.js';
import {
  ack,
  decodeGps,
  decodeLbs,
  hex,
  isPrintable,
  outcome,
  Pos,
  readDate,
  round2,
  u24,
  type Gt06Env,
  type Outcome,
} from './gt06.blocks.js';
import * as C from './gt06.constants.js';
import { AZ735_ALARMS, MODULAR_EVENTS, PROTOCOL } from './gt06.constants.js';

// 0x21 string information: "Current position!Lat:N..,Lon:E..,Course:..,Speed:..,DateTime:yyyy-MM-dd HH:mm:ss"
// (Traccar PATTERN_LOCATION; the speed is taken as knots, as Traccar does)
const PATTERN_LOCATION =
  /Current position!Lat:([NS])(\d+\.\d+),Lon:([EW])(\d+\.\d+),Course:(\d+\.\d+),Speed:(\d+\.\d+),DateTime:(\d{4})-(\d\d)-(\d\d) +(\d\d):(\d\d):(\d\d)/;

// 0x94 sub-type 0x0D fuel sensor: "!AIOIL,addr,output,temperature,version,wave+status,measured,moving,times,checksum"
// (Traccar PATTERN_FUEL)
const PATTERN_FUEL = /!AIOIL,\d+,\d+\.\d+,(\d+\.\d+),[^,]+,\d\d\d\d,(\d+\.\d+),[01],\d+,[0-9A-Fa-f]{2}/;

/** 0x21 string information (0x7979): server flag, encoding (1 ASCII, else UTF-16BE), text. */
export function decodeStringInfo(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  const serverFlag = r.u32();
  const ascii = r.u8() === 1;
  const raw = r.bytes(r.remaining - 6, 'text');
  const data = ascii ? raw.toString('ascii') : utf16be(raw);
  const m = PATTERN_LOCATION.exec(data);
  if (m) {
    const lat = Number(m[2]) * (m[1] === 'S' ? -1 : 1);
    const lon = Number(m[4]) * (m[3] === 'W' ? -1 : 1);
    const course = Number(m[5]);
    pos.location = { latitudeDeg: lat, longitudeDeg: lon, valid: true, speedKmh: knotsToKmh(Number(m[6])) };
    if (course <= 360) pos.location.courseDeg = course;
    pos.fixTime = new Date(Date.UTC(+m[7], +m[8] - 1, +m[9], +m[10], +m[11], +m[12]));
  } else {
    pos.set('result', data);
  }
  // every 0x21 answers a command, a position too (the answer to WHERE#)
  return { ...outcome(pos, ack(env)), commandResults: [{ text: data, serverFlag }] };
}

function utf16be(raw: Buffer): string {
  const even = raw.subarray(0, raw.length & ~1);
  const swapped = Buffer.from(even);
  swapped.swap16();
  return swapped.toString('utf16le');
}

/** 0x94 information transmission (0x7979), by sub-type. No reply. */
export function decodeInfo(r: ByteReader, env: Gt06Env): Outcome {
  const subType = r.u8();
  const pos = new Pos();
  switch (subType) {
    case 0x00: // external voltage
      pos.set('adc1', r.u16() / 100);
      break;
    case 0x04: // terminal status sync: "ALM1=..;ALM2=..;STA1=..;DYD=.."
      for (const value of r
        .bytes(r.remaining - 6, 'text')
        .toString('ascii')
        .split(';')) {
        const [key, v] = value.split('=');
        if (v === undefined) continue;
        const n = Number.parseInt(v, 16);
        if (Number.isNaN(n)) continue;
        if (/^ALM[1-4]$/.test(key)) pos.set(`alarm${key[3]}Status`, n);
        else if (key === 'STA1') pos.set('otherStatus', n);
        else if (key === 'DYD') pos.set('engineStatus', n);
      }
      break;
    case 0x05: {
      // door status
      if (r.remaining >= 6 + 1 + 6) readDate(r, env); // device time
      const flags = r.u8();
      pos.set('door', (flags & 0x01) !== 0);
      pos.set('io1', (flags & 0x04) !== 0);
      break;
    }
    case 0x0a: // IMEI, IMSI, ICCID
      r.skip(8 + 8);
      pos.set('iccid', hex(r.bytes(10, 'iccid')).replace(/f+$/, ''));
      break;
    case 0x0b: {
      // network technology (1 byte) or external power (2 bytes)
      const contentLength = env.length - 6;
      if (contentLength === 1) pos.set('networkTechnology', r.i8() > 0 ? '4G' : '2G');
      else if (contentLength === 2) pos.set('power', r.u16() / 100);
      break;
    }
    case 0x0d: {
      // fuel sensor text
      r.need(1);
      if (r.buf[r.offset] !== 0x21) r.skip(6); // '!'
      const m = PATTERN_FUEL.exec(r.bytes(r.remaining - 6, 'text').toString('ascii'));
      if (!m) return outcome(undefined);
      pos.set('temp1', Number(m[1]));
      pos.set('fuel', Number(m[2]));
      break;
    }
    case 0x1b: // RFID reader: ASCII serial, or framed 4-byte card id
      r.need(1);
      if (/[A-Za-z]/.test(String.fromCharCode(r.buf[r.offset]))) {
        pos.set(
          'serial',
          r
            .bytes(r.remaining - 6, 'text')
            .toString('ascii')
            .trim(),
        );
      } else {
        r.u8(); // header
        r.u8(); // type
        pos.set('driverUniqueId', hex(r.bytes(4, 'card')));
        r.u8(); // checksum
        r.u8(); // footer
      }
      break;
    case 0x1e: // temperature and humidity, x10
      pos.set('temp1', r.i32() / 10);
      pos.set('humidity', r.i32() / 10);
      break;
    default:
      return outcome(undefined);
  }
  return outcome(pos);
}

/** 0x7979 0x32/0x33 AZ735: GPS with length byte, LBS with length + rssi, cells, Wi-Fi, status. */
export function decodeAz735(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  decodeGps(r, pos, env, { hasLength: true });
  if (decodeLbs(r, pos, env, true)) pos.set('rssi', r.u8());
  r.skip(r.u8()); // additional cell towers
  r.skip(r.u8()); // wifi access points
  const status = r.u8();
  pos.set('status', status);
  if (env.type === C.MSG_AZ735_ALARM) {
    if (status === 0xa0) pos.set('armed', true);
    else if (status === 0xa1) pos.set('armed', false);
    else pos.addAlarm(AZ735_ALARMS[status]);
  }
  r.skip(r.u8()); // reserved extension
  return outcome(pos, ack(env, true));
}

/** 0x8C OBD (FM08ABC): time, ACC, `id=hex` pairs. No reply. */
export function decodeObd(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  pos.fixTime = readDate(r, env);
  pos.set('ignition', r.u8() > 0);
  const data = r.bytes(r.remaining - 18, 'obd text').toString('ascii');
  const keys: Record<number, string> = {
    40: 'odometer',
    43: 'fuel',
    45: 'coolantTemp',
    53: 'obdSpeed',
    54: 'rpm',
    71: 'fuelUsed',
    73: 'hours',
  };
  for (const pair of data.split(',')) {
    const values = pair.split('=');
    if (values.length < 2) continue;
    const id = Number.parseInt(values[0].substring(0, 2), 16);
    if (id === 74) pos.set('vin', values[1]);
    else if (keys[id]) {
      const n = Number.parseInt(values[1], 16);
      if (!Number.isNaN(n)) pos.set(keys[id], n / 100);
    }
  }
  return outcome(pos);
}

/** Module 0x33 of a 0x70 message: a GPS fix (an out-of-range one leaves the position as it was). */
function decodeModularLocation(m: ByteReader, pos: Pos): void {
  pos.fixTime = new Date(m.u32() * 1000);
  const sat = m.u8();
  pos.set('sat', sat);
  const altitudeM = m.i16();
  let lat = m.u32() / 60 / 30000;
  let lon = m.u32() / 60 / 30000;
  const speedKmh = m.u8();
  const flags = m.u16();
  if (!(flags & 0x0400)) lat = -lat;
  if (flags & 0x0800) lon = -lon;
  if (Math.abs(lat) > 90 || Math.abs(lon) > 180) return;
  pos.location = {
    latitudeDeg: lat,
    longitudeDeg: lon,
    valid: (flags & 0x1000) !== 0,
    speedKmh,
    altitudeM,
    satellites: sat,
  };
  if ((flags & 0x3ff) <= 360) pos.location.courseDeg = flags & 0x3ff;
}

/** One 0x70 module, read from its own bytes (Traccar `MSG_GPS_MODULAR`). */
function decodeModularModule(id: number, m: ByteReader, pos: Pos): void {
  switch (id) {
    case 0x03:
      pos.set('iccid', hex(m.bytes(10)));
      break;
    case 0x09:
      pos.set('sat', m.u8());
      break;
    case 0x0a:
      pos.set('satVisible', m.u8());
      break;
    case 0x11: {
      const cell = {
        mobileCountryCode: m.u16(),
        mobileNetworkCode: m.u16(),
        locationAreaCode: m.u16(),
        cellId: u24(m),
        signalStrength: m.u8(),
      };
      if (cell.cellId > 0) pos.cells.push(cell);
      break;
    }
    case 0x18:
      pos.set('battery', m.u16() / 100);
      break;
    case 0x28:
      pos.set('hdop', m.u8() / 10);
      break;
    case 0x29:
      pos.set('index', m.u32());
      break;
    case 0x2a: {
      const input = m.u8();
      pos.set('door', (input & 0x0f) > 0);
      pos.set('tamper', input >> 4 > 0);
      break;
    }
    case 0x2b:
      pos.set('bootReason', m.u8());
      break;
    case 0x2e:
      pos.set('odometer', m.bytes(4).readUInt32LE(0));
      break;
    case 0x33:
      decodeModularLocation(m, pos);
      break;
    case 0x34: {
      const event = m.u8();
      pos.addAlarm(MODULAR_EVENTS[event]);
      pos.set('event', event);
      break;
    }
    case 0x7f:
      pos.set('tag1Id', hex(m.bytes(6)));
      pos.set('tag1Battery', m.u16() / 1000);
      pos.set('tag1BatteryLevel', m.u8());
      pos.set('tag1Temp', m.i16() / 10);
      pos.set('tag1Humidity', m.i16());
      pos.set('tag1Status', m.u8());
      break;
    default:
      break;
  }
}

/** 0x7979 0x70 modular GPS: `u16 id | u16 length | data` modules; acknowledged in the 0x7878 form. */
export function decodeModular(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  while (r.remaining > 6) {
    const id = r.u16();
    const length = r.u16();
    const m = new ByteReader(PROTOCOL, r.buf, r.offset, r.offset + length);
    r.skip(length);
    decodeModularModule(id, m, pos);
  }
  const serial = r.u16();
  return outcome(pos, ack({ ...env, serial }));
}

/** 0x7979 0x41 multimedia (WD-209): photo chunks; trackgate keeps no media, the chunk is acknowledged. */
export function decodeMultimedia(r: ByteReader, env: Gt06Env): Outcome {
  r.skip(8); // serial number
  r.u32(); // timestamp
  r.skip(4 + 4 + 2 + 1 + 1 + 2); // gps
  r.skip(2 + 2 + 2 + 2); // cell
  return outcome(undefined, ack(env, true));
}

/** 0x7979 0x9B external device data: device type, then text (trimmed) or hex. No reply. */
export function decodeSerial(r: ByteReader): Outcome {
  const pos = new Pos();
  r.u8(); // external device type code
  const data = r.bytes(r.remaining - 6, 'data');
  pos.set('result', isPrintable(data) ? data.toString('ascii').trim() : hex(data));
  return outcome(pos);
}

/** 0x7979 0xF2 peripheral (VL842) and 0xF1 device status (Jimi IoT 4G): epoch time, status items. */
export function decodeStatusItems(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  pos.fixTime = new Date(r.u32() * 1000);
  while (r.remaining > 6) {
    const id = r.u16();
    if (env.type === C.MSG_PERIPHERAL) decodePeripheralItem(id, r, pos);
    else decodeDeviceStatusItem(id, r, pos);
  }
  return outcome(pos, ack(env));
}

function decodePeripheralItem(id: number, r: ByteReader, pos: Pos): void {
  if (id === 0x000a) {
    // Bluetooth tag
    const length = r.u16();
    r.u8(); // mac address type
    pos.set('mac', hex(r.bytes(6)));
    const event = r.u8();
    pos.set('event', event);
    const eventData = r.u8();
    if (event > 0) pos.set('eventData', eventData);
    pos.set('dataType', r.u8());
    pos.set('dataDetails', hex(r.bytes(length - 10, 'details')));
  } else if (id === 0x000c) {
    // external battery
    r.u8(); // length
    pos.set('externalBatteryLevel', r.u8());
    if (r.u8() > 0) pos.set('externalBatteryCharge', true);
    pos.set('externalBatteryCycles', r.u16());
    r.skip(6);
  } else {
    const length = r.u8();
    r.skip(length === 0 ? r.u8() : length);
  }
}

function decodeDeviceStatusItem(id: number, r: ByteReader, pos: Pos): void {
  const length = r.u8();
  const m = new ByteReader(PROTOCOL, r.buf, r.offset, r.offset + length);
  r.skip(length);
  switch (id) {
    case 0x0001: {
      const motion = m.u8();
      pos.set('motion', motion === 0x02 || motion === 0x04);
      break;
    }
    case 0x0002:
      pos.set('armed', m.u8() > 0);
      break;
    case 0x0004:
      pos.set('ignition', m.u8() > 0);
      break;
    case 0x0005:
      pos.set('power', m.u16() / 100);
      break;
    case 0x0007:
      pos.set('charge', m.u8() > 0);
      break;
    case 0x000a:
      pos.set('chargeVoltage', m.u16());
      break;
    case 0x000b:
      pos.set('batteryTemp', round2(m.u16() / 10));
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// 0x7878 information packets

/**
 * 0x15 command response: length, server flag u32, ASCII text (`<ICCID:...>` gives the ICCID), then
 * language and serial. Some devices write length 0 and a NUL-padded text (the captured `DYD=Success!`
 * answer): Traccar stores nothing of it; its text is still the command's answer.
 */
export function decodeString(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  const commandLength = r.u8();
  let answer: CommandResult | undefined;
  if (commandLength > 0) {
    const serverFlag = r.u32();
    const data = r.bytes(commandLength - 4, 'text').toString('ascii');
    if (data.startsWith('<ICCID:')) pos.set('iccid', data.substring(7, 27));
    else pos.set('result', data);
    answer = { text: data, serverFlag };
  } else if (r.remaining >= 4 + 6) {
    const serverFlag = r.u32();
    const padded = r.bytes(r.remaining - 6, 'text');
    const end = padded.indexOf(0);
    const text = padded
      .subarray(0, end < 0 ? padded.length : end)
      .toString('ascii')
      .trim();
    if (text) answer = { text, serverFlag };
  }
  return { ...outcome(pos, ack(env)), ...(answer && { commandResults: [answer] }) };
}

/** 0x94 on 0x7878: external power (V x 100). */
export function decodeInfoBasic(r: ByteReader): Outcome {
  const pos = new Pos();
  pos.set('power', r.i16() / 100);
  return outcome(pos);
}

/** 0xB2 Bluetooth punch clock (Jimi IoT 4G). */
export function decodeBluetoothClock(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  pos.fixTime = readDate(r, env);
  pos.set('rssi', r.i8());
  pos.set('tagMac', hex(r.bytes(6)));
  pos.set('tagUuid', hex(r.bytes(16)));
  pos.set('tagMajor', r.u16());
  pos.set('tagMinor', r.u16());
  pos.set('tagBattery', r.u16() / 100);
  pos.set('clock', (r.u8() >> 2) & 0x0f);
  return outcome(pos, ack(env));
}

/** 0x40 battery management system (WD-209). */
export function decodeBms(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  r.skip(8); // serial number
  pos.fixTime = new Date(r.u32() * 1000);
  pos.set('relativeCapacity', r.u8());
  pos.set('remainingCapacity', r.u16());
  pos.set('absoluteCapacity', r.u8());
  pos.set('fullCapacity', r.u16());
  pos.set('batteryHealth', r.u8());
  pos.set('batteryTemp', round2(r.u16() / 10 - 273.1));
  pos.set('current', r.u16());
  pos.set('battery', r.u16() / 1000);
  pos.set('cycleIndex', r.u16());
  for (let i = 1; i <= 14; i++) pos.set(`batteryCell${i}`, r.u16() / 1000);
  pos.set('currentChargeInterval', r.u16());
  pos.set('maxChargeInterval', r.u16());
  pos.set('barcode', r.bytes(16).toString('ascii').trim());
  pos.set('batteryVersion', r.u16());
  pos.set('manufacturer', r.bytes(16).toString('ascii').trim());
  pos.set('batteryStatus', r.u32());
  pos.set('controllerStatus', r.u32());
  pos.set('controllerFault', r.u32());
  return outcome(pos, ack(env));
}
