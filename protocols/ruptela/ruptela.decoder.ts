import { ByteReader } from '../shared/byte-reader.js';
import { crc16Kermit } from '../shared/crc.js';
import type { DecodeContext, DecodeResult } from '../types.js';
import { ProtocolError } from '../types.js';
import {
  CRC_BYTES,
  LENGTH_BYTES,
  MSG_DEVICE_CONFIGURATION,
  MSG_DEVICE_VERSION,
  MSG_DTCS,
  MSG_EXTENDED_RECORDS,
  MSG_FIRMWARE_UPDATE,
  MSG_HEARTBEAT,
  MSG_IDENTIFICATION,
  MSG_RECORDS,
  MSG_SET_IO,
  MSG_SMS_VIA_GPRS_RESPONSE,
  PROTOCOL,
  RECORDS_ANSWER,
} from './ruptela.constants.js';
import { ruptelaPacket } from './ruptela.encoder.js';
import {
  decodeDtcs,
  decodeNothing,
  decodeRecords,
  decodeSetIoAnswer,
  decodeTextAnswer,
  type PayloadHandler,
} from './ruptela.messages.js';

/** payloads by command id (RuptelaProtocolDecoder.decode); any other command carries nothing to store */
const PAYLOADS: Record<number, PayloadHandler> = {
  [MSG_RECORDS]: decodeRecords,
  [MSG_EXTENDED_RECORDS]: decodeRecords,
  [MSG_DTCS]: decodeDtcs,
  [MSG_DEVICE_CONFIGURATION]: decodeTextAnswer,
  [MSG_DEVICE_VERSION]: decodeTextAnswer,
  [MSG_FIRMWARE_UPDATE]: decodeTextAnswer,
  [MSG_SMS_VIA_GPRS_RESPONSE]: decodeTextAnswer,
  [MSG_SET_IO]: decodeSetIoAnswer,
};

/**
 * The answers the device waits for (RuptelaProtocolDecoder): records, fixed `0002 6401 13bc`
 * (command 0x64, "accepted", for extended records too); DTCs `0002 6d01 c4a4`; identification
 * and heartbeat `0002 <100 + command> 01 <CRC>`. Traccar never sends the "not accepted" (`…00`)
 * form: a device that gets no answer sends its records again.
 */
const ACCEPTED = Buffer.from([0x01]);
const ANSWERS: Record<number, number> = {
  [MSG_RECORDS]: RECORDS_ANSWER,
  [MSG_EXTENDED_RECORDS]: RECORDS_ANSWER,
  [MSG_DTCS]: MSG_DTCS,
  [MSG_IDENTIFICATION]: MSG_IDENTIFICATION,
  [MSG_HEARTBEAT]: MSG_HEARTBEAT,
};

/**
 * One packet as the splitter cuts it: `u16 length | u64 IMEI | u8 command | payload | CRC-16/KERMIT`.
 * The CRC covers the IMEI to the payload; a mismatch is a warning (`checksum: 'accept'`) or an
 * error (`strict`). The IMEI is the device, written as 15 digits.
 */
export function decode(frame: Buffer, ctx: DecodeContext): DecodeResult {
  if (frame.length < LENGTH_BYTES + 9 + CRC_BYTES)
    throw new ProtocolError(PROTOCOL, `packet of ${frame.length} bytes is shorter than a header`, frame);
  const warnings: string[] = [];
  const end = frame.length - CRC_BYTES;
  const crc = crc16Kermit(frame, LENGTH_BYTES, end);
  let checksumError: string | undefined;
  if (crc !== frame.readUInt16BE(end)) {
    checksumError = `CRC ${frame.readUInt16BE(end).toString(16).padStart(4, '0')} does not match ${crc.toString(16).padStart(4, '0')}`;
    if (ctx.checksum === 'strict') throw new ProtocolError(PROTOCOL, checksumError, frame);
    warnings.push(checksumError);
  }
  const r = new ByteReader(PROTOCOL, frame, LENGTH_BYTES, end);
  const identity = r.u64().toString().padStart(15, '0');
  const command = r.u8();
  const out = (Object.hasOwn(PAYLOADS, command) ? PAYLOADS[command] : decodeNothing)(r, command);
  const answer = ANSWERS[command];
  return {
    identity,
    messages: out.messages,
    replies: answer === undefined ? [] : [ruptelaPacket(answer, ACCEPTED)],
    ...(out.commandResult && { commandResults: [out.commandResult] }),
    ...(warnings.length && { warnings }),
    ...(checksumError && { checksumError }),
  };
}
