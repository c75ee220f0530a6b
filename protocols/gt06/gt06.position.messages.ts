/**
 * The position family: every packet that says where the tracker is, or raises an alarm with its
 * position (the GPS/LBS/status packets, the single-layout position packets, 0x95 alarms).
 */
import type { ByteReader } from '../shared/byte-reader.js';
import {
  ack,
  decodeGps,
  decodeLbs,
  decodeStatus,
  hex,
  outcome,
  Pos,
  readDate,
  round2,
  u24,
  type Gt06Env,
  type Outcome,
} from './gt06.blocks.js';
import * as C from './gt06.constants.js';
import { decodeAlarm, JC_ALARM_EVENTS } from './gt06.constants.js';

// ---------------------------------------------------------------------------------------------
// Type tests of the GPS/LBS/status family (Traccar `hasGps`, `hasLbs`, `hasStatus`)

const GPS_TYPES = new Set([
  C.MSG_GPS,
  C.MSG_GPS_LBS_1,
  C.MSG_GPS_LBS_2,
  C.MSG_GPS_LBS_DRIVER,
  C.MSG_GPS_LBS_3,
  C.MSG_GPS_LBS_4,
  C.MSG_GPS_LBS_5,
  C.MSG_GPS_LBS_6,
  C.MSG_GPS_LBS_STATUS_1,
  C.MSG_GPS_LBS_STATUS_2,
  C.MSG_GPS_LBS_STATUS_3,
  C.MSG_GPS_LBS_STATUS_4,
  C.MSG_GPS_LBS_STATUS_5,
  C.MSG_GPS_PHONE,
  C.MSG_GPS_LBS_EXTEND,
  C.MSG_GPS_LBS_7,
  C.MSG_GPS_LBS_RFID,
  C.MSG_FENCE_MULTI,
  C.MSG_ALARM_MODULE,
]);
const LBS_TYPES = new Set([
  C.MSG_LBS_STATUS,
  C.MSG_GPS_LBS_1,
  C.MSG_GPS_LBS_2,
  C.MSG_GPS_LBS_DRIVER,
  C.MSG_GPS_LBS_3,
  C.MSG_GPS_LBS_4,
  C.MSG_GPS_LBS_5,
  C.MSG_GPS_LBS_6,
  C.MSG_GPS_LBS_STATUS_1,
  C.MSG_GPS_LBS_STATUS_2,
  C.MSG_GPS_LBS_STATUS_3,
  C.MSG_GPS_LBS_STATUS_4,
  C.MSG_GPS_LBS_STATUS_5,
  C.MSG_GPS_LBS_7,
  C.MSG_GPS_LBS_RFID,
  C.MSG_FENCE_MULTI,
  C.MSG_ALARM_MODULE,
  C.MSG_LBS_ALARM,
  C.MSG_LBS_ADDRESS,
]);
const STATUS_TYPES = new Set([
  C.MSG_STATUS,
  C.MSG_STATUS_2,
  C.MSG_LBS_STATUS,
  C.MSG_GPS_LBS_STATUS_1,
  C.MSG_GPS_LBS_STATUS_2,
  C.MSG_GPS_LBS_STATUS_3,
  C.MSG_GPS_LBS_STATUS_4,
  C.MSG_GPS_LBS_STATUS_5,
  C.MSG_FENCE_MULTI,
  C.MSG_ALARM_MODULE,
  C.MSG_LBS_ALARM,
]);
/** types followed by a language byte after the status block */
const LANGUAGE_TYPES = new Set([
  C.MSG_STATUS_2,
  C.MSG_GPS_LBS_STATUS_5,
  C.MSG_GPS_LBS_STATUS_3,
  C.MSG_FENCE_MULTI,
  C.MSG_ALARM_MODULE,
]);

/** 0xA3 is a fence packet (GPS + LBS) except on SEEWORLD, where it is a status packet */
const hasGps = (env: Gt06Env): boolean =>
  env.type === C.MSG_FENCE_SINGLE ? env.variant !== 'SEEWORLD' : GPS_TYPES.has(env.type);
const hasLbs = (env: Gt06Env): boolean =>
  env.type === C.MSG_FENCE_SINGLE ? env.variant !== 'SEEWORLD' : LBS_TYPES.has(env.type);
const isNtGps = (env: Gt06Env): boolean =>
  env.models.nt && (env.type === C.MSG_GPS_LBS_2 || env.type === C.MSG_GPS_LBS_DRIVER);
const hasStatus = (env: Gt06Env): boolean =>
  env.type === C.MSG_FENCE_SINGLE ? env.variant === 'SEEWORLD' : STATUS_TYPES.has(env.type) || isNtGps(env);

export const isPositionFamily = (env: Gt06Env): boolean => hasGps(env) || hasLbs(env) || hasStatus(env);

// ---------------------------------------------------------------------------------------------
// The GPS/LBS/status family (0x10 0x11 0x12 0x16 0x19 0x22 0x25 0x26 0x27 0x2D 0x31 0x32 0x37 0xA0 ...)

/** Status block after the terminal information byte: battery, rssi, alarm/extension. */
function decodeStatusBlock(r: ByteReader, pos: Pos, env: Gt06Env): void {
  const { type, models: m } = env;
  if (type === C.MSG_GPS_LBS_STATUS_5) r.u8(); // network indicator
  decodeStatus(r, pos, env);
  if (env.variant === 'OBD6') {
    const signal = r.u16();
    pos.set('sat', ((signal >> 10) & 0x1f) + ((signal >> 5) & 0x1f));
    pos.set('rssi', signal & 0x1f);
    pos.addAlarm(decodeAlarm(r.u8(), m));
    r.u8(); // language
    pos.set('batteryLevel', r.u8());
    const mode = r.u8();
    pos.set('power', r.u16() / 100);
    if (r.remaining >= 3 + 6) {
      r.u8(); // reserved
      r.u16(); // working time
      if (mode === 4 && r.remaining >= 2 + 6) pos.set('temp1', r.i16() / 10);
    }
    return;
  }
  const ntGps = isNtGps(env);
  if (type === C.MSG_GPS_LBS_STATUS_5 || ntGps) pos.set('power', r.u16() / 100);
  if (type === C.MSG_STATUS && m.model === 'R11') {
    pos.set('power', r.u16() / 100);
  } else {
    const battery = r.u8(); // voltage level 0-6, or percent
    if (ntGps) pos.set('battery', battery / 10);
    else if (battery <= 6) pos.set('batteryLevel', Math.trunc((battery * 100) / 6));
    else if (battery <= 100) pos.set('batteryLevel', battery);
  }
  pos.set('rssi', r.u8());
  if (type === C.MSG_STATUS && m.lw) {
    pos.set('power', (r.u16() & 0x0fff) / 10);
    return;
  }
  let extension = r.u8(); // alarm byte
  if (type === C.MSG_GPS_LBS_STATUS_3 || type === C.MSG_FENCE_MULTI || type === C.MSG_ALARM_MODULE) {
    r.need(1, 'language');
    extension += (r.buf[r.offset] >> 4) << 8;
  }
  if (type === C.MSG_STATUS && m.seeworld) {
    pos.set('power', extension);
  } else if (env.variant !== 'VXT01') {
    const alarm = decodeAlarm(extension, m);
    pos.addAlarm(alarm);
    if (!alarm && extension > 0 && extension <= 0xff) pos.set('event', extension); // e.g. VL103 RFID events
  }
}

/** 0x12 layouts told apart by length (Traccar variants GT06E_CARD, BENWAY, VXT01, S5, WETRUST). */
function decodeGpsLbs1Variant(r: ByteReader, pos: Pos, env: Gt06Env): void {
  const { variant, models } = env;
  if (variant === 'GT06E_CARD') {
    pos.set('odometer', r.u32());
    const card = r.bytes(r.u8(), 'card').toString('ascii');
    r.u8(); // alarm
    r.u8(); // swiped
    pos.set('card', card.trim());
  } else if (variant === 'BENWAY') {
    const mask = r.u16();
    pos.set('ignition', (mask & 0x8000) !== 0);
    pos.set('in2', (mask & 0x4000) !== 0);
    if (mask & 0x1000) {
      const value = mask & 0x1ff;
      pos.set('temp1', mask & 0x0200 ? -value : value);
    } else {
      const value = mask & 0x3ff;
      pos.set('adc1', mask & 0x2000 ? value : value / 10);
    }
  } else if (variant === 'VXT01') {
    decodeStatus(r, pos, env);
    pos.set('power', r.u16() / 100);
    pos.set('rssi', r.u8());
    r.u8(); // alarm extension
  } else if (variant === 'S5') {
    decodeStatus(r, pos, env);
    pos.set('power', r.u16() / 100);
    pos.set('rssi', r.u8());
    pos.addAlarm(decodeAlarm(r.u8(), models));
    pos.set('oil', r.u16());
    const t = r.u8();
    pos.set('temp1', t & 0x80 ? -(t & 0x7f) : t);
    pos.set('odometer', r.u32() * 10);
  } else if (variant === 'WETRUST') {
    pos.set('odometer', r.u32());
    pos.set('card', r.bytes(r.u8(), 'card').toString('ascii'));
    if (r.u8() > 0) pos.addAlarm('general');
    pos.set('cardStatus', r.u8());
    pos.set('drivingTime', r.u16());
  }
}

/** Everything after the GPS/LBS/status blocks (Traccar: the tail of the `isSupported` branch). */
function decodeFamilyTail(r: ByteReader, pos: Pos, env: Gt06Env, languageRead: boolean): void {
  const { type, variant, models: m } = env;
  const ntGps = isNtGps(env);
  if (type === C.MSG_STATUS_2 || type === C.MSG_ALARM_MODULE) {
    while (r.remaining > 6) {
      const moduleType = r.u16();
      const moduleLength = r.u8();
      if (moduleType === 0x0018) pos.set('battery', r.u16() / 100);
      else if (moduleType === 0x0032) pos.set('startupStatus', r.u8());
      else if (moduleType === 0x006a) pos.set('batteryLevel', r.u8());
      else r.skip(moduleLength);
    }
  }
  if (type === C.MSG_GPS_LBS_STATUS_5) {
    pos.set('odometer', r.u32());
    pos.set('hours', r.u32() * 1000);
    r.skip(8); // terminal id
    pos.set('input', r.u16());
  }
  if (type === C.MSG_GPS_LBS_1) decodeGpsLbs1Variant(r, pos, env);
  if (type === C.MSG_GPS_LBS_2 && variant === 'SEEWORLD') {
    pos.set('ignition', r.u8() > 0);
    r.u8(); // reporting mode
    r.u8(); // supplementary transmission
    pos.set('odometer', r.u32());
    r.u32(); // travel time
    const t = r.u16();
    pos.set('temp1', (t & 0x8000 ? -(t & 0x7fff) : t) / 100);
    pos.set('humidity', r.u16() / 100);
  }
  if (type === C.MSG_GPS_LBS_STATUS_4 && variant === 'SL4X') pos.setAltitude(r.i16());
  if (
    (type === C.MSG_GPS_LBS_2 || type === C.MSG_GPS_LBS_3 || type === C.MSG_GPS_LBS_4 || type === C.MSG_GPS_LBS_5) &&
    r.remaining >= 3 + 6 &&
    !m.nt
  ) {
    pos.set('ignition', r.u8() > 0); // ACC
    pos.set('event', r.u8()); // data upload mode
    if (r.u8() > 0) pos.set('archive', true); // GPS real-time re-upload
    if (variant === 'SL4X') {
      if (r.remaining > 2 + 6) pos.set('odometer', r.u32());
      pos.setAltitude(r.i16());
    }
  }
  if (type === C.MSG_GPS_LBS_3) decodeModule(r, pos);
  if (type === C.MSG_GPS_LBS_RFID) {
    pos.set('driverUniqueId', hex(r.bytes(8, 'rfid')));
    r.u8(); // validity
  }
  if (ntGps) {
    pos.set('odometer', u24(r));
    pos.set('hours', u24(r) * 60_000);
    if (type === C.MSG_GPS_LBS_DRIVER) {
      const driverLength = r.u8();
      if (driverLength > 0) {
        r.u8(); // driver identifier type
        pos.set('driverUniqueId', hex(r.bytes(driverLength - 1, 'driver')));
      }
    }
  }
  // VL103 status packets may end with language + 8-byte RFID card (captured VL103 frames)
  if (hasStatus(env) && !languageRead && r.remaining === 1 + 8 + 6) {
    r.u8(); // language
    const card = r.bytes(8, 'rfid');
    if (card.some((b) => b !== 0)) pos.set('driverUniqueId', hex(card));
  }
  if (r.remaining === 3 + 6 || r.remaining === 3 + 4 + 6) {
    pos.set('ignition', r.u8() > 0);
    r.u8(); // upload mode
    if (r.u8() > 0) pos.set('archive', true);
  }
  if (r.remaining === 4 + 6) pos.set('odometer', r.u32());
  if (type === C.MSG_GPS_LBS_STATUS_3 || type === C.MSG_FENCE_MULTI) pos.set('geofence', r.u8());
}

/** One extension module `u16 id | u8 length | data` (0x37 and 0x38 trailers). */
function decodeModule(r: ByteReader, pos: Pos): void {
  const module = r.u16();
  const length = r.u8();
  if (module === 0x0027) pos.set('power', r.u16() / 100);
  else if (module === 0x002e) pos.set('odometer', r.u32());
  else if (module === 0x003b) {
    const accuracy = r.u16() / 100;
    if (pos.location) pos.location.accuracyM = accuracy;
  } else r.skip(length);
}

/** GPS + LBS + status family, GT06 protocol manual 5.2/5.3/5.4 and Traccar's per-type additions. */
export function decodePositionFamily(r: ByteReader, env: Gt06Env): Outcome {
  const { type, variant, models: m } = env;
  if (type === C.MSG_LBS_STATUS && variant === 'SPACE10X') return outcome(undefined); // multi-LBS message
  if (env.dataLength <= 0) return outcome(undefined, ack(env)); // empty body, nothing to report
  const pos = new Pos();
  pos.set('type', type);
  const ntGps = isNtGps(env);
  if (type === C.MSG_GPS_LBS_1 && m.model === 'QH302R') r.skip(8); // imei
  if (ntGps) {
    r.u8(); // location source type
    r.skip(8); // imei
    readDate(r, env); // device time
  }
  if (hasGps(env)) decodeGps(r, pos, env);
  if (hasLbs(env) && r.remaining > 6) {
    const hasLength =
      hasStatus(env) &&
      type !== C.MSG_LBS_STATUS &&
      type !== C.MSG_LBS_ALARM &&
      type !== C.MSG_ALARM_MODULE &&
      (type !== C.MSG_GPS_LBS_STATUS_1 || variant !== 'VXT01') &&
      type !== C.MSG_GPS_LBS_STATUS_5;
    decodeLbs(r, pos, env, hasLength);
  }
  if (hasStatus(env)) decodeStatusBlock(r, pos, env);
  const languageRead = LANGUAGE_TYPES.has(type) || ntGps;
  if (languageRead) r.u8(); // language
  decodeFamilyTail(r, pos, env, languageRead);
  return outcome(pos, ack(env));
}

/** 0x13 with 22 bytes after the type: battery percent and temperature (Traccar `MSG_STATUS`). */
export function decodeStatusTemperature(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  r.u8(); // information content
  r.u16(); // satellites
  r.u8(); // alarm
  r.u8(); // language
  pos.set('batteryLevel', r.u8());
  r.u8(); // working mode
  r.u16(); // working voltage
  r.u8(); // reserved
  r.u16(); // working times
  r.u16(); // working time
  const value = r.u16();
  const t = round2((value & 0x7fff) / 10);
  pos.set('temp1', value & 0x8000 ? t : -t);
  return outcome(pos, ack(env));
}

/** 0x24 SR411 mini (length 0x2E): GPS, LBS, ACC, power, battery. */
export function decodeSr411(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  decodeGps(r, pos, env);
  decodeLbs(r, pos, env, false);
  pos.set('ignition', r.u8() > 0);
  pos.set('power', r.u16() / 100);
  pos.set('battery', r.u16() / 100);
  return outcome(pos);
}

/** 0x61 iButton: IMEI, GPS, LBS, 48-bit driver id. */
export function decodeIButton(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  r.skip(8); // imei
  decodeGps(r, pos, env);
  decodeLbs(r, pos, env, false);
  const id = r.u32() * 0x10000 + r.u16();
  pos.set('driverUniqueId', String(id));
  return outcome(pos, ack(env));
}

/**
 * 0x36 on VL103 (length 0x35): GPS, LBS (u32 cell id), ACC, upload mode, re-upload, 4 bytes,
 * external power u16 (V x 100), battery u8 (V x 10), 3 bytes, RFID card (8 bytes). Layout read from
 * captured VL103 frames (Traccar Gt06ProtocolDecoderTest); unnamed bytes are skipped.
 */
export function decodeLocationRfid(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  pos.set('type', env.type);
  decodeGps(r, pos, env);
  decodeLbs(r, pos, env, false);
  if (r.remaining >= 21 + 6) {
    pos.set('ignition', r.u8() > 0);
    r.u8(); // upload mode
    if (r.u8() > 0) pos.set('archive', true);
    r.skip(4);
    pos.set('power', r.u16() / 100);
    pos.set('battery', r.u8() / 10);
    r.skip(3);
    const card = r.bytes(8, 'rfid');
    if (card.some((b) => b !== 0)) pos.set('driverUniqueId', hex(card));
  }
  return outcome(pos, ack(env));
}

/** 0x7979 0x38: GPS, upload mode, re-upload, cell-type LBS, then extension modules (as 0x37). */
export function decodeGpsLbs8(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  decodeGps(r, pos, env);
  r.u8(); // data upload mode
  r.u8(); // re-upload
  decodeLbs(r, pos, env, false);
  while (r.remaining >= 3 + 6 && r.remaining - 6 >= 3 + r.buf[r.offset + 2]) decodeModule(r, pos);
  return outcome(pos);
}

/** 0x34 X1: alarm word, GPS, terminal info, odometer, cell, driver id, battery, power, I/O, ADCs. */
export function decodeX1Gps(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  r.u32(); // data and alarm
  decodeGps(r, pos, env);
  r.u16(); // terminal info
  pos.set('odometer', r.u32());
  pos.cells.push({ mobileCountryCode: r.u16(), mobileNetworkCode: r.u8(), locationAreaCode: r.u16(), cellId: r.u32() });
  const driverId = r.u32();
  if (driverId > 0) pos.set('driverUniqueId', String(driverId));
  pos.set('battery', r.u16() / 100);
  pos.set('power', r.u16() / 100);
  const portInfo = r.u32();
  pos.set('input', r.u8());
  pos.set('output', r.u8());
  const adcCount = (portInfo >>> 20) & 0x0f;
  for (let i = 1; i <= adcCount; i++) pos.set(`adc${i}`, r.u16() / 100);
  return outcome(pos);
}

// ---------------------------------------------------------------------------------------------
// 0x95 alarm

/** 0x95 alarm (JC100/JC400): time or GPS, JC400 power, event, event data, event file names. */
export function decodeJcAlarm(r: ByteReader, env: Gt06Env): Outcome {
  const pos = new Pos();
  const jc400 = env.variant === 'JC400';
  const extendedAlarm = env.dataLength > 7;
  if (extendedAlarm) {
    if (jc400) {
      r.u16(); // marker
      r.u8(); // version
    }
    decodeGps(r, pos, env, { hasSatellites: jc400, hasSpeed: jc400, longSpeed: jc400, swapFlags: jc400 });
  } else {
    pos.fixTime = readDate(r, env);
  }
  if (jc400) pos.set('power', r.u16() / 10);
  const event = r.u8();
  pos.set('event', event);
  pos.set('eventData', r.u16());
  pos.addAlarm(event === 0x01 ? (extendedAlarm ? 'sos' : 'general') : JC_ALARM_EVENTS[event]);
  const filesLength = r.remaining - 6;
  if (filesLength > 0) pos.set('eventFiles', r.bytes(filesLength).toString('ascii'));
  return outcome(pos, ack(env));
}
