import { crc16Xmodem } from '../shared/crc.js';
import { ProtocolError, type DecodeContext, type DecodeResult, type DecodedMessage } from '../types.js';
import * as K from './minifinder2.constants.js';
import { readConfiguration } from './minifinder2.config.js';
import { newFix, readDataRecord, type Fix } from './minifinder2.records.js';
import { Cursor } from './minifinder2.reader.js';

/** `AB 00 | length | CRC-16/XMODEM | sequence id | content`: every frame the server sends */
export function minifinder2Frame(sequence: number, content: Buffer): Buffer {
  const head = Buffer.alloc(K.HEAD_BYTES);
  head[0] = K.HEADER;
  head.writeUInt16LE(content.length, 2);
  head.writeUInt16LE(crc16Xmodem(content), 4);
  head.writeUInt16LE(sequence, 6);
  return Buffer.concat([head, content]);
}

/**
 * The answer to a frame whose flags ask for one: `7F 01 00` (success), or for a services request
 * the services it names that the server provides: 0x12 the time now, 0x11 a zeroed position.
 */
function answer(frame: Buffer, type: number, sequence: number, now: Date): Buffer {
  const values: Buffer[] = [];
  if (type === K.MSG_SERVICES) {
    const c = new Cursor(frame, K.HEAD_BYTES + 1);
    while (c.readable) {
      const end = c.u8() + c.pos;
      const key = c.u8();
      if (key === K.SERVICE_POSITION) values.push(Buffer.from([10, key, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
      if (key === K.SERVICE_TIME) {
        const time = Buffer.from([5, key, 0, 0, 0, 0]);
        time.writeInt32LE(Math.floor(now.getTime() / 1000) | 0, 2);
        values.push(time);
      }
      c.seek(end);
    }
  }
  const content = values.length
    ? Buffer.concat([Buffer.from([K.MSG_SERVICES]), ...values])
    : Buffer.from([K.MSG_RESPONSE, 1, 0]);
  return minifinder2Frame(sequence, content);
}

function toMessage(f: Fix): DecodedMessage {
  const m: DecodedMessage = { alarms: f.alarms, attributes: f.attributes };
  const time = f.fixTime ?? f.deviceTime;
  if (time) m.fixTime = time;
  // the reference takes the last known place for a position with neither a fix nor an HDOP
  const located = f.valid || f.attributes.hdop !== undefined;
  const lat = f.latitudeDeg;
  const lon = f.longitudeDeg;
  // coordinates no place has are left out (the rest of the report stands), as a course past 360°
  if (located && lat !== undefined && lon !== undefined && Math.abs(lat) <= 90 && Math.abs(lon) <= 180) {
    m.location = { latitudeDeg: lat, longitudeDeg: lon, valid: f.valid };
    if (f.speedKmh !== undefined) m.location.speedKmh = f.speedKmh;
    if (f.courseDeg !== undefined && f.courseDeg <= 360) m.location.courseDeg = f.courseDeg;
    if (f.altitudeM !== undefined) m.location.altitudeM = f.altitudeM;
  } else if (!located) {
    // no fix: (0, 0) without a fix, as the reference's position before any last known place;
    // the ingest stores the message without a location, so the device's last location stands
    m.location = { latitudeDeg: 0, longitudeDeg: 0, valid: false };
  }
  f.network.applyTo(m.attributes);
  return m;
}

/**
 * Data and services messages: records, a repeated key (beacons aside) starting the next position.
 * Only a frame that carries the IMEI (key 0x01) gives positions, as in the reference.
 */
function decodeData(frame: Buffer): { identity?: string; messages: DecodedMessage[] } {
  const c = new Cursor(frame, K.HEAD_BYTES + 1);
  const fixes: Fix[] = [];
  let fix = newFix();
  let keys = new Set<number>();
  let identity: string | undefined;
  while (c.readable) {
    const length = c.u8();
    const end = c.pos + length;
    const key = c.u8();
    if (!K.REPEATABLE_KEYS.has(key) && keys.has(key)) {
      fixes.push(fix);
      fix = newFix();
      keys = new Set();
    }
    keys.add(key);
    if (key === K.KEY_IMEI) identity = c.ascii(15);
    else readDataRecord(c, { key, length, end }, fix);
    c.seek(end);
  }
  fixes.push(fix);
  if (identity === undefined) return { messages: [] };
  return { identity, messages: fixes.map(toMessage) };
}

/** configuration, system control and response messages: one report of the connection's device */
function decodeReport(frame: Buffer, type: number): Pick<DecodeResult, 'messages' | 'commandResults'> {
  const c = new Cursor(frame, K.HEAD_BYTES + 1);
  let attributes: DecodedMessage['attributes'] = {};
  if (type === K.MSG_CONFIGURATION) attributes = readConfiguration(c);
  else if (type === K.MSG_RESPONSE) {
    c.u8(); // length
    attributes.result = String(c.u8());
  } else {
    while (c.readable) {
      const end = c.u8() + c.pos;
      if (c.u8() === K.KEY_COMMAND_RESULT) {
        c.u8(); // type
        attributes.result = c.utf8(end - c.pos);
      }
      c.seek(end);
    }
  }
  const result = attributes.result;
  return {
    messages: [{ alarms: [], attributes }],
    ...(type === K.MSG_SYSTEM_CONTROL && typeof result === 'string' && { commandResults: [{ text: result }] }),
  };
}

export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < K.HEAD_BYTES + 1 || frame[0] !== K.HEADER)
    throw new ProtocolError(K.PROTOCOL, 'not a frame (0xAB, 8-byte header and a type)', frame);
  const flags = frame[1];
  const sequence = frame.readUInt16LE(6);
  const type = frame[K.HEAD_BYTES];
  const warnings: string[] = [];
  let checksumError: string | undefined;
  const crc = crc16Xmodem(frame, K.HEAD_BYTES);
  if (crc !== frame.readUInt16LE(4)) {
    checksumError = `CRC ${frame.readUInt16LE(4).toString(16).padStart(4, '0')} does not match ${crc.toString(16).padStart(4, '0')}`;
    if (ctx.checksum === 'strict') throw new ProtocolError(K.PROTOCOL, checksumError, frame);
    warnings.push(checksumError);
  }
  const replies = flags & K.FLAG_ACK_REQUESTED ? [answer(frame, type, sequence, ctx.now)] : [];
  let out: Pick<DecodeResult, 'identity' | 'messages' | 'commandResults'> = { messages: [] };
  if (type === K.MSG_DATA || type === K.MSG_SERVICES) out = decodeData(frame);
  else if (
    ctx.deviceId !== undefined &&
    (type === K.MSG_CONFIGURATION || type === K.MSG_SYSTEM_CONTROL || type === K.MSG_RESPONSE)
  )
    out = decodeReport(frame, type);
  return {
    ...out,
    replies,
    ...(warnings.length > 0 && { warnings }),
    ...(checksumError && { checksumError }),
  };
}
