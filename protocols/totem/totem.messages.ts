import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue, DecodedLocation, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { NetworkInfo } from '../shared/network.js';
import { knotsToKmh } from '../shared/units.js';
import {
  NEW_ALARMS,
  NEW_STATUS_ALARMS,
  OLD_ALARMS,
  PATTERN_E2,
  PATTERN_E5,
  PATTERN_FIXED,
  PATTERN_NEW,
  PATTERN_PIPES,
  PATTERN_RMC,
  PROTOCOL,
} from './totem.constants.js';

/** A decoded frame: the device it names and its report; no report when the reference returns none. */
export interface Decoded {
  imei: string;
  message?: DecodedMessage;
}

type Groups = RegExpExecArray;

const int = (s: string | undefined): number => (s ? parseInt(s, 10) : 0);
const num = (s: string | undefined): number => (s ? Number(s) : 0);
const bit = (value: number, n: number): boolean => Math.floor(value / 2 ** n) % 2 === 1;
const Y2K = 2000;

/** The io field, bits as `0`/`1` digits; other digits make the frame unreadable, as for the reference. */
function bits(field: string): number {
  if (!/^[01]+$/.test(field)) throw new ProtocolError(PROTOCOL, `io field ${field} is not binary`);
  return parseInt(field, 2);
}

/** `ddmm.mmmm`; S and W are negative. Out of range, the frame is refused as the reference refuses it. */
function coordinate(deg: string, min: string, hemisphere: string): number {
  const value = int(deg) + Number(min) / 60;
  return hemisphere === 'S' || hemisphere === 'W' ? -value : value;
}

function located(location: DecodedLocation): DecodedLocation {
  if (Math.abs(location.latitudeDeg) > 90 || Math.abs(location.longitudeDeg) > 180)
    throw new ProtocolError(PROTOCOL, `coordinates out of range: ${location.latitudeDeg}, ${location.longitudeDeg}`);
  return location;
}

function utc(yy: number, mo: number, dd: number, hh: number, mi: number, ss: number): Date {
  return new Date(Date.UTC(Y2K + yy, mo - 1, dd, hh, mi, ss));
}

/** A text attribute as the reference keeps it: only when not empty. */
function setText(a: Record<string, AttributeValue>, key: string, value: string | undefined): void {
  if (value) a[key] = value;
}

function addAlarm(alarms: Alarm[], alarm: Alarm | undefined): void {
  if (alarm && !alarms.includes(alarm)) alarms.push(alarm);
}

/** The old format's two-character alarm code (hex; `AA` is a plain report). */
function oldAlarm(code: string): Alarm | undefined {
  return /^[0-9a-fA-F]{2}$/.test(code) ? OLD_ALARMS[parseInt(code, 16)] : undefined;
}

/** Old format with an RMC sentence (AT07/AT09 `…|AA$GPRMC,…|pdop|hdop|vdop|io|…`). */
export function decodeRmc(text: string): Decoded | undefined {
  const g = PATTERN_RMC.exec(text);
  if (!g) return undefined;
  const [hh, mi, ss, dd, mo, yy] = [3, 4, 5, 15, 16, 17].map((i) => int(g[i]));
  if (yy === 0) return { imei: g[1] }; // the reference drops a report without a date
  const io = bits(g[21]);
  const alarms: Alarm[] = [];
  addAlarm(alarms, oldAlarm(g[2]));
  if (bit(io, 0)) addAlarm(alarms, 'sos');
  const a: Record<string, AttributeValue> = { pdop: num(g[18]), hdop: num(g[19]), vdop: num(g[20]), status: io };
  a.in3 = bit(io, 4);
  a.in4 = bit(io, 5);
  a.in1 = bit(io, 6);
  a.in2 = bit(io, 7);
  a.out1 = bit(io, 8);
  a.out2 = bit(io, 9);
  a.battery = num(g[22]) / 100;
  oldTail(g, 23, a);
  const location = located({
    latitudeDeg: coordinate(g[7], g[8], g[9]),
    longitudeDeg: coordinate(g[10], g[11], g[12]),
    valid: g[6] === 'A',
    speedKmh: knotsToKmh(num(g[13])),
    courseDeg: num(g[14]),
  });
  return { imei: g[1], message: { fixTime: utc(yy, mo, dd, hh, mi, ss), location, alarms, attributes: a } };
}

/** power, adc, lac, cid, temperature, odometer from group `at` on (both old `|` layouts). */
function oldTail(g: Groups, at: number, a: Record<string, AttributeValue>): void {
  a.power = num(g[at]);
  setText(a, 'adc1', g[at + 1]);
  const lac = parseInt(g[at + 2], 16);
  const cid = parseInt(g[at + 3], 16);
  if (lac !== 0 && cid !== 0) {
    const network = new NetworkInfo();
    network.addCell(undefined, undefined, lac, cid);
    network.applyTo(a);
  }
  setText(a, 'temp1', g[at + 4]);
  a.odometer = num(g[at + 5]) * 1000;
}

/** Old format, `|`-separated (`…|AA180613080657|A|2237.1901|N|…`). */
export function decodePipes(text: string): Decoded | undefined {
  const g = PATTERN_PIPES.exec(text);
  if (!g) return undefined;
  const [dd, mo, yy, hh, mi, ss] = [3, 4, 5, 6, 7, 8].map((i) => int(g[i]));
  if (yy === 0) return { imei: g[1] };
  const io = bits(g[19]);
  const alarms: Alarm[] = [];
  addAlarm(alarms, oldAlarm(g[2]));
  const a: Record<string, AttributeValue> = { hdop: num(g[18]), status: io };
  a.antenna = bit(io, 0);
  a.charge = bit(io, 1);
  for (let i = 1; i <= 6; i++) a[`in${i}`] = bit(io, 1 + i);
  for (let i = 1; i <= 4; i++) a[`out${i}`] = bit(io, 7 + i);
  a.battery = num(g[20]) / 10;
  oldTail(g, 21, a);
  const location = located({
    latitudeDeg: coordinate(g[10], g[11], g[12]),
    longitudeDeg: coordinate(g[13], g[14], g[15]),
    valid: g[9] === 'A',
    speedKmh: knotsToKmh(num(g[16])),
    courseDeg: num(g[17]),
  });
  return { imei: g[1], message: { fixTime: utc(yy, mo, dd, hh, mi, ss), location, alarms, attributes: a } };
}

/** Old format, fixed-width (`$$72<imei>|39130909111652…`). */
export function decodeFixed(text: string): Decoded | undefined {
  const g = PATTERN_FIXED.exec(text);
  if (!g) return undefined;
  const [dd, mo, yy, hh, mi, ss] = [3, 4, 5, 6, 7, 8].map((i) => int(g[i]));
  const alarms: Alarm[] = [];
  addAlarm(alarms, oldAlarm(g[2]));
  const a: Record<string, AttributeValue> = { io1: g[9], battery: num(g[10]) / 10, power: num(g[11]) };
  setText(a, 'adc1', g[12]);
  setText(a, 'adc2', g[13]);
  setText(a, 'temp1', g[14]);
  setText(a, 'temp2', g[15]);
  const network = new NetworkInfo();
  network.addCell(undefined, undefined, parseInt(g[16], 16), parseInt(g[17], 16));
  network.applyTo(a);
  const satellites = int(g[19]);
  a.sat = satellites;
  a.pdop = num(g[22]);
  a.odometer = int(g[23]) * 1000;
  const location = located({
    latitudeDeg: coordinate(g[24], g[25], g[26]),
    longitudeDeg: coordinate(g[27], g[28], g[29]),
    valid: g[18] === 'A',
    speedKmh: knotsToKmh(num(g[21])),
    courseDeg: num(g[20]),
    satellites,
  });
  return { imei: g[1], message: { fixTime: utc(yy, mo, dd, hh, mi, ss), location, alarms, attributes: a } };
}

/** New-format status word: alarms, ignition, charge, outputs. */
function applyStatus(status: number, alarms: Alarm[], a: Record<string, AttributeValue>): void {
  for (const [n, alarm] of NEW_STATUS_ALARMS) if (bit(status, 32 - n)) addAlarm(alarms, alarm);
  a.ignition = bit(status, 30);
  a.charge = bit(status, 28);
  a.out1 = bit(status, 23);
  a.out2 = bit(status, 22);
  a.out3 = bit(status, 21);
  a.status = status;
}

/** New-format position (AA, AB and the alarm types `type`). */
export function decodeNew(text: string, type: number): Decoded | undefined {
  const g = PATTERN_NEW.exec(text);
  if (!g) return undefined;
  const status = parseInt(g[2], 16);
  const alarms: Alarm[] = [];
  addAlarm(alarms, NEW_ALARMS[type]);
  const a: Record<string, AttributeValue> = {};
  applyStatus(status, alarms, a);
  const [yy, mo, dd, hh, mi, ss] = [3, 4, 5, 6, 7, 8].map((i) => int(g[i]));
  if (g[9] && g[10]) {
    a.battery = num(g[9]) / 10;
    a.power = num(g[10]);
  }
  if (g[11]) a.battery = num(g[11]) / 100;
  for (let i = 1; i <= 4; i++) setText(a, `adc${i}`, g[11 + i]);
  setText(a, 'temp1', g[16]);
  setText(a, 'temp2', g[17]);
  // the validity bit moves when the second temperature is there
  const valid = bit(status, g[17] ? 12 : 14);
  const network = new NetworkInfo();
  const satellites = int(g[22]);
  const [mnc, mcc] = g[20] && g[21] ? [int(g[20]), int(g[21])] : [undefined, undefined];
  network.addCell(mcc, mnc, parseInt(g[18], 16), parseInt(g[19], 16), int(g[23]));
  network.applyTo(a);
  a.sat = satellites;
  a.hdop = num(g[26]);
  a.odometer = int(g[27]) * 1000;
  const location = located({
    latitudeDeg: coordinate(g[28], g[29], g[30]),
    longitudeDeg: coordinate(g[31], g[32], g[33]),
    valid,
    speedKmh: num(g[25]),
    courseDeg: num(g[24]),
    satellites,
  });
  return { imei: g[1], message: { fixTime: utc(yy, mo, dd, hh, mi, ss), location, alarms, attributes: a } };
}

/** E2: a driver's RFID card, with the time and position it was read at. */
export function decodeRfid(text: string): Decoded | undefined {
  const g = PATTERN_E2.exec(text);
  if (!g) return undefined;
  const [yy, mo, dd, hh, mi, ss] = [2, 3, 4, 5, 6, 7].map((i) => int(g[i]));
  const location = located({ latitudeDeg: Number(g[9]), longitudeDeg: Number(g[8]), valid: true });
  const attributes = { driverUniqueId: g[10] };
  return { imei: g[1], message: { fixTime: utc(yy, mo, dd, hh, mi, ss), location, alarms: [], attributes } };
}

/** E5: OBD values, with the time and position they were read at. */
export function decodeObd(text: string): Decoded | undefined {
  const g = PATTERN_E5.exec(text);
  if (!g) return undefined;
  const [yy, mo, dd, hh, mi, ss] = [2, 3, 4, 5, 6, 7].map((i) => int(g[i]));
  // longitude first, as in E2 (the reference reads these two the other way round)
  const location = located({ latitudeDeg: Number(g[9]), longitudeDeg: Number(g[8]), valid: true });
  const attributes: Record<string, AttributeValue> = {
    odometer: int(g[10]),
    fuelUsed: int(g[11]),
    fuelConsumption: int(g[12]),
    power: int(g[13]) / 1000,
    rpm: int(g[14]),
    obdSpeed: int(g[15]),
    coolantTemp: int(g[18]),
    intakeTemp: int(g[19]),
    engineLoad: int(g[20]),
    throttle: int(g[21]),
    fuel: int(g[22]),
  };
  return { imei: g[1], message: { fixTime: utc(yy, mo, dd, hh, mi, ss), location, alarms: [], attributes } };
}
