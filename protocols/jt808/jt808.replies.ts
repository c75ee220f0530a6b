import { xor8 } from '../shared/crc.js';
import { ATTR_VERSION, MSG, REGISTER_NO_SUCH_TERMINAL, RESULT_FAILURE, RESULT_SUCCESS } from './jt808.constants.js';
import type { Jt808Header } from './jt808.fields.js';
import { escapeFrame } from './jt808.frame.js';

/**
 * A platform message to the terminal that sent `h` (Traccar `formatMessage`): same delimiter, version
 * and terminal id, serial `serial` (0000 for replies; the one-byte 01 of JT701 replies), XOR check,
 * then 4.4 escaping.
 */
export function formatMessage(
  h: Pick<Jt808Header, 'delimiter' | 'version' | 'id'>,
  type: number,
  body: Buffer,
  shortIndex = false,
  serial = 0,
): Buffer {
  const versioned = h.version !== undefined;
  const head = Buffer.alloc(versioned ? 6 : 5);
  head[0] = h.delimiter;
  head.writeUInt16BE(type, 1);
  head.writeUInt16BE(body.length | (versioned ? ATTR_VERSION : 0), 3);
  if (versioned) head[5] = h.version ?? 0;
  const index = shortIndex ? Buffer.from([0x01]) : Buffer.from([serial >> 8, serial & 0xff]);
  const frame = Buffer.concat([head, h.id, index, body, Buffer.from([0, h.delimiter])]);
  frame[frame.length - 2] = xor8(frame, 1, frame.length - 2);
  return escapeFrame(frame);
}

/** 8.2 platform general response 0x8001: answered serial, answered id, result */
export function generalResponse(h: Jt808Header, result = RESULT_SUCCESS): Buffer {
  const body = Buffer.alloc(5);
  body.writeUInt16BE(h.serial, 0);
  body.writeUInt16BE(h.type, 2);
  body[4] = result;
  return formatMessage(h, MSG.GENERAL_RESPONSE, body);
}

/** JT701 general response 0x4401: answered id, result (Traccar `sendGeneralResponse2`) */
export function generalResponse2(h: Jt808Header): Buffer {
  const body = Buffer.alloc(3);
  body.writeUInt16BE(h.type, 0);
  body[2] = RESULT_SUCCESS;
  return formatMessage(h, MSG.GENERAL_RESPONSE_2, body, true);
}

/** 8.6 registration response 0x8100: answered serial, result, then the auth code on success (the terminal id) */
export function registerResponse(h: Jt808Header, accepted: boolean): Buffer {
  const code = accepted ? Buffer.from(h.terminalId, 'latin1') : Buffer.alloc(0);
  const body = Buffer.concat([Buffer.alloc(3), code]);
  body.writeUInt16BE(h.serial, 0);
  body[2] = accepted ? RESULT_SUCCESS : REGISTER_NO_SUCH_TERMINAL;
  return formatMessage(h, MSG.TERMINAL_REGISTER_RESPONSE, body);
}

/** general response with result 1 (failure), for an unknown terminal's authentication */
export function generalFailure(h: Jt808Header): Buffer {
  return generalResponse(h, RESULT_FAILURE);
}

/** vendor time sync response 0x8109: UTC year u16, month, day, hour, minute, second, result */
export function timeSyncResponse(h: Jt808Header, now: Date): Buffer {
  const body = Buffer.alloc(8);
  body.writeUInt16BE(now.getUTCFullYear(), 0);
  body[2] = now.getUTCMonth() + 1;
  body[3] = now.getUTCDate();
  body[4] = now.getUTCHours();
  body[5] = now.getUTCMinutes();
  body[6] = now.getUTCSeconds();
  body[7] = RESULT_SUCCESS;
  return formatMessage(h, MSG.TIME_SYNC_RESPONSE, body);
}
