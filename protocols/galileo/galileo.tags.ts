import type { Alarm } from '../../core/model/alarm.js';
import type { AttributeValue } from '../types.js';
import { ProtocolError } from '../types.js';
import { PROTOCOL } from './galileo.constants.js';
import type { ByteReader } from '../shared/byte-reader.js';

/**
 * One record as its tags fill it in: a position once it has coordinates and a time. Speed, course
 * and altitude may come before the coordinates, so the parts are kept apart until the record ends.
 */
export interface GalileoRecord {
  fixTime?: Date;
  coordinates?: { latitudeDeg: number; longitudeDeg: number };
  valid: boolean;
  speedKmh?: number;
  courseDeg?: number;
  altitudeM?: number;
  alarms: Alarm[];
  attributes: Record<string, AttributeValue>;
}

export const newRecord = (): GalileoRecord => ({ valid: false, alarms: [], attributes: {} });

type TagHandler = (r: ByteReader, rec: GalileoRecord) => void;

const set =
  (key: string, read: (r: ByteReader) => AttributeValue): TagHandler =>
  (r, rec) => {
    rec.attributes[key] = read(r);
  };

const skip =
  (n: number): TagHandler =>
  (r) =>
    r.skip(n);

/**
 * Value sizes of the tags that are only skipped (GalileoProtocolDecoder TAG_LENGTH_MAP; the tag
 * table of the server exchange protocol). 0x5B is variable in the manual; Traccar skips 7 bytes.
 */
const SIZES: ReadonlyArray<[number, readonly number[]]> = [
  [
    1,
    [
      0x01, 0x02, 0x35, 0x43, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2,
      0xd5, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0xa0, 0xaf, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab,
      0xac, 0xad, 0xae,
    ],
  ],
  [
    2,
    [
      0x04, 0x10, 0x34, 0x40, 0x41, 0x42, 0x45, 0x46, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x60, 0x61, 0x62, 0x70, 0x71,
      0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xd6, 0xd7, 0xd8,
      0xd9, 0xda,
    ],
  ],
  [
    3,
    [
      0x63, 0x64, 0x6f, 0x5d, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0xfa, 0x80, 0x81, 0x82, 0x83,
      0x84, 0x85, 0x86, 0x87,
    ],
  ],
  [
    4,
    [
      0x20, 0x33, 0x44, 0x90, 0xc0, 0xc2, 0xc3, 0xd3, 0xd4, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xf0, 0xf9, 0x5a, 0x47, 0xf1,
      0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xe2, 0xe9,
    ],
  ],
  [7, [0x5b]],
  [68, [0x5c]],
  [8, [0xfd]],
];

/** Numbered tag ranges: `[first, last, key prefix, first number, reader]` (GalileoProtocolDecoder.decodeTag). */
const RANGES: ReadonlyArray<[number, number, string, number, (r: ByteReader) => number]> = [
  [0x50, 0x57, 'adc', 0, (r) => r.u16le()],
  [0x60, 0x62, 'fuel', 0, (r) => r.u16le()],
  [0xa0, 0xaf, 'can8BitR', 15, (r) => r.u8()],
  [0xb0, 0xb9, 'can16BitR', 5, (r) => r.u16le()],
  [0xc4, 0xd2, 'can8BitR', 0, (r) => r.u8()],
  [0xd6, 0xda, 'can16BitR', 0, (r) => r.u16le()],
  [0xdb, 0xdf, 'can32BitR', 0, (r) => r.u32le()],
  [0xe2, 0xe9, 'userData', 0, (r) => r.u32le()],
  [0xf0, 0xf9, 'can32BitR', 5, (r) => r.u32le()],
];

/** Tags with a meaning of their own, in Traccar's keys and units (volts, °C, metres, km/h). */
const NAMED: Readonly<Record<number, TagHandler>> = {
  0x01: set('versionHw', (r) => r.u8()),
  0x02: set('versionFw', (r) => r.u8()),
  0x04: set('deviceId', (r) => r.u16le()),
  0x10: set('index', (r) => r.u16le()),
  0x20: (r, rec) => {
    rec.fixTime = new Date(r.u32le() * 1000);
  },
  0x33: (r, rec) => {
    rec.speedKmh = r.u16le() / 10;
    rec.courseDeg = r.u16le() / 10;
  },
  0x34: (r, rec) => {
    rec.altitudeM = r.i16le();
  },
  0x35: set('hdop', (r) => r.u8() / 10),
  0x40: set('status', (r) => r.u16le()),
  0x41: set('power', (r) => r.u16le() / 1000), // mV
  0x42: set('battery', (r) => r.u16le() / 1000), // mV
  0x43: set('deviceTemp', (r) => r.i8()),
  0x44: set('acceleration', (r) => r.u32le()),
  0x45: set('output', (r) => r.u16le()),
  0x46: set('input', (r) => r.u16le()),
  0x48: set('statusExtended', (r) => r.u16le()),
  0x58: set('rs2320', (r) => r.u16le()),
  0x59: set('rs2321', (r) => r.u16le()),
  0x90: set('driverUniqueId', (r) => String(r.u32le())),
  0xc0: set('fuelTotal', (r) => r.u32le() * 0.5), // 0.5 l
  0xc1: (r, rec) => {
    rec.attributes.fuel = r.u8() * 0.4; // 0.4 %
    rec.attributes.temp1 = r.u8() - 40; // °C offset by 40
    rec.attributes.rpm = r.u16le() * 0.125;
  },
  0xc2: set('canB0', (r) => r.u32le()),
  0xc3: set('canB1', (r) => r.u32le()),
  0xd4: set('odometer', (r) => r.u32le()),
  0xe0: set('index', (r) => r.u32le()),
  0xe1: set('result', (r) => r.bytes(r.u8()).toString('latin1')),
  0xea: set('userDataArray', (r) => r.bytes(r.u8()).toString('hex')),
  0xfe: (r) => r.skip(r.u16le()),
};

/** every tag a record may hold but the IMEI and the coordinates, which the packet decoders read */
const TAGS = new Map<number, TagHandler>();
for (const [size, tags] of SIZES) for (const tag of tags) TAGS.set(tag, skip(size));
for (const [tag, handler] of Object.entries(NAMED)) TAGS.set(Number(tag), handler);
for (const [first, last, prefix, base, read] of RANGES)
  for (let tag = first; tag <= last; tag++) TAGS.set(tag, set(`${prefix}${tag - first + base}`, read));

/** Reads one tag's value into `rec`; an unknown tag cannot be skipped, so the packet cannot be read on. */
export function decodeTag(r: ByteReader, rec: GalileoRecord, tag: number, frame: Buffer): void {
  const handler = TAGS.get(tag);
  if (!handler) throw new ProtocolError(PROTOCOL, `unknown tag 0x${tag.toString(16).padStart(2, '0')}`, frame);
  handler(r, rec);
}
