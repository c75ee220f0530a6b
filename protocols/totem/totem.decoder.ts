import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import { crc16Modbus, xor8 } from '../shared/crc.js';
import { ACK_NEW_PREFIX, ACK_OLD, NEW_HEAD, OLD_HEAD, PROTOCOL, TYPE_OBD, TYPE_RFID } from './totem.constants.js';
import {
  type Decoded,
  decodeFixed,
  decodeNew,
  decodeObd,
  decodePipes,
  decodeRfid,
  decodeRmc,
} from './totem.messages.js';

const hex2 = (n: number): string => n.toString(16).toUpperCase().padStart(2, '0');

/** `$$0…`: the new format (4-digit length); anything else after `$$` is the old one. */
const isNew = (text: string): boolean => text.charAt(2) === '0';

/** The new format by its type; the old one by what its body holds, in the reference's order. */
function decodeBody(text: string): Decoded | undefined {
  if (isNew(text)) {
    const type = parseInt(text.substring(6, 8), 16);
    if (type === TYPE_RFID) return decodeRfid(text);
    if (type === TYPE_OBD) return decodeObd(text);
    return decodeNew(text, type);
  }
  if (text.includes('$GPRMC')) return decodeRmc(text);
  const bar = text.indexOf('|');
  return bar >= 0 && text.indexOf('|', bar + 1) >= 0 ? decodePipes(text) : decodeFixed(text);
}

/**
 * The answer every frame gets, read or not: new format `$$0014AA` + the four characters before
 * the frame's checksum (its serial) + their XOR in hex; old format `ACK OK` CR LF.
 */
function ackOf(text: string): Buffer {
  if (!isNew(text)) return Buffer.from(ACK_OLD, 'latin1');
  const ack = ACK_NEW_PREFIX + text.substring(text.length - 6, text.length - 2);
  return Buffer.from(ack + hex2(xor8(Buffer.from(ack, 'latin1'))), 'latin1');
}

/**
 * The frame's own checksum: new format a 2-hex XOR of everything before it, old format a 4-hex
 * CRC-16/MODBUS. The old `|`-separated layout is not checked: its one capture matches neither.
 */
function checksumError(text: string): string | undefined {
  const body = text.replace(/[\r\n]+$/, '');
  const width = isNew(body) ? 2 : 4;
  if (!isNew(body) && !body.includes('$GPRMC') && body.split('|').length > 2) return undefined;
  const bytes = Buffer.from(body.substring(0, body.length - width), 'latin1');
  const computed = isNew(body) ? hex2(xor8(bytes)) : crc16Modbus(bytes).toString(16).toUpperCase().padStart(4, '0');
  const given = body.substring(body.length - width).toUpperCase();
  return given === computed ? undefined : `checksum ${given} != computed ${computed}`;
}

/**
 * One frame as the splitter cuts it (`$$` up to its length), or one given to `trackgate decode`.
 * A frame whose layout matches none the reference reads, or that it drops (no date), still gets
 * its acknowledgement and names its device when its header does.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  const raw = frame.toString('latin1');
  // bytes before `$$` (a CR LF given to `trackgate decode`) are skipped, as the splitter skips them
  const start = raw.indexOf('$$');
  const text = start > 0 ? raw.substring(start) : raw;
  if (start < 0 || text.length < 8) throw new ProtocolError(PROTOCOL, 'not a $$ frame', frame);
  const skipped = start > 0 ? [`skipped ${start} bytes before $$`] : [];
  const headIdentity = (isNew(text) ? NEW_HEAD.exec(text)?.[2] : OLD_HEAD.exec(text)?.[1]) ?? undefined;
  const error = checksumError(text);
  if (error && ctx.checksum === 'strict')
    throw new ProtocolError(PROTOCOL, error, frame, { ...(headIdentity && { identity: headIdentity }) });
  const decoded = decodeBody(text);
  const identity = decoded?.imei ?? headIdentity;
  const warnings = error ? [...skipped, error] : skipped;
  return {
    ...(identity && { identity }),
    messages: decoded?.message ? [decoded.message] : [],
    replies: [ackOf(text)],
    ...(error && { checksumError: error }),
    ...(warnings.length > 0 && { warnings }),
  };
}
