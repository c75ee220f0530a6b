/**
 * Navtelecom frames as a device writes them, for the navis tests: NTCB frames with correct
 * XORs, a *>FLEX negotiation of chosen fields, FLEX packets with their CRC-8.
 */
import { crc8Egts, xor8 } from '../../protocols/shared/crc.js';

/** An NTCB frame from the device (receiver 1, sender `sender`) carrying `body`. */
export function ntcb(body: Buffer | string, sender = 0, receiver = 1): Buffer {
  const data = typeof body === 'string' ? Buffer.from(body, 'latin1') : body;
  const head = Buffer.alloc(16);
  head.write('@NTC', 0, 'latin1');
  head.writeUInt32LE(receiver, 4);
  head.writeUInt32LE(sender, 8);
  head.writeUInt16LE(data.length, 12);
  head[14] = xor8(data);
  head[15] = xor8(head, 0, 15);
  return Buffer.concat([head, data]);
}

export const handshake = (imei: string, sender = 0): Buffer => ntcb(`*>S:${imei}`, sender);

/** *>FLEX declaring the fields whose indexes (field number - 1) are listed, of `size` fields in all. */
export function negotiation(fields: readonly number[], size = 255, version = 0x1e): Buffer {
  const bits = Buffer.alloc(Math.ceil(size / 8));
  for (const i of fields) bits[i >> 3] |= 0x80 >> (i & 7);
  return ntcb(Buffer.concat([Buffer.from('*>FLEX', 'latin1'), Buffer.from([0xb0, version, version, size]), bits]));
}

/** A FLEX packet: the two header characters, the content, CRC-8. */
export function flex(type: string, content: Buffer): Buffer {
  const out = Buffer.concat([Buffer.from(type, 'latin1'), content, Buffer.alloc(1)]);
  out[out.length - 1] = crc8Egts(out, 0, out.length - 1);
  return out;
}

/** FLEX 1.0 fields 1, 3, 8-14 (indexes 0, 2, 7-13): index, event time, nav state, time, lat, lon, alt, speed, course */
export const BASIC_FIELDS = [0, 2, 7, 8, 9, 10, 11, 12, 13];

/** One record of BASIC_FIELDS. */
export function basicRecord(o: {
  index: number;
  time: Date;
  lat: number;
  lon: number;
  altitudeM?: number;
  speedKmh?: number;
  course?: number;
  sats?: number;
  valid?: boolean;
}): Buffer {
  const b = Buffer.alloc(4 + 4 + 1 + 4 + 4 + 4 + 4 + 4 + 2);
  let at = b.writeUInt32LE(o.index, 0);
  at = b.writeUInt32LE(Math.floor(o.time.getTime() / 1000), at);
  at = b.writeUInt8(((o.sats ?? 9) << 2) | (o.valid === false ? 0 : 2), at);
  at = b.writeUInt32LE(Math.floor(o.time.getTime() / 1000), at);
  at = b.writeInt32LE(Math.round(o.lat * 600000), at);
  at = b.writeInt32LE(Math.round(o.lon * 600000), at);
  at = b.writeInt32LE(Math.round((o.altitudeM ?? 0) * 10), at);
  at = b.writeFloatLE(o.speedKmh ?? 0, at);
  b.writeUInt16LE(o.course ?? 0, at);
  return b;
}
