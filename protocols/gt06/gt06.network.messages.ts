/**
 * The network family: cell and Wi-Fi lists a tracker reports instead of (or beside) a GPS fix
 * (0x17 0x69 0xF3, 0x18 0x24 0x28 0x2C 0x2E 0x33 0x34 0xA1 0xA2 0xA9).
 */
import type { ByteReader } from '../shared/byte-reader.js';
import { ack, outcome, Pos, readBcdDate, readDate, u24, u64n, type Gt06Env, type Outcome } from './gt06.blocks.js';
import * as C from './gt06.constants.js';
import { decodeAlarm } from './gt06.constants.js';

/** 0x17/0x69/0xF3 Wi-Fi: BCD time, access points, cells; 0x17/0x69 echoed `78 78 00 type time 0D 0A`. */
export function decodeWifi(r: ByteReader, env: Gt06Env): Outcome {
  const { type } = env;
  const pos = new Pos();
  const time = r.bytes(6, 'time');
  pos.fixTime = readBcdDate(time);
  const wifi4 = type === C.MSG_WIFI_4;
  const wifiCount = wifi4 ? r.u8() : env.frame[2]; // the 0x7878 length byte carries the count
  for (let i = 0; i < wifiCount; i++) {
    if (wifi4) r.skip(2);
    const mac = [...r.bytes(6, 'mac')].map((b) => b.toString(16).padStart(2, '0')).join(':');
    pos.wifi.push(wifi4 ? { macAddress: mac } : { macAddress: mac, signalStrength: r.u8() });
  }
  if (wifi4) return outcome(pos);
  const cellCount = r.u8();
  const mcc = r.u16();
  const mnc = r.u8();
  for (let i = 0; i < cellCount; i++) {
    pos.cells.push({
      mobileCountryCode: mcc,
      mobileNetworkCode: mnc,
      locationAreaCode: r.u16(),
      cellId: r.u16(),
      signalStrength: r.u8(),
    });
  }
  const echo = Buffer.concat([Buffer.from([0x78, 0x78, 0x00, type]), time, Buffer.from([0x0d, 0x0a])]);
  return outcome(pos, [echo]);
}

/** Multi-cell LBS (and LBS + Wi-Fi) packets: time, MCC/MNC, 6-7 cells, timing advance, Wi-Fi list. */
export function decodeLbsMultiple(r: ByteReader, env: Gt06Env): Outcome {
  const { type, variant } = env;
  const pos = new Pos();
  pos.fixTime = readDate(r, env);
  const taFirst = variant === 'WANWAY_S20' || variant === 'SL4X';
  if (taFirst) r.u8(); // timing advance
  const mcc = r.u16();
  const mnc = mcc & 0x8000 || variant === 'SL4X' ? r.u16() : r.u8();
  const cell4G = type === C.MSG_WIFI_ALARM && r.u8() > 0;
  const cellCount = variant === 'WANWAY_S20' || type === C.MSG_WIFI_ALARM ? r.u8() : type === C.MSG_WIFI_5 ? 6 : 7;
  for (let i = 0; i < cellCount; i++) {
    let lac: number;
    let cid: number;
    if (type === C.MSG_LBS_2 || type === C.MSG_WIFI_3 || cell4G) {
      lac = r.i32();
      cid = u64n(r);
    } else if (type === C.MSG_WIFI_5 || type === C.MSG_LBS_3) {
      lac = r.u16();
      cid = r.u32();
    } else {
      lac = r.u16();
      cid = u24(r);
    }
    const rssi = -r.u8();
    if (lac > 0)
      pos.cells.push({
        mobileCountryCode: mcc & 0x7fff,
        mobileNetworkCode: mnc,
        locationAreaCode: lac,
        cellId: cid,
        signalStrength: rssi,
      });
  }
  if (!taFirst) r.u8(); // timing advance
  const cellsOnly = [C.MSG_LBS_MULTIPLE_1, C.MSG_LBS_MULTIPLE_2, C.MSG_LBS_MULTIPLE_3, C.MSG_LBS_2, C.MSG_LBS_3];
  if (!cellsOnly.includes(type)) {
    const wifiCount = r.u8();
    for (let i = 0; i < wifiCount; i++) {
      const mac = [...r.bytes(6, 'mac')].map((b) => b.toString(16).padStart(2, '0')).join(':');
      pos.wifi.push({ macAddress: mac, signalStrength: r.u8() });
    }
  }
  if (type === C.MSG_WIFI_ALARM) {
    const alarm = r.u8();
    const language = r.u8();
    pos.addAlarm(decodeAlarm(((language >> 4) << 8) | alarm, env.models));
  }
  return outcome(pos, ack(env));
}
