import type { DecodeContext, DecodedMessage } from '../types.js';
import { ProtocolError } from '../types.js';
import {
  COORDINATES_INVALID_MASK,
  IMEI_BYTES,
  IRIDIUM_IMEI_BYTES,
  PROTOCOL,
  TAG_COORDINATES,
  TAG_IMEI,
} from './galileo.constants.js';
import { ByteReader } from '../shared/byte-reader.js';
import { decodeTag, type GalileoRecord, newRecord } from './galileo.tags.js';

/** What one packet's data held. */
export interface PacketOutcome {
  /** the IMEI the packet names, when it names one */
  identity?: string;
  messages: DecodedMessage[];
  warnings?: string[];
}

/** A decoder of a packet's data: `r` spans the data, between the length field and the checksum. */
export type PacketHandler = (r: ByteReader, frame: Buffer, ctx: DecodeContext) => PacketOutcome;

/** A record with coordinates and a time as a position, or undefined. */
function positionOf(rec: GalileoRecord): DecodedMessage | undefined {
  if (!rec.coordinates || !rec.fixTime) return undefined;
  return {
    fixTime: rec.fixTime,
    location: {
      ...rec.coordinates,
      valid: rec.valid,
      ...(rec.speedKmh !== undefined && { speedKmh: rec.speedKmh }),
      ...(rec.courseDeg !== undefined && { courseDeg: rec.courseDeg }),
      ...(rec.altitudeM !== undefined && { altitudeM: rec.altitudeM }),
    },
    alarms: rec.alarms,
    attributes: rec.attributes,
  };
}

function setCoordinates(rec: GalileoRecord, latitudeDeg: number, longitudeDeg: number, frame: Buffer): void {
  if (!(Math.abs(latitudeDeg) <= 90 && Math.abs(longitudeDeg) <= 180))
    throw new ProtocolError(PROTOCOL, `coordinates out of range (${latitudeDeg}, ${longitudeDeg})`, frame);
  rec.coordinates = { latitudeDeg, longitudeDeg };
}

/** Tag 0x30: flags (high nibble 0 = valid fix), latitude and longitude in i32 LE millionths of a degree. */
function readCoordinates(r: ByteReader, rec: GalileoRecord, frame: Buffer): void {
  rec.valid = (r.u8() & COORDINATES_INVALID_MASK) === 0;
  const latitude = r.i32le() / 1e6;
  setCoordinates(rec, latitude, r.i32le() / 1e6, frame);
}

function readImei(r: ByteReader, n: number, frame: Buffer): string {
  const imei = r.bytes(n).toString('latin1');
  if (!/^[\x21-\x7e]+$/.test(imei)) throw new ProtocolError(PROTOCOL, 'the IMEI is not printable ASCII', frame);
  return imei;
}

/**
 * Head and main packets (header 0x01): tag records one after another, a tag seen again starting
 * the next record. A record with coordinates and a time is a position. A last record without them
 * that holds a command answer (0xE1) is reported without a position, as Traccar reports it with
 * the last known one.
 */
export const decodeMainPacket: PacketHandler = (r, frame) => {
  const messages: DecodedMessage[] = [];
  let identity: string | undefined;
  let seen = new Set<number>();
  let rec = newRecord();
  while (r.remaining > 0) {
    const tag = r.u8();
    if (seen.has(tag)) {
      const position = positionOf(rec);
      if (position) messages.push(position);
      seen = new Set();
      rec = newRecord();
    }
    seen.add(tag);
    if (tag === TAG_IMEI) identity = readImei(r, IMEI_BYTES, frame);
    else if (tag === TAG_COORDINATES) readCoordinates(r, rec, frame);
    else decodeTag(r, rec, tag, frame);
  }
  const last = positionOf(rec);
  if (last) messages.push(last);
  else if (rec.attributes.result !== undefined) messages.push({ alarms: [], attributes: rec.attributes });
  return { ...(identity !== undefined && { identity }), messages };
};

/** the first instant of the UTC year of `now`: minimal data sets count seconds from it */
const yearStart = (now: Date): number => Date.UTC(now.getUTCFullYear(), 0, 1);

/** Reads `n` bits, most significant first, of `bytes` from bit `at`. */
function bits(bytes: Buffer, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) v = v * 2 + ((bytes[i >> 3] >> (7 - (i & 7))) & 1);
  return v;
}

/**
 * The 10-byte minimal data set of compressed packets: a spare bit, 25 bits of seconds since the
 * start of the current year (UTC), an invalid-fix bit, 22 bits of longitude and 21 of latitude
 * scaled over the whole range, and an alarm bit.
 */
function readMinimalDataSet(r: ByteReader, rec: GalileoRecord, ctx: DecodeContext, frame: Buffer): void {
  const b = r.bytes(10);
  rec.fixTime = new Date(yearStart(ctx.now) + bits(b, 1, 25) * 1000);
  rec.valid = bits(b, 26, 1) === 0;
  const longitude = (360 * bits(b, 27, 22)) / 4194304 - 180;
  setCoordinates(rec, (180 * bits(b, 49, 21)) / 2097152 - 90, longitude, frame);
  if (bits(b, 70, 1) > 0) rec.alarms.push('general');
}

/** A compressed record: the minimal data set, a count of tags, the tag ids, then their values in that order. */
function readCompressedRecord(r: ByteReader, ctx: DecodeContext, frame: Buffer): GalileoRecord {
  const rec = newRecord();
  readMinimalDataSet(r, rec, ctx, frame);
  const tags = [...r.bytes(r.u8())];
  for (const tag of tags) decodeTag(r, rec, tag, frame);
  return rec;
}

/** Compressed main packets (header 0x08): compressed records until the checksum; no IMEI. */
export const decodeCompressedPacket: PacketHandler = (r, frame, ctx) => {
  const messages: DecodedMessage[] = [];
  while (r.remaining > 0) messages.push(positionOf(readCompressedRecord(r, ctx, frame))!);
  return { messages };
};

/**
 * A part of a photo (header 0x07): its number, then the JPEG bytes; a packet holding only the
 * number ends the photo. trackgate keeps no media: the parts are acknowledged, nothing is stored.
 */
export const decodePhotoPacket: PacketHandler = (r) => {
  const part = r.u8();
  if (r.remaining > 0) return { messages: [] };
  return { messages: [], warnings: [`photo ended at part ${part}: trackgate does not store photos`] };
};

/**
 * The Iridium SBD envelope (big-endian): MO header (after its `01 00 1C`: CDR reference, IMEI,
 * session status, MOMSN and MTMSN, session time), the location element (`03 00 0B`, sign flags,
 * degrees and thousandths of minutes of latitude and longitude, CEP radius), then the payload
 * element (one id byte, u16 length): Galileo tags, or with the `compressed` setting a minimal data
 * set and its tags.
 */
export function decodeIridium(frame: Buffer, ctx: DecodeContext): PacketOutcome {
  const r = new ByteReader(PROTOCOL, frame, 6, frame.length);
  r.skip(4); // CDR reference
  const identity = readImei(r, IRIDIUM_IMEI_BYTES, frame);
  r.skip(1 + 4); // session status, MOMSN and MTMSN
  const time = new Date(r.u32() * 1000);
  r.skip(3); // location element id and length
  const flags = r.u8();
  const latitude = r.u8() + r.u16() / 60000;
  const longitude = r.u8() + r.u16() / 60000;
  r.skip(4); // CEP radius
  r.skip(1); // payload element id
  const data = r.sub(r.u16());
  const rec = newRecord();
  rec.fixTime = time;
  setCoordinates(rec, flags & 2 ? -latitude : latitude, flags & 1 ? -longitude : longitude, frame);
  if (ctx.options?.compressed?.toLowerCase() === 'true') {
    readMinimalDataSet(data, rec, ctx, frame);
    for (const tag of [...data.bytes(data.u8())]) decodeTag(data, rec, tag, frame);
  } else {
    while (data.remaining > 0) {
      const tag = data.u8();
      if (tag === TAG_COORDINATES) readCoordinates(data, rec, frame);
      else decodeTag(data, rec, tag, frame);
    }
  }
  return { identity, messages: [positionOf(rec)!] };
}
