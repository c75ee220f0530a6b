import type { Alarm } from '../../core/model/alarm.js';
import { type ByteReader, intBE, uintBE } from '../shared/byte-reader.js';
import type { AttributeValue, CommandResult, DecodedLocation, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import { MSG_EXTENDED_RECORDS, NO_COORDINATE, PROTOCOL } from './ruptela.constants.js';

/** What a packet's payload holds. */
export interface PayloadOutcome {
  messages: DecodedMessage[];
  commandResult?: CommandResult;
}

export type PayloadHandler = (r: ByteReader, command: number) => PayloadOutcome;

type Io = { alarms: Alarm[]; attributes: Record<string, AttributeValue> };

const num = (v: Buffer): number => Number(uintBE(v));

/** IO elements that raise an alarm: when `active(value)` holds (RuptelaProtocolDecoder.decodeParameter) */
const ALARM_IOS: Readonly<Record<number, [Alarm, (value: number) => boolean]>> = {
  88: ['jamming', (v) => v > 0],
  134: ['hardBraking', (v) => v > 0],
  136: ['hardAcceleration', (v) => v > 0],
  410: ['tow', (v) => v > 0],
  411: ['accident', (v) => v > 0],
  415: ['gpsAntennaCut', (v) => v === 0], // GNSS antenna state: 0 disconnected
  758: ['tampering', (v) => v === 1],
};

/** IO elements with a name and a scale (RuptelaProtocolDecoder.decodeParameter); the rest stay `io<id>` */
const NAMED_IOS: Readonly<Record<number, (v: Buffer) => [string, AttributeValue]>> = {
  2: (v) => ['in1', num(v)],
  3: (v) => ['in2', num(v)],
  4: (v) => ['in3', num(v)],
  5: (v) => ['in4', num(v)],
  13: (v) => ['motion', num(v) > 0],
  173: (v) => ['motion', num(v) > 0],
  20: (v) => ['adc3', num(v)],
  21: (v) => ['adc4', num(v)],
  22: (v) => ['adc1', num(v)],
  23: (v) => ['adc2', num(v)],
  29: (v) => ['power', num(v) / 1000], // mV
  30: (v) => ['battery', num(v) / 1000], // mV
  32: (v) => ['deviceTemp', intBE(v)],
  34: (v) => ['driverUniqueId', v.toString('hex')],
  39: (v) => ['engineLoad', num(v)],
  65: (v) => ['odometer', num(v)],
  74: (v) => ['temp3', intBE(v) / 10],
  78: (v) => ['temp0', intBE(v) / 10],
  79: (v) => ['temp1', intBE(v) / 10],
  80: (v) => ['temp2', intBE(v) / 10],
  94: (v) => ['rpm', num(v) * 0.25],
  95: (v) => ['obdSpeed', num(v)],
  98: (v) => ['fuel', (num(v) * 100) / 255],
  100: (v) => ['fuelConsumption', num(v) / 20],
  150: (v) => ['operator', num(v)],
  163: (v) => ['odometer', num(v) * 5],
  164: (v) => ['tripOdometer', num(v) * 5],
  165: (v) => ['obdSpeed', num(v) / 256],
  166: (v) => ['rpm', num(v) * 0.125],
  197: (v) => ['rpm', num(v) * 0.125],
  170: (v) => ['charge', num(v) > 0],
  205: (v) => ['fuel', num(v)],
  207: (v) => ['fuel', num(v) * 0.4],
  208: (v) => ['fuelUsed', num(v) * 0.5],
  251: (v) => ['ignition', num(v) > 0],
  409: (v) => ['ignition', num(v) > 0],
  645: (v) => ['obdOdometer', num(v) * 1000],
};

function ioElement(io: Io, id: number, value: Buffer): void {
  const alarm = ALARM_IOS[id];
  if (alarm) {
    if (alarm[1](num(value)) && !io.alarms.includes(alarm[0])) io.alarms.push(alarm[0]);
    return;
  }
  const named = NAMED_IOS[id];
  const [key, v] = named ? named(value) : [`io${id}`, uintBE(value)];
  io.attributes[key] = v;
}

/** two 8-byte IO values that together hold an ASCII id (CAN driver 126/127, tachograph driver 155/156) */
function joinDriver(a: Record<string, AttributeValue>, first: string, second: string): void {
  const x = a[first];
  const y = a[second];
  if (x === undefined && y === undefined) return;
  delete a[first];
  delete a[second];
  if (x === undefined || y === undefined) return;
  const bytes = Buffer.alloc(16);
  bytes.writeBigUInt64BE(BigInt(x), 0);
  bytes.writeBigUInt64BE(BigInt(y), 8);
  const id = bytes.toString('latin1').replace(/\0+/g, '');
  if (id) a.driverUniqueId = id;
}

/**
 * Records (1) and extended records (68): `records left | count | record…`. A record:
 * `u32 time | u8 time extension | [u8 record extension] | u8 priority | s32 lon ×1e-7 | s32 lat ×1e-7 |
 * u16 alt ×0.1 m | u16 course ×0.01 | u8 sats | u16 speed km/h | u8 hdop ×0.1 | event (u8, u16 extended) |`
 * then IO groups of 1, 2, 4 and 8-byte values (ids u16 in extended records). An extended record
 * whose extension says it continues the previous one adds to it.
 */
const IO_SIZES: readonly number[] = [1, 2, 4, 8];

export const decodeRecords: PayloadHandler = (r, command) => {
  const extended = command === MSG_EXTENDED_RECORDS;
  r.u8(); // records left
  const count = r.u8();
  const messages: DecodedMessage[] = [];
  for (let i = 0; i < count; i++) {
    const seconds = r.u32();
    r.u8(); // timestamp extension
    let previous: DecodedMessage | undefined;
    if (extended) {
      const recordExtension = r.u8();
      const merged = recordExtension >> 4;
      const current = recordExtension & 0x0f;
      if (current > 0 && current <= merged) previous = messages.pop();
    }
    r.u8(); // priority
    const io: Io = { alarms: previous?.alarms ?? [], attributes: previous?.attributes ?? {} };
    const m: DecodedMessage = { fixTime: new Date(seconds * 1000), alarms: io.alarms, attributes: io.attributes };
    const lon = r.i32();
    const lat = r.i32();
    if (lon > NO_COORDINATE && lat > NO_COORDINATE) {
      const location: DecodedLocation = {
        latitudeDeg: lat / 1e7,
        longitudeDeg: lon / 1e7,
        valid: true,
        altitudeM: r.u16() / 10,
        courseDeg: r.u16() / 100,
      };
      location.satellites = r.u8();
      location.speedKmh = r.u16();
      io.attributes.sat = location.satellites;
      io.attributes.hdop = r.u8() / 10;
      if (Math.abs(location.latitudeDeg) > 90 || Math.abs(location.longitudeDeg) > 180) {
        throw new ProtocolError(
          PROTOCOL,
          `record ${i} coordinates out of range (${location.latitudeDeg}, ${location.longitudeDeg})`,
          r.buf,
        );
      }
      if (location.courseDeg! > 360) location.courseDeg = 0;
      m.location = location;
    } else {
      r.skip(8);
      if (previous?.location) m.location = previous.location;
    }
    io.attributes.event = extended ? r.u16() : r.u8();
    for (const size of IO_SIZES) {
      const n = r.u8();
      for (let j = 0; j < n; j++) {
        const id = extended ? r.u16() : r.u8();
        // the label only when the frame is short: no string made per value
        if (r.remaining < size) r.need(size, `io ${id}`);
        ioElement(io, id, r.transient(size));
      }
    }
    joinDriver(io.attributes, 'io126', 'io127');
    joinDriver(io.attributes, 'io155', 'io156');
    const tag1 = io.attributes.io760;
    const tag2 = io.attributes.io761;
    if (tag1 !== undefined && tag2 !== undefined) {
      delete io.attributes.io760;
      delete io.attributes.io761;
      io.attributes.tagId = BigInt(tag1).toString(16) + BigInt(tag2).toString(16);
    }
    messages.push(m);
  }
  return { messages };
};

/** DTCs (9): `count | {reserved, u32 time, s32 lon, s32 lat, u8 archive (2), 5-char code}…` */
export const decodeDtcs: PayloadHandler = (r) => {
  const count = r.u8();
  const messages: DecodedMessage[] = [];
  for (let i = 0; i < count; i++) {
    r.u8(); // reserved
    const fixTime = new Date(r.u32() * 1000);
    const lon = r.i32() / 1e7;
    const lat = r.i32() / 1e7;
    if (Math.abs(lat) > 90 || Math.abs(lon) > 180)
      throw new ProtocolError(PROTOCOL, `DTC ${i} coordinates out of range (${lat}, ${lon})`, r.buf);
    const attributes: Record<string, AttributeValue> = {};
    if (r.u8() === 2) attributes.archive = true;
    attributes.dtcs = r.bytes(5).toString('latin1');
    messages.push({ fixTime, location: { latitudeDeg: lat, longitudeDeg: lon, valid: true }, alarms: [], attributes });
  }
  return { messages };
};

/** A command answer as text (2 configuration, 3 version, 4 firmware update, 7 SMS via GPRS response) */
export const decodeTextAnswer: PayloadHandler = (r, command) => {
  const text = r.bytes(r.remaining).toString('latin1').trim();
  return { messages: [{ alarms: [], attributes: { type: command, result: text } }], commandResult: { text } };
};

/** Set IO (17) answer: a result byte */
export const decodeSetIoAnswer: PayloadHandler = (r, command) => {
  const text = String(r.u8());
  return { messages: [{ alarms: [], attributes: { type: command, result: text } }], commandResult: { text } };
};

/** identification, heartbeat, files, driver cards …: nothing to store */
export const decodeNothing: PayloadHandler = () => ({ messages: [] });
