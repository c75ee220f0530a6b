import type { ByteReader } from '../shared/byte-reader.js';
import type { DecodedMessage } from '../types.js';
import { ATTR_RESPONSE_REQUIRED, TERMINAL_RESULTS } from './jt808.constants.js';
import {
  ascii,
  javaTrim,
  newMessage,
  readTime,
  setTime,
  signMagnitude16,
  textDecode,
  tolerant,
  type Jt808Context,
} from './jt808.fields.js';
import { decodeLocation, decodeLocation2 } from './jt808.location.js';
import { generalResponse, generalResponse2, registerResponse, timeSyncResponse } from './jt808.replies.js';

/** One handler per message id: reads the body, returns messages, pushes replies onto `c.replies`. */
export type Jt808Handler = (r: ByteReader, c: Jt808Context) => DecodedMessage[];

const ack = (c: Jt808Context): void => {
  c.replies.push(generalResponse(c.header));
};

/**
 * 8.1 terminal general response 0x0001: the serial and id of the platform message answered, and a
 * result (0 ok, 1 failed, 2 bad message, 3 unsupported). Nothing to store; not answered back.
 */
export const terminalResponse: Jt808Handler = (r, c) => {
  const replySerial = r.u16();
  const replyMessageId = r.u16();
  const status = TERMINAL_RESULTS[r.u8()];
  c.commandResults.push({ text: '', replySerial, replyMessageId, ...(status && { status }) });
  return [];
};

/** 8.5 terminal registration -> 8.6 0x8100 with the terminal id as auth code */
export const register: Jt808Handler = (_r, c) => {
  c.replies.push(registerResponse(c.header, true));
  return [];
};

/** 8.8 authentication, logout, vendor heartbeat / photo notice / time zone sync: general response only */
export const acknowledgeOnly: Jt808Handler = (_r, c) => {
  ack(c);
  return [];
};

/** 8.3 heartbeat; some terminals append battery level, rssi and a status byte */
export const heartbeat: Jt808Handler = (r, c) => {
  ack(c);
  if (r.remaining < 3) return [];
  const m = newMessage();
  m.attributes.batteryLevel = r.u8();
  m.attributes.rssi = r.u8();
  m.attributes.status = r.u8();
  return [m];
};

/** 8.18 location report */
export const locationReport: Jt808Handler = (r, c) => {
  ack(c);
  return [decodeLocation(r, c)];
};

/** 8.20 location query response: answered serial, then a location */
export const locationQueryResponse: Jt808Handler = (r, c) => {
  r.u16(); // answered serial
  return [decodeLocation(r, c)];
};

/** JT701 0x5501 / 0x5502: answered with 0x4401 when attribute bit 15 asks for it */
export const locationReport2 =
  (blind: boolean): Jt808Handler =>
  (r, c) => {
    if (c.header.attribute & ATTR_RESPONSE_REQUIRED) c.replies.push(generalResponse2(c.header));
    return [decodeLocation2(r, c, blind)];
  };

/** locations of a batch, each `length` then an 8.18 location; a broken tail keeps the items before it */
function batchItems(r: ByteReader, c: Jt808Context, lengthBytes: 1 | 2, archive: boolean): DecodedMessage[] {
  const messages: DecodedMessage[] = [];
  tolerant(c, 'location batch', () => {
    while (r.remaining > lengthBytes) {
      const item = r.sub(lengthBytes === 1 ? r.u8() : r.u16(), 'batch item');
      const m = decodeLocation(item, c);
      if (archive) m.attributes.archive = true;
      messages.push(m);
    }
  });
  return messages;
}

/** 8.48 bulk upload: count u16, type u8 (1: blind-area backfill), items with u16 length */
export const locationBatch: Jt808Handler = (r, c) => {
  ack(c);
  r.u16(); // count
  const type = r.u8();
  return batchItems(r, c, 2, type > 0);
};

/** vendor 0x0210: items with u8 length; a 7-byte body is battery level and time only */
export const locationBatch2: Jt808Handler = (r, c) => {
  ack(c);
  if (r.remaining !== 7) return batchItems(r, c, 1, false);
  const m = newMessage();
  m.attributes.batteryLevel = r.u8();
  setTime(m, readTime(r, c.utcOffsetMinutes), c);
  return [m];
};

/** 8.15 terminal attributes: type, manufacturer, model, terminal id, ICCID, hardware and firmware versions */
export const terminalAttributes: Jt808Handler = (r, c) => {
  ack(c);
  const m = newMessage();
  const wide = c.header.version !== undefined; // 2019: model and terminal id are 30 bytes
  r.u16(); // terminal type
  r.skip(5); // manufacturer id
  r.skip(wide ? 30 : 20); // terminal model
  r.skip(wide ? 30 : 7); // terminal id
  m.attributes.iccid = r.bytes(10).toString('hex');
  tolerant(c, 'terminal attributes', () => {
    const hardware = ascii(r.bytes(r.u8()));
    if (hardware) m.attributes.versionHw = hardware;
    const firmware = ascii(r.bytes(r.u8()));
    if (firmware) m.attributes.versionFw = firmware;
  });
  return [m];
};

/** vendor time sync request -> 0x8109 with the receive time in UTC */
export const timeSync: Jt808Handler = (_r, c) => {
  c.replies.push(timeSyncResponse(c.header, c.ctx.now));
  return [];
};

/** vendor text report 0x6006: encoding byte, then GBK text */
export const textReport: Jt808Handler = (r, c) => {
  ack(c);
  const m = newMessage();
  r.u8(); // encoding
  m.attributes.result = textDecode(r.bytes(r.remaining), 'gbk');
  c.commandResults.push({ text: m.attributes.result });
  return [m];
};

/** vendor text response 0x1300: answered serial, then UTF-16BE text */
export const textResponse: Jt808Handler = (r, c) => {
  const m = newMessage();
  const replySerial = r.u16();
  m.attributes.result = textDecode(r.bytes(r.remaining), 'utf-16be').trim();
  c.commandResults.push({ text: m.attributes.result, replySerial });
  return [m];
};

/** 0x0701 used for command results: length u32, ASCII text */
export const commandResponse: Jt808Handler = (r, c) => {
  const m = newMessage();
  m.attributes.result = ascii(r.bytes(r.u32(), 'command result'));
  c.commandResults.push({ text: m.attributes.result });
  return [m];
};

/** vendor acceleration samples 0x2070: BCD time, then x, y, z (sign and magnitude) per sample */
export const acceleration: Jt808Handler = (r) => {
  const samples: string[] = [];
  while (r.remaining >= 12) {
    r.skip(6); // time
    samples.push(`[${signMagnitude16(r.u16())},${signMagnitude16(r.u16())},${signMagnitude16(r.u16())}]`);
  }
  const m = newMessage();
  m.attributes.gSensor = `[${samples.join(',')}]`;
  return [m];
};

/** 8.46 driver identity: status, time, then (card inserted) result, name, certificate code, agency, validity */
export const driverIdentity: Jt808Handler = (r, c) => {
  const m = newMessage();
  m.attributes.cardStatus = r.u8();
  setTime(m, readTime(r, c.utcOffsetMinutes), c);
  tolerant(c, 'driver identity', () => {
    if (r.remaining === 0) return;
    m.attributes.cardResult = r.u8();
    m.attributes.driver = textDecode(r.bytes(r.u8()), 'gbk');
    m.attributes.cardCode = javaTrim(ascii(r.bytes(20)));
    m.attributes.cardAgency = textDecode(r.bytes(r.u8()), 'gbk');
    m.attributes.cardValidity = r.bytes(4).toString('hex');
  });
  return [m];
};

/** 8.12 parameter ids (table 12) kept as attributes, with how each value reads */
const PARAMETERS: Readonly<Record<number, [string, (v: ByteReader) => number | string]>> = {
  0x0001: ['heartbeatInterval', (v) => v.u32()],
  0x0010: ['apn', (v) => textDecode(v.bytes(v.remaining), 'gbk')],
  0x0013: ['server', (v) => textDecode(v.bytes(v.remaining), 'gbk')],
  0x0018: ['port', (v) => v.u32()],
  0x0027: ['sleepReportInterval', (v) => v.u32()],
  0x0028: ['emergencyReportInterval', (v) => v.u32()],
  0x0029: ['defaultReportInterval', (v) => v.u32()],
  0x0055: ['overspeedThreshold', (v) => v.u32()],
  0x0056: ['speedLimitDuration', (v) => v.u32()],
  0x0080: ['odometer', (v) => v.u32() * 100],
  0x0083: ['plateNumber', (v) => textDecode(v.bytes(v.remaining), 'gbk').trim()],
};

/** 8.12 query parameters response: answered serial, count, then `id u32, length u8, value` */
export const parameterQueryResponse: Jt808Handler = (r, c) => {
  const m = newMessage();
  r.u16(); // answered serial
  r.u8(); // count
  tolerant(c, 'parameter list', () => {
    while (r.remaining >= 5) {
      const id = r.u32();
      const length = r.u8();
      if (length > r.remaining) return;
      const v = r.sub(length);
      const parameter = PARAMETERS[id];
      if (parameter) m.attributes[parameter[0]] = parameter[1](v);
    }
  });
  return [m];
};
