/**
 * What each Eelink packet type holds (EelinkProtocolDecoder): the old GPS, alarm, state and SMS
 * packets (0x02, 0x04-0x06), the new location, warning and report packets (0x12-0x19), the status
 * of a heartbeat or short OBD packet, OBD values (0x07) and command results (0x80).
 */
import type { Alarm } from '../../core/model/alarm.js';
import type { ByteReader } from '../shared/byte-reader.js';
import { NetworkInfo } from '../shared/network.js';
import { type CommandResult, type DecodedMessage, ProtocolError } from '../types.js';
import * as C from './eelink.constants.js';

export interface PacketOutcome {
  message?: DecodedMessage;
  commandResult?: CommandResult;
}

/** degrees x 1,800,000 */
const DEGREES = 1_800_000;

/** Degrees beyond ±90 / ±180 make the packet unreadable (Traccar's Position refuses them). */
function inRange(latitudeDeg: number, longitudeDeg: number): void {
  if (!(Math.abs(latitudeDeg) <= 90 && Math.abs(longitudeDeg) <= 180))
    throw new ProtocolError(C.PROTOCOL, `coordinates ${latitudeDeg}, ${longitudeDeg} are out of range`);
}

const blank = (index?: number): DecodedMessage => ({
  alarms: [],
  attributes: index === undefined ? {} : { index },
});
const bit = (value: number, n: number): boolean => (value & (1 << n)) !== 0;

/** Alarm codes of the 0x04 and 0x14 packets */
const ALARMS: Readonly<Record<number, Alarm>> = {
  0x01: 'powerOff',
  0x02: 'sos',
  0x03: 'lowBattery',
  0x04: 'vibration',
  0x08: 'gpsAntennaCut',
  0x09: 'gpsAntennaCut',
  0x25: 'removing',
  0x81: 'lowspeed',
  0x82: 'overspeed',
  0x83: 'geofenceEnter',
  0x84: 'geofenceExit',
  0x85: 'accident',
  0x86: 'fallDown',
};

function addAlarm(m: DecodedMessage, code: number): void {
  if (Object.hasOwn(ALARMS, code)) m.alarms.push(ALARMS[code]);
}

/** The old protocol's status word: each flag only when its "known" bit is set. */
function oldStatus(m: DecodedMessage, status: number): void {
  const a = m.attributes;
  if (bit(status, 1)) a.ignition = bit(status, 2);
  if (bit(status, 3)) a.armed = bit(status, 4);
  if (bit(status, 5)) a.blocked = !bit(status, 6);
  if (bit(status, 7)) a.charge = bit(status, 8);
  a.status = status;
}

/** 0x03 heartbeat, or a 0x07 packet of only a status word: the status, at the last known location */
export function statusOnly(r: ByteReader): PacketOutcome {
  const m = blank();
  oldStatus(m, r.u16());
  return { message: m };
}

/** 0x02 GPS, 0x04 alarm, 0x05 state, 0x06 SMS: time, fix, cell, then what the type adds. */
export function decodeOld(r: ByteReader, type: number, index: number): PacketOutcome {
  const m = blank(index);
  m.fixTime = new Date(r.u32() * 1000);
  const latitudeDeg = r.i32() / DEGREES;
  const longitudeDeg = r.i32() / DEGREES;
  inRange(latitudeDeg, longitudeDeg);
  const speedKmh = r.u8();
  const courseDeg = r.u16();
  const network = new NetworkInfo();
  network.addCell(r.u16(), r.u16(), r.u16(), r.bytes(3).readUIntBE(0, 3));
  network.applyTo(m.attributes);
  m.location = { latitudeDeg, longitudeDeg, valid: (r.u8() & 0x01) !== 0, speedKmh, courseDeg };
  if (type === C.MSG_GPS) {
    if (r.remaining >= 2) oldStatus(m, r.u16());
    if (r.remaining >= 8) {
      m.attributes.battery = r.u16() / 1000;
      m.attributes.rssi = r.u16();
      m.attributes.adc1 = r.u16();
      m.attributes.adc2 = r.u16();
    }
  } else if (type === C.MSG_ALARM) addAlarm(m, r.u8());
  else if (type === C.MSG_STATE) {
    const event = r.u8();
    m.attributes.event = event;
    if (event >= 0x01 && event <= 0x03) {
      r.u32(); // device time
      if (r.remaining >= 2) oldStatus(m, r.u16());
    }
  }
  return { message: m };
}

const mac = (b: Buffer): string => [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');

/** The new packets' optional blocks, by flag bit: 1-3 cells, 4-6 Wi-Fi, 7 LTE neighbours. */
function readNetwork(r: ByteReader, flags: number): NetworkInfo {
  const network = new NetworkInfo();
  let mcc = 0;
  let mnc = 0;
  if (bit(flags, 1)) {
    mcc = r.u16();
    mnc = r.u16();
    network.addCell(mcc, mnc, r.u16(), r.u32(), r.u8());
  }
  for (const n of [2, 3]) if (bit(flags, n)) network.addCell(mcc, mnc, r.u16(), r.u32(), r.u8());
  for (const n of [4, 5, 6]) if (bit(flags, n)) network.addWifi(mac(r.bytes(6)), r.u8());
  if (bit(flags, 7)) {
    r.u8(); // radio access technology
    const count = r.u8();
    let lac = 0;
    if (count > 0) {
      mcc = r.u16();
      mnc = r.u16();
      lac = r.u16();
      r.skip(2 + 4 + 2); // tac, cid, timing advance
    }
    for (let i = 0; i < count; i++) {
      const cid = r.u16(); // physical cell id
      r.u16(); // e-arfcn
      network.addCell(mcc, mnc, lac, cid, r.u8());
    }
  }
  return network;
}

/** The new packets' status word (V2.x): fix, then flags each under its "known" bit. */
function newStatus(m: DecodedMessage, status: number): void {
  const a = m.attributes;
  if (m.location) m.location.valid = bit(status, 0);
  if (bit(status, 1)) a.ignition = bit(status, 2);
  if (bit(status, 3)) {
    a.armed = bit(status, 4);
    a.motion = bit(status, 9);
  }
  if (bit(status, 5)) a.blocked = bit(status, 6);
  if (bit(status, 7)) a.charge = bit(status, 8);
  a.gps = bit(status, 10);
  a.status = status;
}

/** 0x12 location: the sensor values that follow the status, each block only when its bytes are there */
function normalExtras(r: ByteReader, a: DecodedMessage['attributes']): void {
  if (r.remaining >= 2) a.battery = r.u16() / 1000;
  if (r.remaining >= 4) {
    a.adc0 = r.u16();
    a.adc1 = r.u16();
  }
  if (r.remaining >= 4) a.odometer = r.u32();
  if (r.remaining >= 4) r.skip(4); // gsm and gps counters
  if (r.remaining >= 4) {
    a.steps = r.u16();
    r.u16(); // walking time
  }
  if (r.remaining >= 12) {
    a.temp1 = r.i16() / 256;
    a.humidity = r.u16() / 10;
    a.illuminance = r.u32() / 256;
    a.co2 = r.u32();
  }
  if (r.remaining >= 2) a.temp2 = r.i16() / 16;
  if (r.remaining >= 2) {
    const count = r.u8();
    r.u8(); // id
    for (let i = 1; i <= count; i++) {
      a[`tag${i}Id`] = r.bytes(6).toString('hex');
      r.skip(4); // signal level, reserved, model, version
      a[`tag${i}Battery`] = r.u16() / 1000;
      a[`tag${i}Temp`] = r.i16() / 256;
      a[`tag${i}Data`] = r.u16();
    }
  }
}

/** 0x12-0x19: time, flags, the fix (flag bit 0), the network blocks, then what the type adds. */
export function decodeNew(r: ByteReader, type: number, index: number): PacketOutcome {
  const m = blank(index);
  const time = new Date(r.u32() * 1000);
  const flags = r.u8();
  if (bit(flags, 0)) {
    m.fixTime = time;
    const latitudeDeg = r.i32() / DEGREES;
    const longitudeDeg = r.i32() / DEGREES;
    inRange(latitudeDeg, longitudeDeg);
    const altitudeM = r.i16();
    const speedKmh = r.u16();
    const courseDeg = r.u16();
    m.location = { latitudeDeg, longitudeDeg, valid: true, altitudeM, speedKmh, courseDeg };
    m.attributes.sat = r.u8();
  }
  readNetwork(r, flags).applyTo(m.attributes);
  if (type === C.MSG_WARNING) addAlarm(m, r.u8());
  else if (type === C.MSG_REPORT) r.u8(); // report type
  if (type === C.MSG_NORMAL || type === C.MSG_WARNING || type === C.MSG_REPORT) newStatus(m, r.u16());
  if (type === C.MSG_NORMAL) normalExtras(r, m.attributes);
  return { message: m };
}

/** 0x07 OBD: time, then PID (u8) and value (i32) pairs; fuel consumption, odometer (km) and fuel level are kept. */
export function decodeObd(r: ByteReader): PacketOutcome {
  const m = blank();
  r.u32(); // time
  while (r.remaining > 0) {
    const pid = r.u8();
    const value = r.i32();
    if (pid === 0x89) m.attributes.fuelConsumption = value;
    else if (pid === 0x8a) m.attributes.odometer = value * 1000;
    else if (pid === 0x8b) m.attributes.fuel = Math.trunc(value / 10);
  }
  return { message: m };
}

const RESULT_POSITION =
  /^Lat:([NS])(\d+\.\d+).*Lon:([EW])(\d+\.\d+).*Course:(\d+\.\d+).*Speed:(\d+\.\d+).*Date ?Time:(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/s;

/**
 * 0x80 command result: kind, u32 server id, the device's text. A `WHERE#` answer (`Lat:N…,Lon:E…,
 * Course:…,Speed:…,DateTime:…`) is also a position; any other text is kept as `result`.
 */
export function decodeResult(r: ByteReader, index: number): PacketOutcome {
  const m = blank(index);
  r.u8(); // kind
  r.u32(); // server id
  const text = r.bytes(r.remaining).toString('utf8');
  const g = RESULT_POSITION.exec(text);
  if (g) {
    const sign = (h: string): number => (h === 'S' || h === 'W' ? -1 : 1);
    m.fixTime = new Date(Date.UTC(+g[7], +g[8] - 1, +g[9], +g[10], +g[11], +g[12]));
    m.location = {
      latitudeDeg: sign(g[1]) * Number(g[2]),
      longitudeDeg: sign(g[3]) * Number(g[4]),
      valid: true,
      courseDeg: Number(g[5]),
      speedKmh: Number(g[6]),
    };
    inRange(m.location.latitudeDeg, m.location.longitudeDeg);
  } else m.attributes.result = text;
  return { message: m, commandResult: { text } };
}
