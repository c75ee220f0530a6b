import { ProtocolError, type CommandResult, type DecodeContext, type DecodeResult } from '../types.js';
import { decodeBinary } from './gl200.binary.js';
import { decodeCan } from './gl200.can.js';
import { PROTOCOL, sack, sackHeartbeat } from './gl200.constants.js';
import type { Report } from './gl200.fields.js';
import { isBinaryFrame } from './gl200.frame.js';
import {
  decodeBaa,
  decodeBid,
  decodeDar,
  decodeDtt,
  decodeFri,
  decodeGsm,
  decodeIda,
  decodeLsa,
  decodeLsw,
  decodeObd,
  decodePna,
  decodeVer,
  decodeWif,
  type TextHandler,
  type TextReport,
} from './gl200.messages.js';
import { decodeAck, decodeBasic, decodeDat, decodeEri, decodeIgn, decodeInf, decodeLbs } from './gl200.reports.js';

/**
 * Report type (`+RESP:GT<type>`) -> handler, as Gl200TextProtocolDecoder.decode dispatches. A type
 * not listed, or a sentence a handler does not recognise, is read by decodeBasic (which also raises
 * the alarms of SOS, SPD, BPL, EPF, ...).
 */
const TEXT_HANDLERS: Readonly<Record<string, TextHandler>> = {
  INF: decodeInf, // device information
  OBD: decodeObd, // OBD engine data
  CAN: decodeCan, // CAN bus data
  FRI: decodeFri, // fixed-interval report
  GEO: decodeFri, // geofence report
  RTL: decodeFri, // real-time location query
  DOG: decodeFri, // protocol watchdog reboot
  ERI: decodeEri, // fixed report with extended information
  IGN: decodeIgn, // ignition on
  IGF: decodeIgn, // ignition off
  VGN: decodeIgn, // virtual ignition on
  VGF: decodeIgn, // virtual ignition off
  LSW: decodeLsw, // input 1 changed
  TSW: decodeLsw, // input 2 changed
  IDA: decodeIda, // driver identification
  WIF: decodeWif, // Wi-Fi access points
  GSM: decodeGsm, // cells
  VER: decodeVer, // versions
  PNA: decodePna, // powered on
  PFA: decodePna, // powered off
  DAR: decodeDar, // driver attention
  DTT: decodeDtt, // transparent serial data
  BAA: decodeBaa, // Bluetooth accessory alarm
  BID: decodeBid, // Bluetooth accessory identified
  LSA: decodeLsa, // light sensor alarm
  LBS: decodeLbs, // cells, battery
  DAT: decodeDat, // serial accessory data
};

const IMEI = /^(?:\d{15}|[0-9a-fA-F]{14})$/;
const COUNT = /^[0-9a-fA-F]{4}$/;

/** the device a sentence names: its IMEI field (third, or second in the GT300 layout) */
function identityOf(values: readonly string[]): string | undefined {
  const imei = [values[2], values[1]].find((v) => v !== undefined && IMEI.test(v));
  if (imei) return imei;
  return values[2] !== undefined && /^[0-9A-Za-z]{1,32}$/.test(values[2]) ? values[2] : undefined;
}

/** a sentence without its `$`, NUL or line ending, from its `+` */
function sentenceOf(frame: Buffer): string {
  let s = frame.toString('latin1').replace(/[\0\r\n\s]+$/, '');
  if (s.endsWith('$')) s = s.slice(0, -1);
  const start = s.indexOf('+');
  return start > 0 ? s.substring(start) : s;
}

function decodeText(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const sentence = sentenceOf(frame);
  if (sentence.trim() === '') return { messages: [], replies: [] };
  const typeIndex = sentence.indexOf(':GT');
  if (!sentence.startsWith('+') || typeIndex < 0 || typeIndex > 8) {
    throw new ProtocolError(PROTOCOL, 'not a +RESP/+BUFF/+ACK :GT report', frame);
  }
  const type = sentence.substring(typeIndex + 3, typeIndex + 6);
  const values = sentence.split(',');
  const t: TextReport = { type, values, sentence, ...(ctx.model !== undefined && { declaredModel: ctx.model }) };
  const identity = identityOf(values);
  const count = values[values.length - 1];

  let reports: Report[];
  let answer: CommandResult | undefined;
  const replies: Buffer[] = [];
  if (sentence.startsWith('+ACK:')) {
    ({ reports, answer } = decodeAck(t));
    if (COUNT.test(count))
      replies.push(Buffer.from(type === 'HBD' ? sackHeartbeat(values[1], count) : sack(count), 'latin1'));
  } else {
    reports = TEXT_HANDLERS[type]?.(t) ?? decodeBasic(t);
    // neither the type's layout nor the generic reading found anything: a report this decoder cannot read
    if (reports.length === 0)
      throw new ProtocolError(PROTOCOL, `unrecognised GT${type} report`, frame, { ...(identity && { identity }) });
    for (const r of reports) r.set('type', type);
    if (COUNT.test(count)) replies.push(Buffer.from(sack(count), 'latin1'));
  }
  return {
    ...(identity && { identity }),
    messages: reports.map((r) => r.toMessage()),
    replies,
    ...(answer && { commandResults: [answer] }),
  };
}

/**
 * One Queclink frame as the splitter cut it (text without its `$`, or a whole binary frame), or one
 * UDP datagram. Text reports are answered `+SACK:<count>$` (the heartbeat `+ACK:GTHBD`:
 * `+SACK:GTHBD,<version>,<count>$`); binary frames are not answered.
 */
export function decodeGl200(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (isBinaryFrame(frame)) {
    const { identity, reports } = decodeBinary(frame);
    return { ...(identity && { identity }), messages: reports.map((r) => r.toMessage()), replies: [] };
  }
  return decodeText(frame, ctx);
}
