import { ByteReader } from '../shared/byte-reader.js';
import { crc16CcittFalse } from '../shared/crc.js';
import { luhnDigit } from '../shared/luhn.js';
import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import * as C from './meiligao.constants.js';
import * as M from './meiligao.messages.js';

/** Handlers by command (MeiligaoProtocolDecoder.decode); any other command carries nothing Traccar reads. */
const HANDLERS: Readonly<Record<number, M.Handler>> = {
  [C.MSG_LOGIN]: M.login,
  [C.MSG_HEARTBEAT]: M.heartbeat,
  [C.MSG_SERVER]: M.serverRequest,
  [C.MSG_UPLOAD_PHOTO]: M.photoStart,
  [C.MSG_DATA_PHOTO]: M.photoData,
  [C.MSG_UPLOAD_COMPLETE]: M.photoComplete,
  [C.MSG_POSITION]: M.position,
  [C.MSG_POSITION_LOGGED]: M.loggedPosition,
  [C.MSG_ALARM]: M.alarm,
  [C.MSG_POSITION_IMAGE]: M.imagePosition,
  [C.MSG_RFID]: M.rfid,
  [C.MSG_RETRANSMISSION]: M.retransmission,
  [C.MSG_OBD_RT]: M.obd,
  [C.MSG_OBD_RTA]: M.obd,
  [C.MSG_DTC]: M.troubleCodes,
};

/**
 * The id: BCD digits up to the first F nibble (a nibble A-E is written as 10-14, as Traccar does). A 14-digit id may also be registered as the IMEI
 * it is the start of, with its Luhn digit (Traccar tries both).
 */
function identify(id: Buffer): { identity?: string; alternativeIdentities?: string[] } {
  let digits = '';
  for (const b of id) {
    const high = b >> 4;
    if (high === 0xf) break;
    digits += String(high);
    const low = b & 0x0f;
    if (low === 0xf) break;
    digits += String(low);
  }
  if (digits === '') return {};
  return digits.length === 14
    ? { identity: digits, alternativeIdentities: [digits + luhnDigit(Number(digits))] }
    : { identity: digits };
}

/**
 * One Meiligao frame (TCP, as the splitter cuts it, or one UDP datagram): `$$ | u16 length | id |
 * u16 command | data | CRC | CR LF`. As in Traccar, the length field is not checked (old devices
 * write 0) and the frame's end is its last byte; a CRC mismatch is a warning (`accept`) or an error
 * (`strict`). Every frame names its device.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < C.MIN_FRAME_BYTES)
    throw new ProtocolError(C.PROTOCOL, `frame of ${frame.length} bytes is shorter than a header`, frame);
  const ids = identify(frame.subarray(4, 4 + C.ID_BYTES));
  const warnings: string[] = [];
  const crcAt = frame.length - C.TRAILER_BYTES;
  const crc = crc16CcittFalse(frame, 0, crcAt);
  let checksumError: string | undefined;
  if (crc !== frame.readUInt16BE(crcAt)) {
    checksumError = `CRC ${frame.readUInt16BE(crcAt).toString(16).padStart(4, '0')} does not match ${crc.toString(16).padStart(4, '0')}`;
    if (ctx.checksum === 'strict') throw new ProtocolError(C.PROTOCOL, checksumError, frame, { ...ids });
    warnings.push(checksumError);
  }
  const command = frame.readUInt16BE(4 + C.ID_BYTES);
  const env: M.MeiligaoEnv = {
    id: frame.subarray(4, 4 + C.ID_BYTES),
    command,
    data: new ByteReader(C.PROTOCOL, frame, C.HEADER_BYTES, crcAt),
    ctx,
  };
  const handler = Object.hasOwn(HANDLERS, command) ? HANDLERS[command] : M.ignored;
  const out = handler(env);
  if (out.warnings) warnings.push(...out.warnings);
  return {
    ...ids,
    messages: out.messages,
    replies: out.replies,
    ...(warnings.length && { warnings }),
    ...(checksumError && { checksumError }),
  };
}
